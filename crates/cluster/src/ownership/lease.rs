//! A lease's life on this node (`docs/CLUSTER.md`, "Ownership: leases with an epoch"):
//! the renewer (every `lease-renew-ms`, ONE `renew_leases` for every fence held), the
//! pure decision of which rooms a renewal answer stops ([`judge`]), and the lease's
//! release and retirement (what becomes of it when a room's actor ends here is
//! `crate::host::room_ended`): retired when the room is
//! finished or disposed, released on a hand-off or a shutdown, released and adopted again
//! here for a rebuild, nothing when it was lost.

use super::observe;
use crate::held::Ownership;
use crate::state::NodeState;

use parchis_store::{Fence, LeaseKeeper};
use std::collections::HashSet;
use std::time::Duration;
use tokio::time::Instant;

/// What one renewal decided: the rooms to stop, and since when the leases are known good.
#[derive(Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Fences lost: their rooms stop at once.
    pub stop: Vec<Fence>,
    /// When the last renewal that succeeded was sent (a lease renewed by it lasts at least
    /// a TTL from then, by any clock running at the same rate).
    pub last_success: Instant,
    /// No renewal succeeded for a whole TTL: every room held stops.
    pub all_lost: bool,
}

/// The renewal bookkeeping, a pure function of its inputs (time as a value):
/// `sent` were renewed by a statement sent at `sent_at`; `kept` is its answer (`None`:
/// it failed or timed out). A fence of `sent` missing from `kept` is lost. Without an
/// answer, nothing is lost until `ttl` has passed at `now` since `last_success`; then
/// every fence of `sent` is.
pub fn judge(
    sent: &[Fence],
    kept: Option<&[Fence]>,
    sent_at: Instant,
    last_success: Instant,
    ttl: Duration,
    now: Instant,
) -> Verdict {
    match kept {
        Some(kept) => {
            let kept: HashSet<&Fence> = kept.iter().collect();
            Verdict {
                stop: sent.iter().filter(|f| !kept.contains(f)).cloned().collect(),
                last_success: sent_at,
                all_lost: false,
            }
        }
        None if now.saturating_duration_since(last_success) >= ttl => Verdict {
            stop: sent.to_vec(),
            last_success,
            all_lost: true,
        },
        None => Verdict {
            stop: Vec::new(),
            last_success,
            all_lost: false,
        },
    }
}

/// How long a renewal sent at `sent_at` may take: until a whole TTL has passed since
/// `last_success` (an answer after that cannot save the leases, one before it can), but
/// at least one `period`.
pub fn renewal_budget(
    sent_at: Instant,
    last_success: Instant,
    ttl: Duration,
    period: Duration,
) -> Duration {
    (last_success + ttl)
        .saturating_duration_since(sent_at)
        .max(period)
}

/// The renewer task: every `lease-renew-ms` one `renew_leases` for every fence held (on
/// `keeper`'s connections, on the lease thread ([`super::lease_thread`]): neither game
/// writes nor work on the main runtime make it wait;
/// bounded by [`renewal_budget`], a statement that hangs counts as failed); the rooms
/// whose lease is lost are stopped; if nothing was renewed for a whole TTL (the database
/// is unreachable), every room is. Each renewal's time goes to the load monitor
/// ([`crate::held::shedding`]) and to `parchis_cluster_lease_renewal_seconds`. Ends at
/// shutdown.
pub async fn renewer(state: NodeState, keeper: &dyn LeaseKeeper) {
    let (Some(cluster), Some(own)) = (state.cluster().cloned(), state.ownership()) else {
        return;
    };
    let node = cluster.node().as_str().to_owned();
    let (ttl, period) = (cluster.config.lease_ttl, cluster.config.lease_renew);
    let shutdown = state.shutdown_token();
    let mut every = tokio::time::interval(period);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_success = Instant::now();
    let mut last_end = last_success;
    loop {
        let tick = tokio::select! {
            _ = shutdown.cancelled() => break,
            tick = every.tick() => tick,
        };
        let sent = own.fences();
        let sent_at = Instant::now();
        // Late against its tick, or against the end of the previous renewal when that one
        // ran past the tick (a slow statement is not a scheduling delay).
        observe::renewal_started(&node, tick.max(last_end), sent_at, period / 4);
        if sent.is_empty() {
            last_success = sent_at;
            own.load.renewal_done(sent_at, sent_at, true);
            continue;
        }
        own.load.renewal_sent(sent_at);
        let budget = renewal_budget(sent_at, last_success, ttl, period);
        let answer = {
            let _gate = own.gate.lock().await;
            let renew = keeper.renew_leases(&node, cluster.ttl_ms(), &sent);
            match tokio::time::timeout(budget, renew).await {
                Ok(Ok(kept)) => Some(kept),
                Ok(Err(e)) => {
                    tracing::warn!(node = %node, held = sent.len(), error = %e, "lease renewal failed");
                    None
                }
                Err(_) => {
                    tracing::warn!(node = %node, held = sent.len(), budget_ms = budget.as_millis() as u64, "lease renewal timed out");
                    None
                }
            }
        };
        let now = Instant::now();
        last_end = now;
        own.load.renewal_done(sent_at, now, answer.is_some());
        observe::renewal_took(now.saturating_duration_since(sent_at));
        let verdict = judge(&sent, answer.as_deref(), sent_at, last_success, ttl, now);
        if let Some(kept) = &answer {
            observe::renewed(kept.len());
        }
        if verdict.all_lost {
            tracing::error!(node = %node, held = sent.len(), "no lease renewed for a whole TTL: stopping every room");
        }
        let why = if verdict.all_lost {
            "no renewal for a whole lease TTL"
        } else {
            "lease lost"
        };
        for fence in &verdict.stop {
            observe::lease_lost(fence, why);
            stop_room(&state, own, fence, why);
        }
        last_success = verdict.last_success;
    }
}

