//! A set-up room's clients between their last `join` and the play phase: their sockets
//! are read all along, as a real client's are. tungstenite answers the server's pings
//! only while the stream is read, and a server closes a socket it heard nothing from for
//! `ping_interval + pong_timeout` (30 s by default) as dead (4005). Before this the clients
//! of the rooms set up first sat unread until every room was ready (48 s at 7,500 rooms)
//! and were closed before their games started (docs/BENCHMARKS.md).

use crate::client::{next_json, seq_of, type_of, Client};
use futures_util::future::select_all;
use serde_json::Value;
use tokio::sync::watch;

/// What one frame read while idle means for the room.
#[derive(Debug, PartialEq, Eq)]
pub enum Idle {
    /// Carry on; the client has now seen this `seq`.
    Seen(u64),
    /// The socket is gone: the room cannot play. The error kind for the report.
    Lost(&'static str),
}

/// Judges a frame read while idle (`None`: the socket closed or failed).
pub fn judge(frame: Option<&Value>) -> Idle {
    match frame {
        None => Idle::Lost("idle_connection_lost"),
        Some(v) if type_of(v) == "closing" => Idle::Lost("idle_closing"),
        Some(v) => Idle::Seen(seq_of(v)),
    }
}

/// Reads every client until `go` turns `true` (`Ok`), or until a socket is lost (`Err`
/// with the error kind) or `go`'s sender is gone (`Err("stopped")`).
pub async fn hold(
    clients: &mut [Client],
    go: &mut watch::Receiver<bool>,
) -> Result<(), &'static str> {
    if clients.is_empty() {
        return go.wait_for(|g| *g).await.map(|_| ()).map_err(|_| "stopped");
    }
    loop {
        if *go.borrow_and_update() {
            return Ok(());
        }
        let read = async {
            let reads = clients.iter_mut().map(|c| Box::pin(next_json(&mut c.ws)));
            let (frame, i, _) = select_all(reads).await;
            (i, frame)
        };
        let got = tokio::select! {
            changed = go.changed() => match changed {
                Ok(()) => None,
                Err(_) => return Err("stopped"),
            },
            (i, frame) = read => Some((i, frame)),
        };
        let Some((i, frame)) = got else {
            continue;
        };
        match judge(frame.as_ref()) {
            Idle::Seen(seq) => {
                if let Some(c) = clients.get_mut(i) {
                    c.seq = c.seq.max(seq);
                }
            }
            Idle::Lost(kind) => return Err(kind),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse_url;
    use crate::client::Net;
    use futures_util::SinkExt;
    use parchis_server::config::{Limits, Timeouts};
    use parchis_server::{AppState, ServerConfig};
    use parchis_store::MemoryStore;
    use serde_json::json;
    use std::sync::Arc;
    use std::time::Duration;
    use tokio_tungstenite::tungstenite::Message;

    /// A server that closes a socket it heard nothing from for 2 s (ping every 1 s, 1 s
    /// for the pong); returns its URL and the token that stops it.
    async fn impatient_server() -> (String, tokio_util::sync::CancellationToken) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let config = ServerConfig {
            limits: Limits::unlimited_per_address(),
            timeouts: Timeouts {
                ping_interval: Duration::from_secs(1),
                pong_timeout: Duration::from_secs(1),
                ..Timeouts::default()
            },
            ..ServerConfig::default()
        };
        let state = AppState::new(config, Arc::new(MemoryStore::new()));
        let shutdown = tokio_util::sync::CancellationToken::new();
        tokio::spawn(parchis_server::run(listener, state, shutdown.clone()));
        (format!("http://{addr}"), shutdown)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn held_sockets_outlive_the_servers_silence_limit_and_unread_ones_do_not() {
        let (url, shutdown) = impatient_server().await;
        let node = parse_url(&url).expect("url");
        let net = Net::new(Vec::new());
        let code = net.create_room(&node, 600).await.expect("room");
        let held = net.join(&node, &code, "held").await.expect("join");
        let mut unread = net.join(&node, &code, "unread").await.expect("join");
        let mut held = vec![held];
        let (go_tx, mut go) = watch::channel(false);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(4)).await;
            let _ = go_tx.send(true);
        });
        // Twice the server's silence limit: the held socket answered its pings.
        assert_eq!(hold(&mut held, &mut go).await, Ok(()));
        // The held client (the creator) saw the other's join and still talks: its
        // `start` is answered.
        assert!(held[0].seq >= 2, "seq {}", held[0].seq);
        let start = json!({"type": "start", "req": 2, "room": code, "seq": held[0].seq});
        held[0]
            .ws
            .send(Message::text(start.to_string()))
            .await
            .expect("send");
        let answer = loop {
            let v = tokio::time::timeout(Duration::from_secs(5), next_json(&mut held[0].ws))
                .await
                .expect("an answer in time")
                .expect("the held socket is open");
            if matches!(type_of(&v), "ok" | "error") {
                break v;
            }
        };
        assert_eq!(
            (answer["type"].as_str(), answer["req"].as_u64()),
            (Some("ok"), Some(2)),
            "{answer}"
        );
        // The socket nobody read for 4 s was closed as dead (4005): its `closing` is read,
        // or the stream ends first (the pongs the reads now write meet a closed socket).
        let closed = async {
            while let Some(v) = next_json(&mut unread.ws).await {
                if type_of(&v) == "closing" {
                    return Some(v);
                }
            }
            None
        };
        let closed = tokio::time::timeout(Duration::from_secs(5), closed)
            .await
            .expect("the unread socket is closed, not open");
        if let Some(v) = closed {
            assert_eq!(v["code"], 4005, "{v}");
        }
        shutdown.cancel();
    }

    #[test]
    fn frames_keep_the_seq_and_a_closed_socket_loses_the_room() {
        let event = json!({"type": "event", "seq": 7});
        assert_eq!(judge(Some(&event)), Idle::Seen(7));
        assert_eq!(judge(Some(&json!({"type": "presence"}))), Idle::Seen(0));
        let closing = json!({"type": "closing", "code": 4005, "reason": "no pong"});
        assert_eq!(judge(Some(&closing)), Idle::Lost("idle_closing"));
        assert_eq!(judge(None), Idle::Lost("idle_connection_lost"));
    }
}
