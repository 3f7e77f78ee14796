//! Bringing a room whose lease this node just acquired (a sweeper's claim or a drain's
//! adoption) into service: rebuilt from its log by the SAME restore as a restart
//! ([`parchis_room::restore()`], with the fence), so the turn clock is re-armed by the
//! restart rule and bots carry on; its actor serves `P.room.<CODE>` from its start on,
//! and then the takeover announces it with a `moved` notice (`docs/CLUSTER.md`,
//! "Failover").
//!
//! A room that does not come up is logged, and its lease is:
//! * **left** to expire (not renewed) when the store failed or the stored room does not
//!   restore (unreadable or diverging log). Such a failure may be one node's (a store
//!   hiccup, or an older node reading a newer node's log during a rolling deploy), so the
//!   room is not closed for good: a sweeper tries again once the lease expired, at most
//!   once per TTL for the whole cluster (a claim sets the lease for a TTL). A single node
//!   likewise leaves such a room closed and tries again at its next restart.
//! * **released** when this node cannot register it (full, or the code still taken by a
//!   stopping older incarnation): another node can take it at once.
//! * **retired** when its game had already ended (the room is closed).
//! * untouched when a write of the restore was fenced: another node owns it.

use super::lease;
use super::observe::{self, How};
use crate::owned::Brought;
use crate::routing;
use crate::state::NodeState;
use parchis_room::{RestoreError, Restored};
use parchis_store::Fence;
use std::time::Duration;

/// How long a takeover waits for an older incarnation of the room on this node (its lease
/// lost, its `Stop` on the way) to deregister.
const OLD_ACTOR_WAIT: Duration = Duration::from_secs(2);

/// Runs the room of `fence` here (its lease was just acquired by this node). Returns
/// whether it runs.
pub async fn bring_up(state: &NodeState, fence: Fence, how: How) -> bool {
    let Some(own) = state.ownership() else {
        return false;
    };
    own.hold(fence.clone());
    let code = fence.room_code.clone();
    if !old_actor_gone(state, &code).await {
        own.forget(&fence);
        let e = "an older incarnation of the room is still running here";
        observe::takeover_failed(&fence, None, how, "register", "left to expire", &e);
        return false;
    }
    let kind = state.kinds().of(&code);
    let Brought { game, outcome } = kind.restore(&code, &fence).await;
    match outcome {
        Ok(Restored::Running) => {
            if !own.holds(&fence) {
                // Lost while restoring (a renewal did not keep it): stop it again.
                kind.stop(&code, "lease lost");
                return false;
            }
            observe::took_over(&fence, game, how);
            // Served since its actor started: edges may come here now.
            routing::announce_moved(state, &code, fence.epoch).await;
            true
        }
        Ok(Restored::Over) => {
            lease::retire(state, &fence).await;
            false
        }
        Err(e) => {
            let (why, what) = match &e {
                RestoreError::Fenced => ("fenced", "another node's"),
                RestoreError::Register => ("register", "released"),
                RestoreError::Store(_) => ("store", "left to expire"),
                RestoreError::Unreadable(_) | RestoreError::Diverged(_) => {
                    ("unreadable", "left to expire")
                }
            };
            if matches!(e, RestoreError::Register) {
                lease::release(state, &fence).await;
            } else {
                own.forget(&fence);
            }
            observe::takeover_failed(&fence, game, how, why, what, &e);
            false
        }
    }
}

/// Waits until no room of `code` is registered here (an older incarnation whose lease
/// was lost is told to stop). `false` if it is still there after [`OLD_ACTOR_WAIT`].
async fn old_actor_gone(state: &NodeState, code: &str) -> bool {
    let kind = state.kinds().of(code);
    if !kind.is_running(code) {
        return true;
    }
    kind.stop(code, "taken over at a newer epoch");
    let until = tokio::time::Instant::now() + OLD_ACTOR_WAIT;
    while tokio::time::Instant::now() < until {
        if !kind.is_running(code) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !kind.is_running(code)
}
