//! Helpers of the championship tests (issue 27) that read a tournament's JSON view.

use serde_json::Value;
use std::time::{SystemTime, UNIX_EPOCH};

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