/// Stops the room of `fence` at once, if that fence is still held: no more renewals,
/// and its actor is told to stop (`Owned::stop`: a room deregisters and rehomes its
/// connections without writing anything).
pub fn stop_room(state: &NodeState, own: &Ownership, fence: &Fence, why: &'static str) {
    if !own.forget(fence) {
        return;
    }
    state
        .kinds()
        .of(&fence.room_code)
        .stop(&fence.room_code, why);
}

/// Releases `fence` (drain, shutdown): no more renewals, then `expires_at = now()` so
/// the next owner acquires it at once. Waits for a renewal under way, which could
/// otherwise extend the lease again.
pub async fn release(state: &NodeState, fence: &Fence) {
    let Some(own) = state.ownership() else {
        return;
    };
    own.forget(fence);
    let _gate = own.gate.lock().await;
    match state.store().release_lease(fence).await {
        Ok(matched) => observe::released(fence, matched),
        Err(e) => tracing::warn!(
            room = %fence.room_code, node = %fence.node, epoch = fence.epoch, error = %e,
            "lease not released: it expires after its TTL"
        ),
    }
}

/// Retires `fence` (the room is finished or disposed): never claimed again.
pub async fn retire(state: &NodeState, fence: &Fence) {
    if let Some(own) = state.ownership() {
        own.forget(fence);
    }
    match state.store().retire_lease(fence).await {
        Ok(matched) => observe::retired(fence, matched),
        Err(e) => tracing::warn!(
            room = %fence.room_code, node = %fence.node, epoch = fence.epoch, error = %e,
            "lease not retired"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(room: &str, epoch: i64) -> Fence {
        Fence {
            room_code: room.into(),
            node: "a".into(),
            epoch,
        }
    }

    const TTL: Duration = Duration::from_millis(3000);

    #[test]
    fn rooms_missing_from_the_answer_stop() {
        let t0 = Instant::now();
        let sent = [f("AAAA", 1), f("BBBB", 3), f("CCCC", 2)];
        // BBBB came back at another epoch: not ours any more.
        let kept = [f("AAAA", 1), f("BBBB", 4)];
        let sent_at = t0 + Duration::from_secs(5);
        let v = judge(&sent, Some(&kept), sent_at, t0, TTL, sent_at);
        assert_eq!(v.stop, vec![f("BBBB", 3), f("CCCC", 2)]);
        assert_eq!(v.last_success, sent_at);
        assert!(!v.all_lost);
    }

    #[test]
    fn a_full_answer_stops_nothing() {
        let t0 = Instant::now();
        let sent = [f("AAAA", 1), f("BBBB", 3)];
        let v = judge(&sent, Some(&sent), t0, t0, TTL, t0);
        assert!(v.stop.is_empty());
    }

    #[test]
    fn failures_stop_everything_only_after_a_whole_ttl() {
        let t0 = Instant::now();
        let sent = [f("AAAA", 1), f("BBBB", 3)];
        let at = |ms| t0 + Duration::from_millis(ms);
        let v = judge(&sent, None, at(2000), t0, TTL, at(2999));
        assert_eq!(
            v,
            Verdict {
                stop: vec![],
                last_success: t0,
                all_lost: false
            }
        );
        let v = judge(&sent, None, at(3000), t0, TTL, at(3000));
        assert_eq!(v.stop, sent.to_vec());
        assert!(v.all_lost);
        assert_eq!(v.last_success, t0, "a failure never moves the last success");
    }

    #[test]
    fn a_renewal_may_take_the_rest_of_the_ttl_but_at_least_a_period() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let period = Duration::from_millis(1000);
        // Sent one period after the last success: 2 s left of the TTL.
        assert_eq!(
            renewal_budget(at(1000), t0, TTL, period),
            Duration::from_millis(2000)
        );
        // Sent late (the previous renewal was slow): what is left, but never less than a
        // period.
        assert_eq!(
            renewal_budget(at(1800), t0, TTL, period),
            Duration::from_millis(1200)
        );
        assert_eq!(renewal_budget(at(2500), t0, TTL, period), period);
        assert_eq!(renewal_budget(at(9000), t0, TTL, period), period);
    }

    #[test]
    fn the_last_success_is_when_the_renewal_was_sent() {
        let t0 = Instant::now();
        let sent = [f("AAAA", 1)];
        let sent_at = t0 + Duration::from_millis(1000);
        // The answer came back late: the lease is only known good from the send.
        let v = judge(&sent, Some(&sent), sent_at, t0, TTL, sent_at + TTL);
        assert_eq!(v.last_success, sent_at);
        let later = judge(&sent, None, sent_at, v.last_success, TTL, sent_at + TTL);
        assert!(later.all_lost);
    }
}
