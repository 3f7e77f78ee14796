//! How loaded the writer is ([`WritePressure`]): the writer task's timings, shared with its
//! handle and read without waiting.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How loaded a store's writer is right now ([`Store::write_pressure`](crate::Store::write_pressure)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WritePressure {
    /// Write requests waiting for the writer (not yet in a group).
    pub queued: usize,
    /// How long the group being committed has taken so far, or, when the writer is
    /// idle, how long the last group took if it ended less than `COMMIT_REMEMBERED`
    /// ago (zero after that: an idle writer is under no pressure).
    pub commit: Duration,
}

/// The writer task's timings, shared with its handle (microseconds since `base`).
pub(super) struct Gauge {
    pub(super) base: Instant,
    /// When the group in flight started (µs since `base`, + 1); 0: none in flight.
    pub(super) started: AtomicU64,
    /// How long the last finished group took, µs.
    pub(super) last: AtomicU64,
    /// When the last finished group ended (µs since `base`).
    pub(super) ended: AtomicU64,
}

/// How long an idle writer's last commit time still counts as its pressure: a slow
/// commit followed by no writes at all must not leave the store looking loaded for good
/// (a node would shed load forever, `docs/CLUSTER.md`, "Load shedding").
pub const COMMIT_REMEMBERED: Duration = Duration::from_secs(1);

impl Gauge {
    fn micros(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.base).as_micros()).unwrap_or(u64::MAX)
    }

    pub(super) fn begin(&self, at: Instant) {
        self.started
            .store(self.micros(at).saturating_add(1), Ordering::Relaxed);
    }

    pub(super) fn end(&self, at: Instant, took: Duration) {
        let took = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.last.store(took, Ordering::Relaxed);
        self.ended.store(self.micros(at), Ordering::Relaxed);
        self.started.store(0, Ordering::Relaxed);
    }

    /// The in-flight group's age, else the last group's duration while it is recent
    /// ([`COMMIT_REMEMBERED`]), else zero.
    pub(super) fn commit(&self, now: Instant) -> Duration {
        match self.started.load(Ordering::Relaxed) {
            0 => {
                let since = self
                    .micros(now)
                    .saturating_sub(self.ended.load(Ordering::Relaxed));
                if Duration::from_micros(since) < COMMIT_REMEMBERED {
                    Duration::from_micros(self.last.load(Ordering::Relaxed))
                } else {
                    Duration::ZERO
                }
            }
            started => {
                Duration::from_micros(self.micros(now).saturating_sub(started.saturating_sub(1)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gauge(base: Instant) -> Gauge {
        Gauge {
            base,
            started: AtomicU64::new(0),
            last: AtomicU64::new(0),
            ended: AtomicU64::new(0),
        }
    }

    #[test]
    fn an_idle_writers_slow_commit_stops_counting_after_a_while() {
        let base = Instant::now();
        let g = gauge(base);
        let t = |ms: u64| base + Duration::from_millis(ms);
        g.begin(t(100));
        assert_eq!(g.commit(t(250)), Duration::from_millis(150), "in flight");
        g.end(t(400), Duration::from_millis(300));
        assert_eq!(g.commit(t(500)), Duration::from_millis(300), "just ended");
        assert_eq!(
            g.commit(t(400) + COMMIT_REMEMBERED - Duration::from_millis(1)),
            Duration::from_millis(300)
        );
        assert_eq!(
            g.commit(t(400) + COMMIT_REMEMBERED),
            Duration::ZERO,
            "an idle writer is under no pressure"
        );
    }
}
