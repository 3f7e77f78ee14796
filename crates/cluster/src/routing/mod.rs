//! Moving commands and frames between nodes (`docs/CLUSTER.md`, "Routing"):
//!
//! * [`service`]: the owner's `P.room.<CODE>` service (attach, command, detach, view).
//! * [`remote_link`]: the owner's remote links, drained onto `P.edge.<NODE>` by
//!   [`publisher`] (one per edge node: a frame for several sockets of one edge node goes
//!   once).
//! * [`edge`]: the edge's relayed connections and the dispatcher relaying frames to
//!   their sockets; [`relay`] is its pure per-connection state machine (stream position,
//!   commands waiting for their one reply); [`forward`] sends the client's attach and
//!   commands to the owner, [`ask`] bounds each request; [`reattach`] follows a room
//!   after a gap, an `end`, a `moved` notice or a rehome.
//! * [`lobby`]: the public lobby's scatter/gather on `P.lobby`.
//! * [`wire`]: the JSON shapes between nodes.
//! * [`unknown`]: the negative cache of codes no node serves and the store does not hold.
//!
//! A room's actor calls [`serve_room`] (its one caller) while it starts, before anyone
//! learns of the room: the subscription is on the NATS server before a creation is
//! answered or a `moved` notice ([`announce_moved`], the ownership side's) is sent. The
//! ownership side calls [`rehome`] when a room stops here with connections still
//! attached. A WebSocket session
//! holds its room as a [`RouteCell`]: a local room handle, or a relayed connection of
//! another node's room; [`rehome`] swaps it.

pub mod ask;
pub mod edge;
pub mod edge_msg;
pub mod forward;
pub mod lobby;
pub mod metrics;
pub mod publisher;
pub mod reattach;
pub mod relay;
pub mod remote_link;
pub mod service;
pub mod unknown;
pub mod wire;

use crate::state::NodeState;
use futures_util::StreamExt;
use parchis_room::{ConnId, Member, Rehomed, RoomHandle};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use tracing::{info, warn, Instrument};

pub use parchis_room::Reattach;

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
    /// through [`edge`].
    Remote,
}

/// A session's route, shared with [`rehome`] (which swaps it to [`Route::Remote`]).
pub type RouteCell = Arc<Mutex<Route>>;

/// Reads a route cell.
pub fn route_of(cell: &RouteCell) -> Route {
    cell.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The routing's state on one node (part of [`crate::Cluster`]).
#[derive(Default)]
pub struct Routing {
    /// Relayed connections.
    pub edge: edge::Edge,
    /// Every joined session's route, by connection id.
    cells: Mutex<HashMap<ConnId, RouteCell>>,
    /// Rooms whose subject this node serves, with the serving task's token.
    served: Mutex<HashMap<String, u64>>,
    /// The other nodes' public rooms, shared by this node's listings.
    pub lobby: lobby::Shared,
    /// Edge nodes whose edge subscription is gone from NATS.
    pub gone_edges: GoneEdges,
    /// Codes found unknown lately ([`unknown`]).
    pub unknown: unknown::UnknownCodes,
    /// The publishers of this node's remote links, one per edge node.
    pub publishers: publisher::Publishers,
}

/// The other nodes whose edge subscription (`P.edge.<NODE>`) is gone from NATS: a node
/// that died (`kill -9`) or lost NATS, whose sockets can no longer be reached, and which
/// never detached its relayed connections. Each room served here detaches them
/// ([`service`]) as if their sockets had closed. The nodes looked at are those of the
/// heartbeats the sweeper read; [`probe_edges`] asks each every [`PROBE_EVERY`] (NATS
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

    fn others(&self) -> Vec<String> {
        self.others
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The nodes found gone now; the rooms are told when the set changes.
    fn set(&self, now: HashSet<String>) {
        self.gone.send_if_modified(|known| {
            let changed = **known != now;
            if changed {
                *known = Arc::new(now);
            }
            changed
        });
    }

    fn subscribe(&self) -> tokio::sync::watch::Receiver<Arc<HashSet<String>>> {
        self.gone.subscribe()
    }
}

/// Probes the other nodes' edge subjects every [`PROBE_EVERY`] until shutdown
/// ([`GoneEdges`]).
async fn probe_edges(state: NodeState) {
    let mut tick = tokio::time::interval(PROBE_EVERY);
    let shutdown = state.shutdown_token();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = shutdown.cancelled() => return,
        }
        let Some(cluster) = state.cluster() else {
            return;
        };
        let client = cluster.bus.client();
        let probes = cluster
            .routing
            .gone_edges
            .others()
            .into_iter()
            .map(|id| async move {
                let node = crate::NodeId::new(&id).ok()?;
                let request = async_nats::Request::new().timeout(Some(PROBE_WAIT));
                match client
                    .send_request(cluster.bus.edge_subject(&node), request)
                    .await
                {
                    Err(e) if e.kind() == async_nats::RequestErrorKind::NoResponders => Some(id),
                    _ => None,
                }
            });
        let gone: HashSet<String> = futures_util::future::join_all(probes)
            .await
            .into_iter()
            .flatten()
            .collect();
        cluster.routing.gone_edges.set(gone);
    }
}

