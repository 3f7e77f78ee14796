//! The per-seat limit on quick emotes ([`parchis_protocol::Emote`]): at most
//! [`EMOTE_BURST`] in any [`EMOTE_WINDOW_MS`], counted per seat id with time as a value.
//! Plain bookkeeping; the core refuses an emote over the limit as `rate_limited`.

use crate::Ms;
use std::collections::{HashMap, VecDeque};

/// Emotes one seat may send within [`EMOTE_WINDOW_MS`].
pub const EMOTE_BURST: usize = 3;

/// The sliding window of the emote limit, ms.
pub const EMOTE_WINDOW_MS: Ms = 10_000;

/// When each seat sent its recent emotes (at most [`EMOTE_BURST`] times per seat).
#[derive(Debug, Default)]
pub struct EmoteLimiter {
    sent: HashMap<u64, VecDeque<Ms>>,
}

impl EmoteLimiter {
    /// Whether seat `seat_id` may send an emote at `now`; if so, it is counted.
    pub fn allow(&mut self, seat_id: u64, now: Ms) -> bool {
        let times = self.sent.entry(seat_id).or_default();
        while times.front().is_some_and(|t| *t <= now - EMOTE_WINDOW_MS) {
            times.pop_front();
        }
        if times.len() >= EMOTE_BURST {
            return false;
        }
        times.push_back(now);
        true
    }

    /// Forgets a seat (freed or given up): its id is never reused, so this only bounds
    /// the memory.
    pub fn forget(&mut self, seat_id: u64) {
        self.sent.remove(&seat_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_per_ten_seconds_per_seat() {
        let mut l = EmoteLimiter::default();
        assert!(l.allow(1, 1_000));
        assert!(l.allow(1, 2_000));
        assert!(l.allow(1, 3_000));
        assert!(!l.allow(1, 3_500), "a fourth within the window is refused");
        assert!(l.allow(2, 3_500), "another seat has its own count");
        assert!(!l.allow(1, 10_999), "the first is still inside the window");
        assert!(l.allow(1, 11_000), "the first left the window at 11 000");
        assert!(!l.allow(1, 11_001));
        l.forget(1);
        assert!(l.allow(1, 11_002));
    }
}
