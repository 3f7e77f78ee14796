//! Helpers of the championship tests (issue 27): create, read, close a tournament over
//! the HTTP API, wait for its view to change, read the view's JSON.

use super::call;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
