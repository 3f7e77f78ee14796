//! The creator's `start`, as a real client sends it: when (the rooms' starts trickle in at
//! `--start-rate` instead of all within one think time) and what a refusal means (sent
//! again after a retryable code, already started, or given up). Pure decisions; `play`
//! does the I/O.

use std::time::Duration;

/// First `req` of a `roll`/`play` command on a connection (1 was `join`, the `start`
/// attempts are below it: [`START_REQ`]).
pub const FIRST_ACTION_REQ: u64 = 100;
/// `req` of a room's first `start` (1 was the creator's `join`); the attempts after it
/// take the next numbers, since the server refuses a `req` seen before on a connection.
pub const START_REQ: u64 = 2;
/// Most `start`s one creator sends for one game (the first and the retries).
pub const START_ATTEMPTS: u64 = 30;
/// Wait before sending again a `start` refused with a retryable code. One a second keeps
/// a creator at ≤ 10 refusals in 10 s, half the server's error limit per connection
/// (20 in 10 s, then 1008).
pub const START_RETRY: Duration = Duration::from_secs(1);
// The attempts' numbers stay below the actions' (a start's answer is told from an
// action's by its `req`).
const _: () = assert!(START_REQ + START_ATTEMPTS <= FIRST_ACTION_REQ);

/// When room `room` (its number in the whole run, over every process) sends its first
/// `start`, after the play phase begins.
///
/// `rate` > 0: the rooms start at `rate` games per second in room order, each at a
/// uniformly random point (`unit` in [0, 1)) of its own slot `[room / rate,
/// (room + 1) / rate)` seconds: players trickle in. `rate` = 0: every room within one
/// `think` time (a uniform `unit × think`), or all at once when `jitter` is 0 (the
/// behaviour before `--start-rate`).
pub fn delay(room: usize, rate: f64, think: Duration, jitter: f64, unit: f64) -> Duration {
    if rate > 0.0 {
        Duration::from_secs_f64((room as f64 + unit) / rate)
    } else if jitter > 0.0 {
        think.mul_f64(unit)
    } else {
        Duration::ZERO
    }
}

/// What the creator does after its `start` number `attempt` (1 for the first) was
/// refused with `code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterRefusal {
    /// Send it again (with the latest `seq`) after this long.
    Retry(Duration),
    /// The game is running: an earlier attempt was applied although its answer said
    /// otherwise (a relayed command the owner took but answered after the edge's 1.5 s,
    /// answered `room_unavailable` by the edge).
    Started,
    /// The room will not play.
    GiveUp,
}

/// The decision after a refused `start` (see [`AfterRefusal`]). Retryable: nothing was
/// applied and the same command may succeed a moment later — `room_unavailable` (the
/// owner is moving, did not answer in time, or could not reach its database),
/// `rate_limited`, and `stale_seq` (an event, e.g. a seat's disconnect notice, came in
/// between; the retry carries the newer `seq`).
pub fn after_refusal(code: &str, attempt: u64) -> AfterRefusal {
    match code {
        "game_started" if attempt > 1 => AfterRefusal::Started,
        "room_unavailable" | "rate_limited" | "stale_seq" if attempt < START_ATTEMPTS => {
            AfterRefusal::Retry(START_RETRY)
        }
        _ => AfterRefusal::GiveUp,
    }
}

/// Whether `req` is one of the `start` attempts' numbers.
pub fn is_start_req(req: u64) -> bool {
    (START_REQ..START_REQ + START_ATTEMPTS).contains(&req)
}

#[cfg(test)]
mod tests {
    use super::*;

    const THINK: Duration = Duration::from_millis(1000);

    #[test]
    fn with_a_rate_the_starts_trickle_in_room_order() {
        // 250 games a second: room 0 in [0, 4 ms), room 7,499 in [29.996 s, 30 s).
        assert_eq!(delay(0, 250.0, THINK, 0.5, 0.0), Duration::ZERO);
        assert_eq!(delay(0, 250.0, THINK, 0.5, 0.5), Duration::from_millis(2));
        assert_eq!(delay(1, 250.0, THINK, 0.5, 0.0), Duration::from_millis(4));
        let last = delay(7_499, 250.0, THINK, 0.5, 0.999);
        assert!(last > Duration::from_millis(29_996) && last < Duration::from_secs(30));
        // The jitter does not matter with a rate; the slot does not overlap the next one.
        assert_eq!(
            delay(10, 100.0, THINK, 0.0, 0.0),
            Duration::from_millis(100)
        );
        assert!(delay(10, 100.0, THINK, 0.0, 0.99) < delay(11, 100.0, THINK, 0.0, 0.0));
    }

    #[test]
    fn without_a_rate_every_room_starts_within_one_think_time() {
        assert_eq!(
            delay(7_000, 0.0, THINK, 0.5, 0.25),
            Duration::from_millis(250)
        );
        assert_eq!(delay(7_000, 0.0, THINK, 0.0, 0.25), Duration::ZERO);
    }

    #[test]
    fn retryable_refusals_are_sent_again_until_the_attempts_run_out() {
        for code in ["room_unavailable", "rate_limited", "stale_seq"] {
            assert_eq!(
                after_refusal(code, 1),
                AfterRefusal::Retry(START_RETRY),
                "{code}"
            );
            assert_eq!(
                after_refusal(code, START_ATTEMPTS - 1),
                AfterRefusal::Retry(START_RETRY)
            );
            assert_eq!(after_refusal(code, START_ATTEMPTS), AfterRefusal::GiveUp);
        }
    }

    #[test]
    fn a_retry_told_the_game_started_counts_as_started() {
        assert_eq!(after_refusal("game_started", 2), AfterRefusal::Started);
        // On the first attempt nothing of ours can have started it.
        assert_eq!(after_refusal("game_started", 1), AfterRefusal::GiveUp);
    }

    #[test]
    fn other_refusals_give_up_at_once() {
        for code in [
            "not_creator",
            "not_enough_players",
            "internal",
            "unknown_room",
        ] {
            assert_eq!(after_refusal(code, 1), AfterRefusal::GiveUp, "{code}");
        }
    }

    #[test]
    fn start_reqs_stay_below_the_actions() {
        assert!(is_start_req(START_REQ));
        assert!(is_start_req(START_REQ + START_ATTEMPTS - 1));
        assert!(!is_start_req(1), "the join");
        assert!(!is_start_req(START_REQ + START_ATTEMPTS));
    }
}
