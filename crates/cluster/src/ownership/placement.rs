//! Where a new room goes (`docs/CLUSTER.md`, "Placement"): on the node that got
//! `POST /api/rooms` unless it is draining, sheds load or holds `--max-rooms`; then on
//! the live node neither draining nor shedding with the fewest rooms (from the
//! `cluster_nodes` heartbeats), asked over NATS (`P.node.<NODE>` `create`). The choice is
//! a pure function of the heartbeats ([`candidates`]); the asking is at the edge
//! ([`create`]).

use super::node::{self, NodeReply, NodeRequest};

use crate::state::NodeState;
use crate::NodeId;
use parchis_protocol::{ErrorCode, RoomSettings};
use parchis_room::{self, Refusal};
use parchis_store::NodeInfo;

/// How many other nodes are asked, fewest rooms first, before the creation is refused.
pub const MAX_ASKED: usize = 3;

/// Whether a room is created on this node: it takes new rooms (`refusing`: it drains or
/// sheds load) and holds fewer than `max_rooms`.
pub fn create_here(refusing: bool, rooms: usize, max_rooms: usize) -> bool {
    !refusing && rooms < max_rooms
}

/// The other nodes that may take a new room, best first: seen within `max_age_ms` (the
/// lease TTL), neither draining nor shedding load, not `me`; fewest rooms first, then by
/// id.
pub fn candidates(nodes: &[NodeInfo], me: &str, max_age_ms: i64) -> Vec<String> {
    let mut fit: Vec<&NodeInfo> = nodes
        .iter()
        .filter(|n| n.node_id != me && !n.draining && !n.shedding && n.seen_ms_ago <= max_age_ms)
        .collect();
    fit.sort_by(|a, b| a.rooms.cmp(&b.rooms).then(a.node_id.cmp(&b.node_id)));
    fit.into_iter().map(|n| n.node_id.clone()).collect()
}

/// Creates a room in cluster mode: here when [`create_here`], else on the best of
/// [`candidates`] (at most [`MAX_ASKED`] asked in turn; each counts the room among
/// `client`'s open rooms and may refuse it for them). Returns its code.
///
/// # Errors
/// Those of [`parchis_room::create()`] for a room created here; `rate_limited` when this node may
/// not take it and another node refused it for `client`'s open rooms there (and none
/// took it); `server_full` when no other node took it otherwise.
pub async fn create(
    state: &NodeState,
    settings: RoomSettings,
    client: Option<std::net::IpAddr>,
) -> Result<String, Refusal> {
    let Some(cluster) = state.cluster() else {
        return parchis_room::create(state.rooms(), settings).await;
    };
    let refusing = state.ownership().is_some_and(|o| o.refuses_new_rooms());
    if create_here(
        refusing,
        state.room_count(),
        state.rooms().config().max_rooms,
    ) {
        return parchis_room::create(state.rooms(), settings).await;
    }
    if state.ownership().is_some_and(|o| o.load.is_shedding()) {
        metrics::counter!(parchis_telemetry::names::CREATIONS_SHED).increment(1);
    }
    let me = cluster.node().as_str();
    let nodes = state
        .store()
        .live_nodes(cluster.ttl_ms())
        .await
        .map_err(|e| {
            tracing::warn!(node = me, error = %e, "placement: nodes not read");
            Refusal::code(ErrorCode::Internal)
        })?;
    let request = NodeRequest::Create { settings, client };
    let mut limited = None;
    for other in candidates(&nodes, me, cluster.ttl_ms())
        .into_iter()
        .take(MAX_ASKED)
    {
        let Ok(to) = NodeId::new(&other) else {
            continue;
        };
        match node::ask(state, &to, &request).await {
            Ok(NodeReply::Created { code }) => {
                tracing::info!(node = me, room = %code, on = %to, "room placed on another node");
                return Ok(code);
            }
            Ok(NodeReply::Refused { code, message }) => {
                tracing::info!(node = me, on = %to, code = code.as_str(), message, "placement refused");
                if code == ErrorCode::RateLimited {
                    limited = Some(message);
                }
            }
            Ok(other) => {
                tracing::warn!(node = me, on = %to, answer = ?other, "placement: unexpected answer");
            }
            Err(e) => tracing::warn!(node = me, on = %to, error = e, "placement: no answer"),
        }
    }
    // The client's own rooms were the obstacle somewhere: that is what it can change.
    if let Some(message) = limited {
        return Err(Refusal::new(ErrorCode::RateLimited, message));
    }
    Err(Refusal::new(
        ErrorCode::ServerFull,
        "every node is full, draining or overloaded",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, rooms: u32, seen_ms_ago: i64, draining: bool) -> NodeInfo {
        NodeInfo {
            node_id: id.into(),
            rooms,
            draining,
            shedding: false,
            seen_ms_ago,
        }
    }

    #[test]
    fn here_unless_draining_or_full() {
        assert!(create_here(false, 0, 1));
        assert!(create_here(false, 9, 10));
        assert!(!create_here(false, 10, 10));
        assert!(!create_here(true, 0, 10));
    }

    #[test]
    fn the_fewest_rooms_first_among_live_undrained_others() {
        let nodes = [
            node("a", 0, 100, false),   // me
            node("b", 7, 100, false),   //
            node("c", 3, 100, true),    // draining
            node("d", 3, 100, false),   //
            node("e", 1, 9000, false),  // not seen for too long
            node("f", 3, 2999, false),  // ties with d: by id
            node("g", 12, 3000, false), // just within the age
            NodeInfo {
                shedding: true,
                ..node("h", 0, 100, false) // sheds load
            },
        ];
        assert_eq!(candidates(&nodes, "a", 3000), vec!["d", "f", "b", "g"]);
        assert!(candidates(&nodes[..1], "a", 3000).is_empty());
    }
}
