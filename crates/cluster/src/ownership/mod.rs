//! Who runs which room (`docs/CLUSTER.md`, "Ownership", "Placement", "Failover",
//! "Drain"): leases with an epoch in PostgreSQL, renewed in batches; the sweeper that
//! claims expired or unowned rooms; the placement of new rooms; the SIGTERM hand-off; the
//! `P.node.<NODE>` requests (create, adopt).
//!
//! * [`Ownership`]: this node's bookkeeping: the fences it holds, whether it drains, the
//!   sweeper's wake-up.
//! * [`lease`]: the renewer (one statement per node per `lease-renew-ms`), and what
//!   becomes of a lease when its room ends here ([`lease::room_ended`]).
//! * [`lease_thread`]: the OS thread, runtime and connections the renewer and the
//!   heartbeat run on, apart from the main runtime.
//! * [`sweeper`]: claims expired or unowned rooms every `sweep-ms` (failover).
//! * [`takeover`]: brings a room whose lease this node just acquired into service through
//!   the restart's restore.
//! * [`placement`]: where `POST /api/rooms` creates a room.
//! * [`node`]: the heartbeat and the `P.node.<NODE>` service (create, adopt).
//! * [`drain`]: the SIGTERM hand-off.
//! * [`shedding`]: an overloaded node takes no new rooms and is not ready, before its
//!   renewals run late enough to lose its leases.
//! * [`observe`]: the log lines and metrics of all of the above.
//!
//! Every room actor in cluster mode holds its [`Fence`]; its writes go through
//! `Store::write_room` with it, so a node that lost a room can never write into its log.

pub mod drain;
pub mod lease;
pub mod lease_thread;
pub mod node;
pub mod observe;
pub mod placement;
pub mod shedding;
pub mod sweeper;
pub mod takeover;

use crate::state::NodeState;
use parchis_store::Fence;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use tokio::sync::Notify;

pub use parchis_room::RoomEnd;

/// This node's side of ownership: the fences it holds (rooms running here or being
/// restored), whether it is draining, and the sweeper's wake-up. One per node, in
/// [`crate::Cluster`].
#[derive(Debug, Default)]
pub struct Ownership {
    /// Room code → the fence this node holds for it.
    held: Mutex<HashMap<String, Fence>>,
    draining: AtomicBool,
    wake: Notify,
    /// Held by the renewer while its statement runs and by [`lease::release`]: a lease
    /// released for a hand-off is never renewed again by a statement already under way.
    gate: tokio::sync::Mutex<()>,
    /// The renewal clock and whether this node sheds load ([`shedding`]).
    pub load: shedding::Load,
}

impl Ownership {
    /// Nothing held, not draining.
    pub fn new() -> Ownership {
        Ownership::default()
    }

    fn held(&self) -> MutexGuard<'_, HashMap<String, Fence>> {
        // A poisoned map only means a panic elsewhere; the map itself is still valid.
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `fence` as held (its lease is renewed from now on).
    pub fn hold(&self, fence: Fence) {
        self.held().insert(fence.room_code.clone(), fence);
    }

    /// Stops holding `fence` (not renewed any more). Returns whether it was held; a newer
    /// fence of the same room is left alone.
    pub fn forget(&self, fence: &Fence) -> bool {
        let mut held = self.held();
        if held.get(&fence.room_code) == Some(fence) {
            held.remove(&fence.room_code);
            true
        } else {
            false
        }
    }

    /// Whether `fence` is held.
    pub fn holds(&self, fence: &Fence) -> bool {
        self.held().get(&fence.room_code) == Some(fence)
    }

    /// The fence held for room `code`.
    pub fn fence_of(&self, code: &str) -> Option<Fence> {
        self.held().get(code).cloned()
    }

    /// Every fence held, by room code.
    pub fn fences(&self) -> Vec<Fence> {
        let mut fences: Vec<Fence> = self.held().values().cloned().collect();
        fences.sort_by(|a, b| a.room_code.cmp(&b.room_code));
        fences
    }

    /// How many fences are held.
    pub fn count(&self) -> usize {
        self.held().len()
    }

    /// Whether this node takes no new rooms: it drains or sheds load.
    pub fn refuses_new_rooms(&self) -> bool {
        self.is_draining() || self.load.is_shedding()
    }

    /// Whether this node is draining (takes no new rooms, claims none).
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// Marks this node draining, for good.
    pub fn set_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }
}

/// This node's ownership bookkeeping; `None` on a single node.
pub fn ownership(state: &NodeState) -> Option<&Ownership> {
    state.cluster().map(|c| &c.ownership)
}

/// The lease TTL in milliseconds, as the store takes it.
pub fn ttl_ms(cluster: &crate::Cluster) -> i64 {
    i64::try_from(cluster.config.lease_ttl.as_millis()).unwrap_or(i64::MAX)
}

/// Starts cluster mode's background tasks on the server's tracker: the lease renewer and
/// the node heartbeat on the lease thread ([`lease_thread`]), the load monitor, the
/// sweeper and the `P.node.<NODE>` service on the main runtime. They end when the server
/// shuts down. Does nothing on a single node.
pub fn start(state: &NodeState) {
    if state.cluster().is_none() {
        return;
    }
    let tracker = state.tracker();
    lease_thread::start(state);
    tracker.spawn(shedding::monitor(state.clone()));
    tracker.spawn(sweeper::sweeper(state.clone()));
    tracker.spawn(node::serve(state.clone()));
}

/// Clean exit: removes this node's heartbeat row so placement stops considering it.
pub async fn leave(state: &NodeState) {
    let Some(cluster) = state.cluster() else {
        return;
    };
    if let Err(e) = state.store().forget_node(cluster.node().as_str()).await {
        tracing::warn!(node = %cluster.node(), error = %e, "could not remove the node's heartbeat");
    }
}

/// Asks this node's sweeper to look for expired or unowned rooms now rather than at its
/// next tick (a client reached a room nobody serves). Cheap; may be called often (the
/// sweeper runs at most once per 50 ms).
pub fn wake_sweeper(state: &NodeState) {
    if let Some(own) = ownership(state) {
        own.wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fence(room: &str, epoch: i64) -> Fence {
        Fence {
            room_code: room.into(),
            node: "a".into(),
            epoch,
        }
    }

    #[test]
    fn a_newer_fence_is_not_forgotten_for_an_older_one() {
        let own = Ownership::new();
        own.hold(fence("AAAA", 1));
        own.hold(fence("AAAA", 2));
        own.hold(fence("BBBB", 5));
        assert!(!own.forget(&fence("AAAA", 1)));
        assert!(own.holds(&fence("AAAA", 2)));
        assert_eq!(own.fences(), vec![fence("AAAA", 2), fence("BBBB", 5)]);
        assert!(own.forget(&fence("AAAA", 2)));
        assert_eq!(own.count(), 1);
    }
}
