//! The public lobby across nodes (`docs/CLUSTER.md`, `P.lobby`): every node answers a
//! [`LobbyAsk`] with its local public rooms; the asker adds its own, waits for as many
//! answers as there are other live nodes or [`GATHER_WINDOW`], merges them (a room seen on
//! two nodes while it moves is listed once) and orders them as a single node does.
//!
//! The other nodes' answers are shared for [`SHARE_FOR`] by every listing of this node
//! (`table::Shared`; one gather at a time, the listings meanwhile wait for it), so a flood of
//! `GET /api/rooms` costs the other nodes and the store a bounded number of asks, not
//! one per request. The node's own rooms are read afresh for every listing.

use crate::links::wire::{self, LobbyAnswer, LobbyAsk, WIRE_VERSION};
use crate::state::NodeState;
use futures_util::StreamExt;
use parchis_protocol::RoomSummary;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tracing::debug;

/// The longest wait for the other nodes' answers.
pub const GATHER_WINDOW: Duration = Duration::from_millis(300);
/// How long the other nodes' answers serve this node's listings.
pub const SHARE_FOR: Duration = Duration::from_millis(500);

/// A node whose heartbeat is older than this is not waited for (ms; the store's clock).
const LIVE_NODE_AGE_MS: i64 = 10_000;

/// This node's own public rooms: lobbies, or (`playing`) games in progress that allow
/// spectators. Unordered.
pub fn local_rooms(state: &NodeState, playing: bool) -> Vec<RoomSummary> {
    state
        .all_rooms()
        .into_iter()
        .map(|h| h.listing())
        .filter(|l| {
            l.public
                && if playing {
                    l.status == parchis_protocol::RoomStatus::Playing && l.spectators_allowed
                } else {
                    l.status == parchis_protocol::RoomStatus::Lobby
                }
        })
        .map(|l| l.summary)
        .collect()
}

/// Orders a listing as `GET /api/rooms` does: oldest first, then by code.
pub fn order(rooms: &mut [RoomSummary]) {
    rooms.sort_by(|a, b| b.age_secs.cmp(&a.age_secs).then(a.code.cmp(&b.code)));
}

/// Merges this node's rooms with the other nodes' answers: each code once (the first
/// seen wins), ordered by [`order`].
pub fn merge(own: Vec<RoomSummary>, others: Vec<Vec<RoomSummary>>) -> Vec<RoomSummary> {
    let mut seen = HashSet::new();
    let mut rooms: Vec<RoomSummary> = own
        .into_iter()
        .chain(others.into_iter().flatten())
        .filter(|r| seen.insert(r.code.clone()))
        .collect();
    order(&mut rooms);
    rooms
}

/// Answers `P.lobby` asks until the subscription ends.
pub(super) async fn respond(state: NodeState, mut sub: async_nats::Subscriber) {
    while let Some(msg) = sub.next().await {
        let Some(cluster) = state.cluster() else {
            return;
        };
        let Ok(ask) = serde_json::from_slice::<LobbyAsk>(&msg.payload) else {
            continue;
        };
        if ask.v != WIRE_VERSION {
            continue;
        }
        let (Some(reply), false) = (msg.reply.clone(), ask.from == cluster.node().as_str()) else {
            continue;
        };
        let answer = LobbyAnswer {
            v: WIRE_VERSION,
            node: cluster.node().to_string(),
            rooms: local_rooms(&state, ask.playing),
        };
        let _ = cluster
            .bus
            .client()
            .publish(reply, wire::to_bytes(&answer))
            .await;
    }
}

