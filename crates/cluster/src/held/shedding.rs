//! Load shedding (`docs/CLUSTER.md`, "Load shedding"): a node whose lease renewals get
//! slow or late, or whose store writer falls behind, stops taking NEW rooms (placement
//! sends them to another node, `POST /api/rooms` answers `server_full` with `Retry-After`
//! when no node takes them) and answers not-ready on `/readyz`, long before a whole TTL
//! passes without a renewal and every room would stop. The rooms it runs carry on.
//!
//! * [`decide`]: the pure decision, from a [`Sample`] of the load and the time as a
//!   value, with hysteresis (shedding ends only after the load stayed under half of
//!   every limit for [`Limits::calm_for`]; for the renewal's age, half of what the limit
//!   allows beyond one renewal period, which the age reaches before every renewal).
//! * [`Load`]: this node's renewal clock (written by the renewer) and shedding state.
//! * `monitor.rs`: the task that samples the load every quarter renewal period and
//!   applies [`decide`] (the I/O edge: the store's write pressure, logs, metrics).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;
use tokio::time::Instant;

/// Write requests waiting for the store's writer beyond which the node sheds (half of
/// the store's request channel, 4,096).
pub const QUEUED_LIMIT: usize = 2048;

/// The load seen at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Since the last renewal that succeeded was sent (zero before the first one).
    pub renewal_age: Duration,
    /// The last renewal's round trip, or the one in flight's time so far if longer.
    pub renewal_latency: Duration,
    /// The store writer's group commit in flight so far, else its last one.
    pub commit: Duration,
    /// Write requests waiting for the store's writer.
    pub queued: usize,
}

/// The bounds beyond which a node sheds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest [`Sample::renewal_age`]: one renewal period plus a quarter TTL (1.75 s at
    /// the defaults: a renewal failed or is 750 ms late; every room stops at 3 s).
    pub renewal_age: Duration,
    /// Longest [`Sample::renewal_latency`]: a quarter TTL (750 ms).
    pub renewal_latency: Duration,
    /// Longest [`Sample::commit`]: a sixth of the TTL (500 ms).
    pub commit: Duration,
    /// Most [`Sample::queued`]: [`QUEUED_LIMIT`].
    pub queued: usize,
    /// How long every value must stay under half its limit before shedding ends: two
    /// TTLs (6 s).
    pub calm_for: Duration,
    /// The renewal period: [`Sample::renewal_age`] reaches it before every renewal of a
    /// node whose renewals are on time, so only the lateness beyond it is halved.
    pub renew: Duration,
}

impl Limits {
    /// The limits for a lease `ttl` renewed every `renew`.
    pub fn for_leases(ttl: Duration, renew: Duration) -> Limits {
        Limits {
            renewal_age: renew + ttl / 4,
            renewal_latency: ttl / 4,
            commit: ttl / 6,
            queued: QUEUED_LIMIT,
            calm_for: ttl * 2,
            renew,
        }
    }

    /// The calm bounds: half of each limit, but for the renewal's age one period plus
    /// half its allowance beyond it (1.375 s at the defaults). Half of the whole age
    /// limit (875 ms) is less than a period: a node renewing on time would pass it before
    /// each renewal and, sampled then, never stop shedding.
    fn halved(&self) -> Limits {
        let late = self.renewal_age.saturating_sub(self.renew);
        Limits {
            renewal_age: self.renew.min(self.renewal_age) + late / 2,
            renewal_latency: self.renewal_latency / 2,
            commit: self.commit / 2,
            queued: self.queued / 2,
            calm_for: self.calm_for,
            renew: self.renew,
        }
    }
}

/// Why a node sheds: the first limit a sample went beyond.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// No renewal succeeded for [`Limits::renewal_age`].
    RenewalLate,
    /// A renewal took longer than [`Limits::renewal_latency`].
    RenewalSlow,
    /// A group commit took longer than [`Limits::commit`].
    CommitSlow,
    /// More than [`Limits::queued`] writes wait.
    WriteQueue,
}

