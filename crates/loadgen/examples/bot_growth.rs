//! Plays bot games the way one hostile address can (issue 14: "bot games amplify load"),
//! to measure how much they grow the database (docs/BENCHMARKS.md, "Database growth from
//! bot games").
//!
//! Each game: `POST /api/rooms` with three greedy bots thinking 0 ms and `on_abandon: bot`,
//! one WebSocket `join`s and `start`s, then `leave`s: a bot takes the seat and the
//! connection watches on, so the bots play at full speed. It reads until the game's last
//! event (`dice_revealed`). `--concurrency` games run at once (the per-address limit on
//! rooms with bots is 3). Prints one JSON line: games, events, seconds. Loopback only.
//!
//! ```sh
//! cargo run --release -p parchis-loadgen --example bot_growth -- --addr 127.0.0.1:18080 --games 100
//! ```

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

#[derive(Debug, Parser)]
struct Args {
    /// The server (a loopback address).
    #[arg(long, default_value = "127.0.0.1:18080")]
    addr: SocketAddr,
    /// Games to play.
    #[arg(long, default_value_t = 100)]
    games: usize,
    /// Games at once.
    #[arg(long, default_value_t = 3)]
    concurrency: usize,
}

type Error = Box<dyn std::error::Error + Send + Sync>;

/// `POST /api/rooms` with `body`; the new room's code.
async fn create_room(addr: SocketAddr, body: &Value) -> Result<String, Error> {
    let body = body.to_string();
    let mut tcp = tokio::net::TcpStream::connect(addr).await?;
    let req = format!(
        "POST /api/rooms HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(req.as_bytes()).await?;
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await?;
    let (head, body) = answer.split_once("\r\n\r\n").ok_or("no HTTP body")?;
    if !head.starts_with("HTTP/1.1 201") {
        return Err(format!("room not created: {head} {body}").into());
    }
    let v: Value = serde_json::from_str(body)?;
    Ok(v["code"].as_str().ok_or("no code")?.to_owned())
}

/// Plays one game; returns the number of events it had.
async fn game(addr: SocketAddr) -> Result<u64, Error> {
    let settings = json!({"seats": 4, "bots": "greedy", "bot_think_ms": 0,
        "on_abandon": "bot", "turn_clock_secs": 600, "public": false});
    let code = create_room(addr, &settings).await?;
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await?;
    let mut seq = 0u64;
    for (req, msg) in [
        json!({"type": "join", "room": code, "name": "Ana", "colour": "yellow"}),
        json!({"type": "start"}),
        json!({"type": "leave"}),
        // Watched, the bots play at their own think time (0 ms), not the unwatched minimum.
        json!({"type": "watch"}),
    ]
    .into_iter()
    .enumerate()
    {
        let mut msg = msg;
        msg["req"] = json!(req + 1);
        msg["room"] = json!(code);
        msg["seq"] = json!(seq);
        ws.send(Message::text(msg.to_string())).await?;
        // Until this command's answer.
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(30), ws.next())
                .await?
                .ok_or("closed")??;
            let Message::Text(t) = frame else { continue };
            let v: Value = serde_json::from_str(t.as_str())?;
            if v["type"] != "error" {
                seq = seq.max(v["seq"].as_u64().unwrap_or(0));
            }
            if v["req"].as_u64() == Some(req as u64 + 1) {
                if v["type"] == "error" {
                    return Err(format!("{msg} refused: {v}").into());
                }
                break;
            }
        }
    }
    loop {
        // The server may close the watching connection once the room is done.
        let Some(Ok(frame)) = tokio::time::timeout(Duration::from_secs(120), ws.next()).await?
        else {
            return Ok(seq);
        };
        let Message::Text(t) = frame else { continue };
        let v: Value = serde_json::from_str(t.as_str())?;
        if v["type"] == "event" {
            seq = seq.max(v["seq"].as_u64().unwrap_or(0));
            if v["event"]["type"] == "dice_revealed" {
                let _ = ws.close(None).await;
                return Ok(seq);
            }
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args = Args::parse();
    if !args.addr.ip().is_loopback() {
        return Err("loopback addresses only".into());
    }
    let started = Instant::now();
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..args.concurrency.max(1) {
        let next = next.clone();
        let (addr, games) = (args.addr, args.games);
        workers.push(tokio::spawn(async move {
            let mut events = 0;
            while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < games {
                events += game(addr).await?;
            }
            Ok::<u64, Error>(events)
        }));
    }
    let mut events = 0;
    for w in workers {
        events += w.await??;
    }
    println!(
        "{}",
        json!({"games": args.games, "events": events, "secs": started.elapsed().as_secs_f64()})
    );
    Ok(())
}
