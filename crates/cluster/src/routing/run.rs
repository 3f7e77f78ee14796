//! What the routing does at the node's level: starts its subscriptions, probes the other
//! nodes' edges, serves a room's subject, announces a takeover, rehomes the connections
//! of a room that stopped here, and reads a remote room's view.

use super::{ask, edge, edge_in, lobby, reattach, service, wire};
use crate::links::table::{Route, PROBE_EVERY, PROBE_WAIT};
use crate::state::NodeState;
use futures_util::StreamExt;
use parchis_room::{Rehomed, RoomHandle};
use std::collections::HashSet;
use tracing::{info, warn, Instrument};

/// Probes the other nodes' edge subjects every [`PROBE_EVERY`] until shutdown
/// ([`GoneEdges`]).
pub(super) async fn probe_edges(state: NodeState) {
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

/// Follows the node's NATS connection: each time it comes back after a loss, every
/// relayed connection of this node reattaches (its owner may have found this edge gone
/// and detached it, and its `end` was lost with the connection; frames may have been lost
/// too), and every room this node owns is announced again (`moved` at its current
/// epoch), so the edges of its relayed connections reattach as well (frames this owner
/// published while it was cut off are lost). Ends at shutdown.
pub(super) async fn nats_back(state: NodeState) {
    let Some(cluster) = state.cluster().cloned() else {
        return;
    };
    let mut link = cluster.bus.link();
    let shutdown = state.shutdown_token();
    let mut seen = link.borrow_and_update().reconnects;
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            changed = link.changed() => if changed.is_err() { return },
        }
        let now = *link.borrow_and_update();
        if !now.connected || now.reconnects == seen {
            continue;
        }
        seen = now.reconnects;
        let relayed = cluster.routing.edge.conns();
        info!(node = %cluster.node(), relayed = relayed.len(), "NATS back: relayed connections reattach, owned rooms announced");
        for conn in relayed {
            reattach::start_reattach(&state, conn, "nats_back");
        }
        for fence in cluster.ownership.fences() {
            service::publish_moved(cluster.clone(), fence.room_code.clone(), fence.epoch).await;
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
                edge_in::on_edge_message(&s, msg);
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
                        edge_in::on_moved(&s, &m.room, &m.node, m.epoch);
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
    tokio::spawn(nats_back(state.clone()).instrument(span.clone()));
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
/// to [`super::reattach::REATTACH_WINDOW`]), then are closed with 1012; at once when this
/// node has no NATS connection.
pub fn rehome(state: &NodeState, code: &str, conns: Vec<Rehomed>) {
    // Without NATS (`ownership::partition` gave the room up) they could not follow it:
    // their clients reconnect to another node at once.
    let cluster = state.cluster().filter(|c| c.bus.is_connected());
    let Some(cluster) = cluster else {
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
