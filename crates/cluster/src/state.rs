//! The narrow context of this node's cluster code: its rooms ([`Rooms`]) and the kinds of
//! actor it owns by lease ([`Kinds`]), its cluster
//! membership (NATS, routing, ownership; `None` on a single node, where routing answers
//! locally), admission control (a room created here for a client of another node counts
//! against that client's address here too) and the sizes of connection queues (relayed
//! connections get the same as local ones). Cheap to clone.

use crate::held::Ownership;
use crate::membership::Cluster;
use crate::owned::Kinds;
use parchis_admission::Admission;
use parchis_room::{RoomHandle, Rooms};
use parchis_store::Store;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The outbound queue of one connection, local or relayed.
#[derive(Clone, Copy, Debug)]
pub struct LinkConfig {
    /// Frames queued before the connection is dropped as too slow.
    pub outbound_queue: usize,
    /// Bytes queued and not yet written before it is dropped as too slow.
    pub outbound_queue_bytes: usize,
}

/// This node, as its cluster code sees it.
#[derive(Clone)]
pub struct NodeState {
    rooms: Rooms,
    kinds: Kinds,
    cluster: Option<Arc<Cluster>>,
    admission: Arc<Admission>,
    links: LinkConfig,
}

impl NodeState {
    /// The node of `rooms`, in cluster mode when `cluster` is given.
    pub fn new(
        rooms: Rooms,
        cluster: Option<Arc<Cluster>>,
        admission: Arc<Admission>,
        links: LinkConfig,
    ) -> NodeState {
        NodeState {
            kinds: Kinds::rooms_only(rooms.clone()),
            rooms,
            cluster,
            admission,
            links,
        }
    }

    /// The rooms running here.
    pub fn rooms(&self) -> &Rooms {
        &self.rooms
    }

    /// The kinds of actor this node owns by lease (rooms), for ownership's takeover,
    /// drain and lost leases.
    pub fn kinds(&self) -> &Kinds {
        &self.kinds
    }

    /// Cluster mode's state; `None` on a single node.
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.cluster.as_ref()
    }

    /// This node's ownership bookkeeping; `None` on a single node.
    pub fn ownership(&self) -> Option<&Ownership> {
        self.cluster.as_ref().map(|c| &c.ownership)
    }

    /// Asks this node's sweeper to look for expired or unowned rooms now rather than at
    /// its next tick (a client reached a room nobody serves). Cheap; may be called often
    /// (the sweeper runs at most once per 50 ms). Nothing on a single node.
    pub fn wake_sweeper(&self) {
        if let Some(own) = self.ownership() {
            own.wake.notify_one();
        }
    }

    /// Admission control.
    pub fn admission(&self) -> &Admission {
        &self.admission
    }

    /// Connection queue sizes.
    pub fn links(&self) -> LinkConfig {
        self.links
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        self.rooms.store()
    }

    /// Cancelled when the server shuts down.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.rooms.shutdown_token()
    }

    /// Tracks room actors and connection tasks.
    pub fn tracker(&self) -> &TaskTracker {
        self.rooms.tracker()
    }

    /// A process-unique number.
    pub fn next_id(&self) -> u64 {
        self.rooms.next_id()
    }

    /// The handle of room `code`, if it runs here.
    pub fn room(&self, code: &str) -> Option<RoomHandle> {
        self.rooms.room(code)
    }

    /// How many rooms run here.
    pub fn room_count(&self) -> usize {
        self.rooms.room_count()
    }

    /// Whether this node holds its most rooms.
    pub fn is_full(&self) -> bool {
        self.rooms.is_full()
    }

    /// Every room running here.
    pub fn all_rooms(&self) -> Vec<RoomHandle> {
        self.rooms.all_rooms()
    }
}
