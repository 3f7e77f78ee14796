//! The socket's writer: drains the connection's bounded outbound queue in batches, pings,
//! drops a connection whose frames are not written within the write timeout (4001), and
//! sends `closing` and the close frame when the connection is kicked.

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use futures_util::SinkExt;
use parchis_protocol::{close_code, ServerMessage};
use parchis_room::{encode, Kick, Unwritten};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::debug;

/// Frames already queued for a connection are written to its socket together, up to about
/// this many bytes per write (tungstenite writes through once its buffer passes it).
pub(super) const WRITE_BATCH_BYTES: usize = 16 * 1024;
/// At most this many queued frames are coalesced before a flush.
const WRITE_BATCH_FRAMES: usize = 64;

/// Writes the queued frames of one connection to its socket until it is kicked.
pub(super) async fn writer(
    mut sink: futures_util::stream::SplitSink<WebSocket, Message>,
    mut rx: mpsc::Receiver<Arc<str>>,
    kick: Kick,
    timeouts: crate::config::Timeouts,
    unwritten: Unwritten,
) {
    let mut ping = tokio::time::interval_at(
        Instant::now() + timeouts.ping_interval,
        timeouts.ping_interval,
    );
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let msg = tokio::select! {
            biased;
            _ = kick.kicked() => break,
            m = rx.recv() => m,
            _ = ping.tick() => None,
        };
        let batch = async {
            match msg {
                Some(first) => {
                    parchis_telemetry::observe::outbound_depth(rx.len() + 1);
                    send_batch(&mut sink, first, &mut rx, &unwritten).await
                }
                None if rx.is_closed() && rx.is_empty() => Err(None),
                None => sink
                    .send(Message::Ping(Default::default()))
                    .await
                    .map_err(Some),
            }
        };
        let sent = tokio::select! {
            biased;
            _ = kick.kicked() => break,
            r = tokio::time::timeout(timeouts.write, batch) => r,
        };
        match sent {
            Ok(Ok(())) => {}
            Ok(Err(None)) => break,
            Ok(Err(Some(_))) => return,
            Err(_) => {
                debug!("a frame was not written within the write timeout: dropping");
                kick.kick(
                    close_code::SLOW_CONSUMER,
                    "frames not read within the write timeout",
                );
                return;
            }
        }
    }
    let Some((code, reason)) = kick.reason() else {
        return;
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        if code != close_code::SLOW_CONSUMER {
            while let Ok(m) = rx.try_recv() {
                sink.send(Message::Text(m.as_ref().into())).await?;
            }
        }
        if code != close_code::NORMAL {
            let closing = encode(&ServerMessage::Closing {
                code,
                reason: reason.clone(),
            });
            sink.send(Message::Text(closing.as_ref().into())).await?;
        }
        sink.send(Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        })))
        .await
    })
    .await;
}

/// Writes `first` and every frame already queued behind it (up to
/// [`WRITE_BATCH_FRAMES`]), then flushes once: the events, `ok` and `your_turn` that one
/// action produces reach the socket in one write instead of one write each.
async fn send_batch(
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
    first: Arc<str>,
    rx: &mut mpsc::Receiver<Arc<str>>,
    unwritten: &Unwritten,
) -> Result<(), Option<axum::Error>> {
    send_frames(sink, first, rx, unwritten).await.map_err(Some)
}

async fn send_frames(
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
    first: Arc<str>,
    rx: &mut mpsc::Receiver<Arc<str>>,
    unwritten: &Unwritten,
) -> Result<(), axum::Error> {
    let mut bytes = first.len();
    sink.feed(Message::Text(first.as_ref().into())).await?;
    for _ in 1..WRITE_BATCH_FRAMES {
        match rx.try_recv() {
            Ok(m) => {
                bytes += m.len();
                sink.feed(Message::Text(m.as_ref().into())).await?
            }
            Err(_) => break,
        }
    }
    let flushed = sink.flush().await;
    // Written to the socket (or lost with it): no longer waiting.
    unwritten.written(bytes);
    flushed
}
