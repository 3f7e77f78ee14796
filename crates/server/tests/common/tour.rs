//! Helpers of the championship tests (issue 27) that read a tournament's JSON view.

use serde_json::Value;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest wait of [`Sse::until`].
pub const SSE_WAIT: Duration = Duration::from_secs(120);

/// The wall clock in ms since the epoch (for registration deadlines).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The view's matches (empty when it has none).
pub fn matches(v: &Value) -> Vec<Value> {
    v["matches"].as_array().cloned().unwrap_or_default()
}

/// Round 1's tables: each match's id and its entrants, in the view's order.
pub fn round_one(v: &Value) -> Vec<(u64, Vec<u64>)> {
    matches(v)
        .iter()
        .filter(|m| m["round"] == 1)
        .map(|m| {
            let e = m["entrants"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_u64).collect())
                .unwrap_or_default();
            (m["id"].as_u64().unwrap_or(u64::MAX), e)
        })
        .collect()
}

/// An open Server-Sent Events stream: the raw bytes read so far.
pub struct Sse {
    stream: TcpStream,
    /// Everything read so far (the HTTP head, then the events).
    pub raw: String,
}

impl Sse {
    /// Opens `path` on `addr` (`Accept: text/event-stream`).
    pub async fn open(addr: SocketAddr, path: &str) -> Sse {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        let req = format!("GET {path} HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n\r\n");
        stream.write_all(req.as_bytes()).await.expect("write");
        Sse {
            stream,
            raw: String::new(),
        }
    }

    /// The `tournament` events' data (JSON) received so far.
    pub fn views(&self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut event = "";
        for line in self.raw.lines() {
            if let Some(name) = line.strip_prefix("event: ") {
                event = name;
            } else if let Some(data) = line.strip_prefix("data: ") {
                if event == "tournament" {
                    out.push(serde_json::from_str(data).expect("the data is the view"));
                }
            }
        }
        out
    }

    /// Reads until an event's view satisfies `pred`; that view.
    pub async fn until(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let end = tokio::time::Instant::now() + SSE_WAIT;
        loop {
            if let Some(v) = self.views().into_iter().find(&pred) {
                return v;
            }
            let mut buf = [0u8; 16 * 1024];
            let left = end.saturating_duration_since(tokio::time::Instant::now());
            let n = tokio::time::timeout(left, self.stream.read(&mut buf))
                .await
                .unwrap_or_else(|_| panic!("{what}: never on the stream"))
                .expect("read");
            assert!(n > 0, "{what}: the stream ended");
            self.raw.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }
}
