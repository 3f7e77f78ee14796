//! Counters shared by every client task of one load process.

use crate::report::{Hop, Latency};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Counters shared by every client.
#[derive(Default)]
pub struct Stats {
    /// Commands (`roll`/`play`) sent in the measured window and answered with `ok`.
    pub actions: AtomicU64,
    /// Commands (`roll`/`play`) sent in the measured window.
    pub sent: AtomicU64,
    /// Games that reached `game_won`.
    pub games_finished: AtomicU64,
    /// Rooms fully set up (created, four joined).
    pub rooms_ready: AtomicU64,
    /// Rooms whose setup failed.
    pub setups_failed: AtomicU64,
    /// Errors by kind (`error` codes from the server, and local failures).
    pub errors: Mutex<BTreeMap<String, u64>>,
    /// Games whose `start` was answered `ok` (first game of each room).
    pub games_started: AtomicU64,
    /// First games whose `start` was refused (their rooms do not play).
    pub starts_failed: AtomicU64,
    /// Action→event latency, microseconds: one set of histograms for every client,
    /// recorded into directly (a histogram per client would cost ~40 KiB each and,
    /// allocated for 19,600 clients at once, stall the generator for seconds just as the
    /// games start).
    pub latency: Mutex<Latency>,
}

impl Stats {
    /// Counts one error of `kind`.
    pub fn error(&self, kind: &str) {
        if let Ok(mut e) = self.errors.lock() {
            *e.entry(kind.to_string()).or_insert(0) += 1;
        }
    }

    /// Records one action→event latency, in microseconds.
    pub fn record(&self, us: u64, hop: Hop) {
        match self.latency.lock() {
            Ok(mut l) => l.record(us, hop),
            Err(_) => self.error("histogram_record"),
        }
    }

    /// A copy of the errors so far.
    pub fn errors(&self) -> BTreeMap<String, u64> {
        self.errors.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// Reads a counter.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}
