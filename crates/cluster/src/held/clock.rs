//! The node's wall clock against the database's (issue 25, "Clock"): lease expiry is the
//! database's clock, but turn deadlines, grace periods and event times are the owner's
//! wall clock. At every heartbeat the node reads the database's clock; the difference is
//! the `parchis_cluster_clock_skew_seconds` gauge, and a node off by more than
//! [`SKEW_WARN_MS`] logs a warning when it goes beyond (and a line when it comes back).
//! A takeover re-arms a turn clock from the new owner's clock whenever the stored
//! deadline lies more than a second beyond a fresh one (`parchis_room_core::restore`).
//! Pure: the I/O is the heartbeat's (`node.rs`).

/// A node whose clock differs from the database's by more than this (ms) warns: beyond
/// it, a deadline it writes is not kept by the next owner (the same bound,
/// `parchis_room_core::restore::DEADLINE_SKEW_MS`).
pub const SKEW_WARN_MS: i64 = 1_000;

/// The database's clock minus this node's (ms, positive: the database is ahead), from a
/// database reading `db_ms` taken between this node's `sent_ms` and `answered_ms` (the
/// reading is taken as made half-way through the round trip).
pub fn skew_ms(db_ms: i64, sent_ms: i64, answered_ms: i64) -> i64 {
    db_ms - (sent_ms + (answered_ms - sent_ms) / 2)
}

/// What a reading changes: `Some(true)` the skew went beyond [`SKEW_WARN_MS`] (warn),
/// `Some(false)` it came back within, `None` nothing new (`was`: beyond at the last
/// reading).
pub fn judge(was: bool, skew_ms: i64) -> Option<bool> {
    let beyond = skew_ms.abs() > SKEW_WARN_MS;
    (beyond != was).then_some(beyond)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skew_is_taken_at_the_middle_of_the_round_trip() {
        assert_eq!(skew_ms(1_000_050, 1_000_000, 1_000_100), 0);
        assert_eq!(skew_ms(1_045_050, 1_000_000, 1_000_100), 45_000);
        assert_eq!(skew_ms(955_050, 1_000_000, 1_000_100), -45_000);
    }

    #[test]
    fn a_warning_once_when_it_goes_beyond_and_a_line_when_it_comes_back() {
        assert_eq!(judge(false, 200), None);
        assert_eq!(
            judge(false, SKEW_WARN_MS),
            None,
            "the bound itself is within"
        );
        assert_eq!(judge(false, -45_000), Some(true));
        assert_eq!(judge(true, -44_000), None, "still beyond: no new line");
        assert_eq!(judge(true, 10), Some(false));
    }
}
