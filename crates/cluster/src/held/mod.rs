//! This node's ownership bookkeeping, part of [`crate::Cluster`], below the node's state:
//! the fences it holds, whether it drains, the sweeper's wake-up, the load and its pure
//! shedding decision ([`shedding`]), and the clock comparison ([`clock`]). What acts on
//! it is `crate::ownership`.

pub mod clock;
pub mod shedding;

use parchis_store::Fence;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use tokio::sync::Notify;

/// This node's side of ownership: the fences it holds (rooms running here or being
/// restored), whether it is draining, and the sweeper's wake-up. One per node, in
/// [`crate::Cluster`].
#[derive(Debug, Default)]
pub struct Ownership {
    /// Room code → the fence this node holds for it.
    pub(crate) held: Mutex<HashMap<String, Fence>>,
    pub(crate) draining: AtomicBool,
    pub(crate) wake: Notify,
    /// Held by the renewer while its statement runs and by `lease::release`: a lease
    /// released for a hand-off is never renewed again by a statement already under way.
    pub(crate) gate: tokio::sync::Mutex<()>,
    /// This node's clock differed from the database's beyond the bound at the last
    /// heartbeat ([`clock`]).
    pub clock_skewed: AtomicBool,
    /// The database's clock minus this node's at the last heartbeat (ms; 0 before the
    /// first): [`Ownership::db_now_ms`].
    pub clock_skew_ms: std::sync::atomic::AtomicI64,
    /// The renewal clock and whether this node sheds load ([`shedding`]).
    pub load: shedding::Load,
}

impl Ownership {
    /// Nothing held, not draining.
    pub fn new() -> Ownership {
        Ownership::default()
    }

    /// Now on the database's clock (unix ms), as this node's clock and its last measured
    /// skew tell: the time base every node shares, whatever its own wall clock says
    /// (the deadlines of forwarded commands, `routing::forward`).
    pub fn db_now_ms(&self) -> i64 {
        parchis_room::now_ms()
            + self
                .clock_skew_ms
                .load(std::sync::atomic::Ordering::Relaxed)
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
