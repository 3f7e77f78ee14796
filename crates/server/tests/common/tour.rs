//! Helpers of the championship tests (issue 27): create, read, close a tournament over
//! the HTTP API, wait for its view to change, read the view's JSON.

use super::call;
use serde_json::{json, Value};
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

/// Creates a tournament of `settings` as the account of bearer `token`, with a
/// registration deadline an hour ahead; its id (panics unless `201`).
pub async fn create(addr: SocketAddr, token: &str, mut settings: Value) -> String {
    settings["registration_deadline_ms"] = json!(now_ms() + 3_600_000);
    let body = settings.to_string();
    let (status, answer) = call(addr, "POST", "/api/tournaments", Some(token), &body).await;
    assert_eq!(status, 201, "{answer}");
    answer["id"].as_str().expect("id").to_owned()
}

/// `GET /api/tournaments/{id}`: the view (panics unless `200`).
pub async fn view(addr: SocketAddr, id: &str) -> Value {
    let (status, v) = call(addr, "GET", &format!("/api/tournaments/{id}"), None, "").await;
    assert_eq!(status, 200, "{v}");
    v
}

/// `POST /api/tournaments/{id}/close` as `token`: the view after the draw (panics
/// unless `200`).
pub async fn close(addr: SocketAddr, token: &str, id: &str) -> Value {
    let path = format!("/api/tournaments/{id}/close");
    let (status, v) = call(addr, "POST", &path, Some(token), "").await;
    assert_eq!(status, 200, "{v}");
    v
}

/// Polls the view every 20 ms until `pred` holds of it (returned); panics naming `what`
/// with the last view once `within` has passed.
pub async fn until(
    addr: SocketAddr,
    id: &str,
    what: &str,
    within: Duration,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    let end = tokio::time::Instant::now() + within;
    loop {
        let v = view(addr, id).await;
        if pred(&v) {
            return v;
        }
        assert!(tokio::time::Instant::now() < end, "{what}: never; {v:#}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