impl Why {
    /// The metric label and the log text.
    pub fn label(self) -> &'static str {
        match self {
            Why::RenewalLate => "renewal_late",
            Why::RenewalSlow => "renewal_slow",
            Why::CommitSlow => "commit_slow",
            Why::WriteQueue => "write_queue",
        }
    }
}

/// Whether a node sheds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shed {
    /// Takes new rooms.
    Accepting,
    /// Takes no new rooms since `since`, first because of `why`; every value has been
    /// under half its limit since `calm_since` (`None`: not yet).
    Shedding {
        /// The limit first exceeded.
        why: Why,
        /// When shedding started.
        since: Instant,
        /// Since when the load has been calm.
        calm_since: Option<Instant>,
    },
}

impl Shed {
    /// Whether new rooms are refused.
    pub fn is_shedding(&self) -> bool {
        matches!(self, Shed::Shedding { .. })
    }
}

/// The first limit of `limits` that `sample` goes beyond.
pub fn beyond(sample: &Sample, limits: &Limits) -> Option<Why> {
    if sample.renewal_age > limits.renewal_age {
        Some(Why::RenewalLate)
    } else if sample.renewal_latency > limits.renewal_latency {
        Some(Why::RenewalSlow)
    } else if sample.commit > limits.commit {
        Some(Why::CommitSlow)
    } else if sample.queued > limits.queued {
        Some(Why::WriteQueue)
    } else {
        None
    }
}

/// The next shedding state from `prev` and the load `sample` at `now`: shedding starts
/// as soon as a value goes beyond its limit; it ends once every value has stayed under
/// half its limit for [`Limits::calm_for`] (a value between half and the whole limit
/// neither starts nor ends it, and restarts the calm).
pub fn decide(prev: Shed, sample: &Sample, limits: &Limits, now: Instant) -> Shed {
    match (prev, beyond(sample, limits)) {
        (Shed::Accepting, None) => Shed::Accepting,
        (Shed::Accepting, Some(why)) => Shed::Shedding {
            why,
            since: now,
            calm_since: None,
        },
        (Shed::Shedding { why, since, .. }, Some(_)) => Shed::Shedding {
            why,
            since,
            calm_since: None,
        },
        (
            Shed::Shedding {
                why,
                since,
                calm_since,
            },
            None,
        ) => {
            if beyond(sample, &limits.halved()).is_some() {
                return Shed::Shedding {
                    why,
                    since,
                    calm_since: None,
                };
            }
            let calm = calm_since.unwrap_or(now);
            if now.saturating_duration_since(calm) >= limits.calm_for {
                Shed::Accepting
            } else {
                Shed::Shedding {
                    why,
                    since,
                    calm_since: Some(calm),
                }
            }
        }
    }
}

/// The renewer's clock, as the monitor reads it.
#[derive(Clone, Copy, Debug, Default)]
struct RenewalClock {
    /// When the last renewal that succeeded was sent.
    last_success: Option<Instant>,
    /// When the renewal in flight was sent.
    in_flight: Option<Instant>,
    /// The last finished renewal's round trip.
    last_latency: Duration,
}

/// This node's load bookkeeping (in [`super::Ownership`]): the renewal clock and whether
/// it sheds.
#[derive(Debug, Default)]
pub struct Load {
    clock: Mutex<RenewalClock>,
    pub(crate) state: Mutex<Option<Shed>>,
    shedding: AtomicBool,
    /// Tests only (`POST /admin/debug/shed`): until when the samples count a stuck commit.
    forced: Mutex<Option<Instant>>,
}

