//! The routing's state on one node, part of [`crate::Cluster`]: the sessions' routes, the
//! rooms served here, the relayed connections ([`super::edge::Edge`]), the lobby's shared
//! gathers, the edge nodes found gone, the unknown codes and the publishers. Data only:
//! what acts on it is in the sibling modules.

use parchis_room::{ConnId, Member, RoomHandle};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

/// Where a WebSocket session's commands go.
#[derive(Clone, Debug)]
pub enum Route {
    /// The room runs on this node.
    Local {
        /// Its actor.
        handle: RoomHandle,
        /// What the connection is in it.
        member: Member,
    },
    /// The room runs on another node: commands go to `P.room.<CODE>`, frames come
    /// through [`edge`](crate::links::edge).
    Remote,
}

/// A session's route, shared with `routing::rehome` (which swaps it to [`Route::Remote`]).
pub type RouteCell = Arc<Mutex<Route>>;

/// Reads a route cell.
pub fn route_of(cell: &RouteCell) -> Route {
    cell.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The routing's state on one node (part of [`crate::Cluster`]).
#[derive(Default)]
pub struct Routing {
    /// Relayed connections.
    pub edge: super::edge::Edge,
    /// Every joined session's route, by connection id.
    cells: Mutex<HashMap<ConnId, RouteCell>>,
    /// Rooms whose subject this node serves, with the serving task's token.
    served: Mutex<HashMap<String, u64>>,
    /// The other nodes' public rooms, shared by this node's listings.
    pub lobby: Shared,
    /// Edge nodes whose edge subscription is gone from NATS.
    pub gone_edges: GoneEdges,
    /// Codes found unknown lately ([`super::unknown`]).
    pub unknown: super::unknown::UnknownCodes,
    /// The publishers of this node's remote links, one per edge node.
    pub publishers: super::publisher::Publishers,
}

/// The other nodes whose edge subscription (`P.edge.<NODE>`) is gone from NATS: a node
/// that died (`kill -9`) or lost NATS, whose sockets can no longer be reached, and which
/// never detached its relayed connections. Each room served here detaches them
/// (`routing::service`) as if their sockets had closed. The nodes looked at are those of the
/// heartbeats the sweeper read; `run::probe_edges` asks each every [`PROBE_EVERY`] (NATS
/// answers at once that nobody subscribes; a live edge, which does not answer, is not
/// waited for beyond [`PROBE_WAIT`]).
pub struct GoneEdges {
    gone: tokio::sync::watch::Sender<Arc<HashSet<String>>>,
    others: Mutex<Vec<String>>,
}

/// How often the other nodes' edge subscriptions are probed.
pub const PROBE_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
/// How long a probe waits: a subject nobody subscribes is answered at once.
pub const PROBE_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

impl Default for GoneEdges {
    fn default() -> GoneEdges {
        GoneEdges {
            gone: tokio::sync::watch::Sender::new(Arc::default()),
            others: Mutex::default(),
        }
    }
}

impl GoneEdges {
    /// The nodes of the heartbeats the sweeper read (`me` left out) are the ones probed.
    pub fn note(&self, nodes: &[parchis_store::NodeInfo], me: &str) {
        let ids = nodes
            .iter()
            .filter(|n| n.node_id != me)
            .map(|n| n.node_id.clone())
            .collect();
        *self.others.lock().unwrap_or_else(|e| e.into_inner()) = ids;
    }

    pub(crate) fn others(&self) -> Vec<String> {
        self.others
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The nodes found gone now; the rooms are told when the set changes.
    pub(crate) fn set(&self, now: HashSet<String>) {
        self.gone.send_if_modified(|known| {
            let changed = **known != now;
            if changed {
                *known = Arc::new(now);
            }
            changed
        });
    }

    pub(crate) fn subscribe(&self) -> tokio::sync::watch::Receiver<Arc<HashSet<String>>> {
        self.gone.subscribe()
    }
}

impl std::fmt::Debug for Routing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routing").finish_non_exhaustive()
    }
}

impl Routing {
    pub(crate) fn cells(&self) -> MutexGuard<'_, HashMap<ConnId, RouteCell>> {
        self.cells.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn served(&self) -> MutexGuard<'_, HashMap<String, u64>> {
        self.served.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers session `conn`'s route (so a rehome can find it).
    pub fn register_cell(&self, conn: ConnId, cell: RouteCell) {
        self.cells().insert(conn, cell);
    }

    /// Forgets session `conn`'s route (it left its room; a relay closes on its own).
    pub fn forget_cell(&self, conn: ConnId) {
        self.cells().remove(&conn);
    }

    /// Forgets session `conn`'s route and relay.
    pub fn forget(&self, conn: ConnId) {
        self.cells().remove(&conn);
        self.edge.forget(conn, None);
    }

    /// Whether this node serves room `code`'s subject.
    pub fn serves(&self, code: &str) -> bool {
        self.served().contains_key(code)
    }

    /// Room `code`'s subject is served here by the service of `token` (a newer
    /// incarnation of the room replaces an older one's entry).
    pub(crate) fn begin_serving(&self, code: &str, token: u64) {
        self.served().insert(code.to_owned(), token);
    }

    pub(crate) fn end_serving(&self, code: &str, token: u64) {
        let mut served = self.served();
        if served.get(code) == Some(&token) {
            served.remove(code);
        }
    }
}

/// The other nodes' public rooms as last gathered, per kind of listing (lobbies, games
/// in progress), with when the gather started.
pub(crate) type Gathered = Option<(
    tokio::time::Instant,
    Arc<Vec<Vec<parchis_protocol::RoomSummary>>>,
)>;

/// The last gather of each kind of listing, shared by this node's listings for
/// `lobby::SHARE_FOR` (part of [`Routing`]).
#[derive(Default)]
pub struct Shared {
    pub(crate) lobbies: tokio::sync::Mutex<Gathered>,
    pub(crate) playing: tokio::sync::Mutex<Gathered>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use parchis_store::NodeInfo;

    fn node(id: &str) -> NodeInfo {
        NodeInfo {
            node_id: id.into(),
            rooms: 1,
            draining: false,
            shedding: false,
            seen_ms_ago: 0,
        }
    }

    #[test]
    fn the_other_nodes_are_probed_and_the_rooms_hear_of_changes_only() {
        let edges = GoneEdges::default();
        edges.note(&[node("a"), node("b"), node("c")], "a");
        assert_eq!(edges.others(), vec!["b", "c"]);
        let mut rx = edges.subscribe();
        let gone = HashSet::from(["b".to_owned()]);
        edges.set(gone.clone());
        assert!(rx.has_changed().unwrap_or(false));
        assert_eq!(**rx.borrow_and_update(), gone);
        edges.set(gone);
        assert!(
            !rx.has_changed().unwrap_or(true),
            "the same set again: no news"
        );
        edges.set(HashSet::new());
        assert!(rx.has_changed().unwrap_or(false));
        assert!(rx.borrow_and_update().is_empty());
    }
}