impl std::fmt::Debug for Routing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routing").finish_non_exhaustive()
    }
}

impl Routing {
    fn cells(&self) -> MutexGuard<'_, HashMap<ConnId, RouteCell>> {
        self.cells.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn served(&self) -> MutexGuard<'_, HashMap<String, u64>> {
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
    fn begin_serving(&self, code: &str, token: u64) {
        self.served().insert(code.to_owned(), token);
    }

    fn end_serving(&self, code: &str, token: u64) {
        let mut served = self.served();
        if served.get(code) == Some(&token) {
            served.remove(code);
        }
    }
}

/// Starts the node's routing: the edge dispatcher on `P.edge.<me>`, the `P.moved` and
/// `P.lobby` subscribers. Returns once they are subscribed. Nothing without cluster mode.
///
/// # Errors
/// NATS refused a subscription.
pub async fn start(state: &NodeState) -> Result<(), async_nats::SubscribeError> {
    let Some(cluster) = state.cluster() else {
        return Ok(());
    };
    let client = cluster.bus.client();
    let node = cluster.node().clone();
    let mut edge_sub = client.subscribe(cluster.bus.edge_subject(&node)).await?;
    let mut moved_sub = client.subscribe(cluster.bus.moved_subject()).await?;
    let lobby_sub = client.subscribe(cluster.bus.lobby_subject()).await?;
    let _ = client.flush().await;
    let span = tracing::info_span!("routing", node = %node);
    let s = state.clone();
    tokio::spawn(
        async move {
            while let Some(msg) = edge_sub.next().await {
                edge::on_edge_message(&s, msg);
            }
        }
        .instrument(span.clone()),
    );
    let s = state.clone();
    tokio::spawn(
        async move {
            while let Some(msg) = moved_sub.next().await {
                match serde_json::from_slice::<wire::Moved>(&msg.payload) {
                    Ok(m) if m.v == wire::WIRE_VERSION => {
                        info!(room = %m.room, owner = %m.node, epoch = m.epoch, "room moved");
                        edge::on_moved(&s, &m.room, &m.node);
                    }
                    _ => warn!("unreadable moved notice"),
                }
            }
        }
        .instrument(span.clone()),
    );
    let s = state.clone();
    tokio::spawn(
        async move {
            // Commands whose owner went silent after taking them get their one reply.
            let mut tick = tokio::time::interval(edge::REPLY_SWEEP);
            let shutdown = s.shutdown_token();
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    () = shutdown.cancelled() => return,
                }
                if let Some(c) = s.cluster() {
                    c.routing.edge.answer_overdue(parchis_room::now_ms());
                }
            }
        }
        .instrument(span.clone()),
    );
    tokio::spawn(probe_edges(state.clone()).instrument(span.clone()));
    tokio::spawn(lobby::respond(state.clone(), lobby_sub).instrument(span));
    info!(node = %node, "routing started");
    Ok(())
}