pub(crate) fn guard<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means a panic elsewhere; the plain values are still valid.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Load {
    /// A renewal was sent at `at`.
    pub fn renewal_sent(&self, at: Instant) {
        guard(&self.clock).in_flight = Some(at);
    }

    /// The renewal sent at `sent_at` ended at `now`; `ok`: it answered (the leases it
    /// kept are good from `sent_at`). Also when nothing was held (nothing to renew).
    pub fn renewal_done(&self, sent_at: Instant, now: Instant, ok: bool) {
        let mut clock = guard(&self.clock);
        clock.in_flight = None;
        clock.last_latency = now.saturating_duration_since(sent_at);
        if ok {
            clock.last_success = Some(sent_at);
        }
    }

    /// The renewal part of a [`Sample`] at `now` (the store's part is zero).
    pub fn renewal_sample(&self, now: Instant) -> Sample {
        let clock = *guard(&self.clock);
        let in_flight = clock
            .in_flight
            .map_or(Duration::ZERO, |t| now.saturating_duration_since(t));
        Sample {
            renewal_age: clock
                .last_success
                .map_or(Duration::ZERO, |t| now.saturating_duration_since(t)),
            renewal_latency: clock.last_latency.max(in_flight),
            commit: Duration::ZERO,
            queued: 0,
        }
    }

    /// Tests only (the server's `stall::shed`): until `until`, every sample counts a group
    /// commit in flight beyond its limit, so the node sheds (`commit_slow`).
    pub fn force_until(&self, until: Instant) {
        *guard(&self.forced) = Some(until);
    }

    /// `sample` as the monitor decides on it at `now`: with a commit beyond `limits`
    /// while [`Load::force_until`] holds.
    pub(crate) fn as_seen(&self, sample: Sample, limits: &Limits, now: Instant) -> Sample {
        match *guard(&self.forced) {
            Some(until) if now < until => Sample {
                commit: sample.commit.max(limits.commit + Duration::from_millis(1)),
                ..sample
            },
            _ => sample,
        }
    }

    /// Whether this node sheds load now (cheap: one atomic read).
    pub fn is_shedding(&self) -> bool {
        self.shedding.load(Ordering::Relaxed)
    }

    /// Applies [`decide`] to `sample` at `now`; the previous and the new state.
    pub(crate) fn step(&self, sample: &Sample, limits: &Limits, now: Instant) -> (Shed, Shed) {
        let mut state = guard(&self.state);
        let prev = state.unwrap_or(Shed::Accepting);
        let next = decide(prev, sample, limits, now);
        *state = Some(next);
        self.shedding.store(next.is_shedding(), Ordering::Relaxed);
        (prev, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_millis(3000);
    const RENEW: Duration = Duration::from_millis(1000);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn calm() -> Sample {
        Sample {
            renewal_age: ms(400),
            renewal_latency: ms(20),
            commit: ms(10),
            queued: 30,
        }
    }

    #[test]
    fn the_limits_follow_the_lease_timings() {
        let l = Limits::for_leases(TTL, RENEW);
        assert_eq!(l.renewal_age, ms(1750));
        assert_eq!(l.renewal_latency, ms(750));
        assert_eq!(l.commit, ms(500));
        assert_eq!(l.queued, 2048);
        assert_eq!(l.calm_for, ms(6000));
    }

    #[test]
    fn each_limit_starts_shedding_with_its_reason() {
        let l = Limits::for_leases(TTL, RENEW);
        let t0 = Instant::now();
        assert_eq!(decide(Shed::Accepting, &calm(), &l, t0), Shed::Accepting);
        let cases = [
            (
                Sample {
                    renewal_age: ms(1751),
                    ..calm()
                },
                Why::RenewalLate,
            ),
            (
                Sample {
                    renewal_latency: ms(751),
                    ..calm()
                },
                Why::RenewalSlow,
            ),
            (
                Sample {
                    commit: ms(501),
                    ..calm()
                },
                Why::CommitSlow,
            ),
            (
                Sample {
                    queued: 2049,
                    ..calm()
                },
                Why::WriteQueue,
            ),
        ];
        for (sample, why) in cases {
            assert_eq!(
                decide(Shed::Accepting, &sample, &l, t0),
                Shed::Shedding {
                    why,
                    since: t0,
                    calm_since: None
                },
                "{sample:?}"
            );
        }
        // Exactly at a limit is still within it.
        let at = Sample {
            renewal_age: ms(1750),
            renewal_latency: ms(750),
            commit: ms(500),
            queued: 2048,
        };
        assert_eq!(decide(Shed::Accepting, &at, &l, t0), Shed::Accepting);
    }

    #[test]
    fn shedding_ends_only_after_a_calm_of_two_ttls() {
        let l = Limits::for_leases(TTL, RENEW);
        let t0 = Instant::now();
        let at = |n| t0 + ms(n);
        let slow = Sample {
            commit: ms(900),
            ..calm()
        };
        let mut s = decide(Shed::Accepting, &slow, &l, at(0));
        // Calm from 1 s on: still shedding at 6.999 s, accepting at 7 s.
        s = decide(s, &calm(), &l, at(1000));
        assert_eq!(
            s,
            Shed::Shedding {
                why: Why::CommitSlow,
                since: at(0),
                calm_since: Some(at(1000))
            }
        );
        s = decide(s, &calm(), &l, at(6999));
        assert!(s.is_shedding());
        s = decide(s, &calm(), &l, at(7000));
        assert_eq!(s, Shed::Accepting);
    }

    #[test]
    fn a_load_between_half_and_the_limit_keeps_shedding_and_restarts_the_calm() {
        let l = Limits::for_leases(TTL, RENEW);
        let t0 = Instant::now();
        let at = |n| t0 + ms(n);
        let busy = Sample {
            queued: 3000,
            ..calm()
        };
        let middling = Sample {
            queued: 1500,
            ..calm()
        };
        let mut s = decide(Shed::Accepting, &busy, &l, at(0));
        s = decide(s, &calm(), &l, at(100));
        s = decide(s, &middling, &l, at(5000));
        assert_eq!(
            s,
            Shed::Shedding {
                why: Why::WriteQueue,
                since: at(0),
                calm_since: None
            }
        );
        // Neither does a middling load start shedding.
        assert_eq!(
            decide(Shed::Accepting, &middling, &l, at(0)),
            Shed::Accepting
        );
        // A new overload keeps the first reason and start.
        s = decide(
            s,
            &Sample {
                renewal_latency: ms(2000),
                ..calm()
            },
            &l,
            at(6000),
        );
        assert_eq!(
            s,
            Shed::Shedding {
                why: Why::WriteQueue,
                since: at(0),
                calm_since: None
            }
        );
    }

    #[test]
    fn renewals_on_time_end_the_shedding() {
        let l = Limits::for_leases(TTL, RENEW);
        let t0 = Instant::now();
        let at = |n| t0 + ms(n);
        let late = Sample {
            renewal_age: ms(1800),
            ..calm()
        };
        let mut s = decide(Shed::Accepting, &late, &l, at(0));
        assert!(s.is_shedding());
        // Renewed on time again from 1 s on, sampled every quarter period: just before
        // each renewal the age is a whole period (and a little).
        for k in 0..=28 {
            let sample = Sample {
                renewal_age: ms(250 * (k % 4) + 260),
                ..calm()
            };
            s = decide(s, &sample, &l, at(1000 + 250 * k));
        }
        assert_eq!(s, Shed::Accepting, "calm for two TTLs from 1 s on");
        // An age more than half the allowance beyond a period restarts the calm.
        let mut s = decide(Shed::Accepting, &late, &l, at(0));
        s = decide(s, &calm(), &l, at(100));
        s = decide(
            s,
            &Sample {
                renewal_age: ms(1400),
                ..calm()
            },
            &l,
            at(200),
        );
        assert!(matches!(
            s,
            Shed::Shedding {
                calm_since: None,
                ..
            }
        ));
    }

    #[test]
    fn the_renewal_clock_counts_a_renewal_in_flight() {
        let load = Load::default();
        let t0 = Instant::now();
        let at = |n| t0 + ms(n);
        assert_eq!(load.renewal_sample(t0).renewal_age, Duration::ZERO);
        load.renewal_sent(at(0));
        load.renewal_done(at(0), at(30), true);
        let s = load.renewal_sample(at(500));
        assert_eq!((s.renewal_age, s.renewal_latency), (ms(500), ms(30)));
        // The next one hangs: its time so far counts as its latency, and the age grows.
        load.renewal_sent(at(1000));
        let s = load.renewal_sample(at(1900));
        assert_eq!((s.renewal_age, s.renewal_latency), (ms(1900), ms(900)));
        // It fails: the last success stays the first send.
        load.renewal_done(at(1000), at(2000), false);
        let s = load.renewal_sample(at(2100));
        assert_eq!((s.renewal_age, s.renewal_latency), (ms(2100), ms(1000)));
    }
}