/// How many other nodes to wait for: the store's live nodes; `None` (wait the whole
/// [`GATHER_WINDOW`]) when it cannot tell or knows of no other node.
async fn others_expected(state: &NodeState) -> Option<usize> {
    let me = state.cluster()?.node().to_string();
    match state.store().live_nodes(LIVE_NODE_AGE_MS).await {
        // No heartbeat of another node (yet): wait the whole window rather than ask
        // nobody.
        Ok(nodes) => Some(nodes.iter().filter(|n| n.node_id != me).count()).filter(|n| *n > 0),
        Err(e) => {
            debug!(error = %e, "live nodes unknown: the lobby waits its whole window");
            None
        }
    }
}

/// Every node's public rooms (see the module docs): this node's now, the others' as
/// gathered at most [`SHARE_FOR`] ago. Without cluster mode: this node's.
pub async fn gather(state: &NodeState, playing: bool) -> Vec<RoomSummary> {
    let Some(cluster) = state.cluster() else {
        return merge(local_rooms(state, playing), Vec::new());
    };
    let shared = &cluster.routing.lobby;
    let slot = if playing {
        &shared.playing
    } else {
        &shared.lobbies
    };
    let others = {
        // Held across the gather: the listings that come meanwhile wait for its answers.
        let mut last = slot.lock().await;
        match &*last {
            Some((at, rooms)) if at.elapsed() < SHARE_FOR => rooms.clone(),
            _ => {
                let at = Instant::now();
                let rooms = Arc::new(ask_others(state, playing).await);
                *last = Some((at, rooms.clone()));
                rooms
            }
        }
    };
    merge(local_rooms(state, playing), others.to_vec())
}

/// The other nodes' public rooms: one ask on `P.lobby`, answers for at most
/// [`GATHER_WINDOW`] or until every other live node answered.
async fn ask_others(state: &NodeState, playing: bool) -> Vec<Vec<RoomSummary>> {
    let Some(cluster) = state.cluster() else {
        return Vec::new();
    };
    let expected = others_expected(state).await;
    let client = cluster.bus.client();
    let inbox = client.new_inbox();
    let Ok(mut answers) = client.subscribe(inbox.clone()).await else {
        return Vec::new();
    };
    let ask = LobbyAsk {
        v: WIRE_VERSION,
        playing,
        from: cluster.node().to_string(),
    };
    if client
        .publish_with_reply(cluster.bus.lobby_subject(), inbox, wire::to_bytes(&ask))
        .await
        .is_err()
    {
        return Vec::new();
    }
    let mut others = Vec::new();
    let mut nodes = HashSet::new();
    let _ = tokio::time::timeout(GATHER_WINDOW, async {
        while let Some(msg) = answers.next().await {
            if let Ok(a) = serde_json::from_slice::<LobbyAnswer>(&msg.payload) {
                if a.v == WIRE_VERSION && nodes.insert(a.node) {
                    others.push(a.rooms);
                }
            }
            if expected.is_some_and(|n| nodes.len() >= n) {
                break;
            }
        }
    })
    .await;
    let _ = answers.unsubscribe().await;
    others
}

#[cfg(test)]
mod tests {
    use super::*;
    use parchis_protocol::RoomStatus;

    fn room(code: &str, age: u64) -> RoomSummary {
        serde_json::from_value(serde_json::json!({
            "code": code, "status": RoomStatus::Lobby, "preset": "online", "seats": 4,
            "taken": 1, "free": 3, "free_colours": ["red"], "age_secs": age,
            "turn_clock_secs": 15, "spectators": 0, "spectators_allowed": true
        }))
        .unwrap_or_else(|e| panic!("summary: {e}"))
    }

    #[test]
    fn rooms_of_every_node_are_merged_once_and_ordered_oldest_first() {
        let merged = merge(
            vec![room("BBBB", 5), room("CCCC", 9)],
            vec![
                vec![room("AAAA", 9), room("BBBB", 5)],
                vec![room("DDDD", 1)],
            ],
        );
        let codes: Vec<&str> = merged.iter().map(|r| r.code.as_str()).collect();
        assert_eq!(codes, vec!["AAAA", "CCCC", "BBBB", "DDDD"]);
    }
}