/// Serves `P.room.<CODE>` for the room of `handle`, which starts running on this node:
/// returns once the subscription is on the NATS server (subscribe, then a round trip:
/// [`crate::Bus::round_trip`]), so a
/// creation answered or a `moved` notice sent after it never finds the subject unserved.
/// The service then runs until the room's actor ends. Nothing without cluster mode.
///
/// Called by the room's actor as it starts, and by nobody else.
///
/// # Errors
/// NATS refused the subscription or did not confirm it.
pub async fn serve_room(state: &NodeState, handle: &RoomHandle) -> Result<(), ServeError> {
    let Some(cluster) = state.cluster() else {
        return Ok(());
    };
    let client = cluster.bus.client();
    let code = handle.code().to_owned();
    let sub = client
        .subscribe(cluster.bus.room_subject(&code))
        .await
        .map_err(|e| ServeError(e.to_string()))?;
    cluster.bus.round_trip().await.map_err(ServeError)?;
    let token = state.next_id();
    cluster.routing.begin_serving(&code, token);
    info!(room = %code, node = %cluster.node(), "serving the room's subject");
    let span = tracing::info_span!("room_service", node = %cluster.node(), room = %code);
    tokio::spawn(service::serve(state.clone(), handle.clone(), sub, token).instrument(span));
    Ok(())
}

/// The room's subject could not be served (NATS).
#[derive(Debug, thiserror::Error)]
#[error("could not serve the room's subject: {0}")]
pub struct ServeError(String);

/// Publishes `P.moved` for room `code`, which this node took over (claim or adoption) at
/// lease `epoch` and already serves ([`serve_room`] ran as its actor started), so edges
/// reattach their connections here.
pub async fn announce_moved(state: &NodeState, code: &str, epoch: i64) {
    if let Some(cluster) = state.cluster() {
        service::publish_moved(cluster.clone(), code.to_owned(), epoch).await;
    }
}

/// Moves the local connections of room `code`, which stopped on this node, to its new
/// owner: they become relayed connections (their sessions' routes turn
/// [`Route::Remote`]) and reattach with what they were and their last `seq`; the clients
/// do not reconnect. Until a node serves the room they wait (for its `moved` notice, up
/// to [`edge::REATTACH_WINDOW`]), then are closed with 1012.
pub fn rehome(state: &NodeState, code: &str, conns: Vec<Rehomed>) {
    let Some(cluster) = state.cluster() else {
        for c in conns {
            c.link.kick.kick(
                parchis_protocol::close_code::SERVICE_RESTART,
                "the room moved: reconnect and resume",
            );
        }
        return;
    };
    for c in conns {
        let conn = c.link.id;
        let cell = cluster.routing.cells().get(&conn).cloned();
        let Some(cell) = cell else {
            continue;
        };
        *cell.lock().unwrap_or_else(|e| e.into_inner()) = Route::Remote;
        let gen = state.next_id();
        cluster
            .routing
            .edge
            .register(c.link, code, gen, c.last_seq, Some(c.reattach));
        info!(node = %cluster.node(), room = code, conn, last_seq = c.last_seq, "local connection rehomed");
        reattach::start_reattach(state, conn, "rehome");
    }
}

/// The public state of room `code` from its owner on another node (`None`: nobody
/// serves it).
pub async fn view(state: &NodeState, code: &str) -> Option<parchis_protocol::RoomView> {
    let body = ask::ask(state, code, None, wire::RoomOp::View).await.ok()?;
    serde_json::from_slice(&body).ok()
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
