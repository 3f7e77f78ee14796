//! The SIGTERM hand-off (`docs/CLUSTER.md`, "Drain"): the node marks itself draining (new
//! rooms go elsewhere, its sweeper claims nothing); each room, between two inputs,
//! writes nothing more, deregisters and releases its lease (`Owned::hand_off`: a
//! room's `Handoff`); the
//! live non-draining node with the fewest rooms, among those that do not shed load if
//! any ([`Targets`]), is asked to `adopt` it (acquire at once, restore, serve); the room's local connections are then moved there
//! ([`routing::rehome`]). A node that sheds load (or is full) refuses the adoption
//! `server_full` and is asked no more before the others; a room nobody adopts (at most
//! two nodes asked) keeps its lease released: a sweeper takes it at its next tick (when
//! every node sheds, a few rooms per sweep each: `sweeper::plan`). Nobody waits for a
//! lease to expire; no game waits longer than one throw.

use super::node::{self, NodeReply, NodeRequest};
use super::observe;
use crate::owned::Owned;
use crate::routing;
use crate::state::NodeState;
use crate::NodeId;
use futures_util::StreamExt;
use parchis_protocol::ErrorCode;
use parchis_store::NodeInfo;
use std::collections::HashMap;
use std::sync::Mutex;

/// Rooms handed off at once.
const AT_ONCE: usize = 8;

/// What a drain did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Drained {
    /// Rooms that stopped here and released their lease.
    pub handed: usize,
    /// Of those, rooms another node adopted at once.
    pub adopted: usize,
    /// Rooms still running here when the drain ended (timed out).
    pub left: usize,
}

/// A node that may adopt a room: its id, its rooms and whether it sheds load.
pub type Target = (String, u32, bool);

/// The nodes a drain may hand rooms to: the others seen within `max_age_ms` (the lease
/// TTL) and not draining, with their rooms and whether they shed load. A node that sheds
/// is a target too (a room nobody adopts waits for a sweeper), but the last choice
/// ([`Targets::pick`]).
pub fn targets(nodes: &[NodeInfo], me: &str, max_age_ms: i64) -> Vec<Target> {
    nodes
        .iter()
        .filter(|n| n.node_id != me && !n.draining && n.seen_ms_ago <= max_age_ms)
        .map(|n| (n.node_id.clone(), n.rooms, n.shedding))
        .collect()
}

/// The adoption targets: node → (sheds load, rooms), kept up to date as rooms are
/// handed off, so that the hand-offs spread (nodes that do not shed first, then fewest
/// rooms first).
#[derive(Debug, Default)]
pub struct Targets(Mutex<HashMap<String, (bool, u32)>>);

impl Targets {
    /// Targets with these room counts and shedding flags.
    pub fn new(targets: impl IntoIterator<Item = Target>) -> Targets {
        Targets(Mutex::new(
            targets
                .into_iter()
                .map(|(id, rooms, shedding)| (id, (shedding, rooms)))
                .collect(),
        ))
    }

    /// The node not in `tried` that does not shed load, else one that does, with the
    /// fewest rooms (then by id); counted as one room more from now on.
    pub fn pick(&self, tried: &[String]) -> Option<String> {
        let mut counts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let best = counts
            .iter()
            .filter(|(n, _)| !tried.contains(n))
            .min_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(b.0)))
            .map(|(n, _)| n.clone())?;
        if let Some((_, c)) = counts.get_mut(&best) {
            *c += 1;
        }
        Some(best)
    }

    /// Node `id` refused an adoption (`server_full`: it is full or sheds load, whatever
    /// its heartbeat said): from now on it is picked only after the nodes that do not
    /// shed, like a node that sheds.
    pub fn refused(&self, id: &str) {
        let mut counts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((shedding, _)) = counts.get_mut(id) {
            *shedding = true;
        }
    }
}

/// Drains this node: every room handed off (or `--drain-timeout-secs` passed). The
/// caller then shuts the server down (remaining sockets closed with 1001).
pub async fn drain(state: &NodeState) -> Drained {
    let (Some(cluster), Some(own)) = (state.cluster(), state.ownership()) else {
        return Drained::default();
    };
    let started = std::time::Instant::now();
    let me = cluster.node().as_str();
    own.set_draining();
    node::beat(state).await;
    tracing::info!(node = me, rooms = state.kinds().count(), "draining");
    let nodes = match state.store().live_nodes(cluster.ttl_ms()).await {
        Ok(nodes) => nodes,
        Err(e) => {
            tracing::warn!(node = me, error = %e, "drain: nodes not read; rooms only released");
            Vec::new()
        }
    };
    let targets = Targets::new(targets(&nodes, me, cluster.ttl_ms()));
    let done = Mutex::new(Drained::default());
    let owned: Vec<(&dyn Owned, String)> = state
        .kinds()
        .all()
        .flat_map(|kind| kind.codes().into_iter().map(move |code| (kind, code)))
        .collect();
    let work = futures_util::stream::iter(owned).for_each_concurrent(AT_ONCE, |(kind, code)| {
        let (targets, done) = (&targets, &done);
        async move {
            // `None`: it ended otherwise (disposed) meanwhile.
            let Some(conns) = kind.hand_off(&code).await else {
                return;
            };
            let adopted = adopt(state, &code, targets).await;
            routing::rehome(state, &code, conns);
            let mut d = done.lock().unwrap_or_else(|e| e.into_inner());
            d.handed += 1;
            d.adopted += usize::from(adopted);
        }
    });
    let timed_out = tokio::time::timeout(cluster.config.drain_timeout, work)
        .await
        .is_err();
    let mut drained = *done.lock().unwrap_or_else(|e| e.into_inner());
    drained.left = state.kinds().count();
    if timed_out {
        tracing::warn!(node = me, left = drained.left, "drain timed out");
    }
    observe::drained(
        me,
        drained.handed,
        drained.adopted,
        drained.left,
        started.elapsed().as_secs_f64(),
    );
    drained
}

/// Asks the best target (then the next, once) to adopt room `code`. Returns whether one
/// did.
async fn adopt(state: &NodeState, code: &str, targets: &Targets) -> bool {
    let request = NodeRequest::Adopt {
        room: code.to_owned(),
    };
    let mut tried = Vec::new();
    while tried.len() < 2 {
        let Some(target) = targets.pick(&tried) else {
            break;
        };
        tried.push(target.clone());
        let Ok(to) = NodeId::new(&target) else {
            continue;
        };
        match node::ask(state, &to, &request).await {
            Ok(NodeReply::Adopted { epoch }) => {
                tracing::info!(room = code, to = %to, epoch, "room handed off");
                return true;
            }
            Ok(NodeReply::Refused { code: why, message }) => {
                if why == ErrorCode::ServerFull {
                    targets.refused(&target);
                }
                tracing::warn!(room = code, to = %to, code = why.as_str(), message, "adopt refused");
            }
            Ok(answer) => tracing::warn!(room = code, to = %to, answer = ?answer, "adopt refused"),
            Err(e) => tracing::warn!(room = code, to = %to, error = e, "adopt not answered"),
        }
    }
    tracing::warn!(
        room = code,
        "no node adopted the room: its lease stays released for a sweeper"
    );
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_offs_spread_over_the_least_loaded() {
        let t = Targets::new([
            ("b".to_owned(), 2, false),
            ("c".to_owned(), 0, false),
            ("d".to_owned(), 1, false),
        ]);
        let picks: Vec<String> = (0..5).filter_map(|_| t.pick(&[])).collect();
        // c (0), c again (ties d at 1, first by id), d (1), b (all at 2), c.
        assert_eq!(picks, vec!["c", "c", "d", "b", "c"]);
        assert_eq!(t.pick(&["b".into(), "c".into(), "d".into()]), None);
        assert_eq!(Targets::default().pick(&[]), None);
    }

    #[test]
    fn hand_offs_go_to_nodes_that_do_not_shed_first() {
        let node = |id: &str, rooms, draining, shedding, seen_ms_ago| NodeInfo {
            node_id: id.into(),
            rooms,
            draining,
            shedding,
            seen_ms_ago,
        };
        let nodes = [
            node("a", 0, false, false, 100),  // me
            node("b", 0, false, true, 100),   // sheds, fewest rooms
            node("c", 5, false, false, 100),  //
            node("d", 0, true, false, 100),   // draining
            node("e", 0, false, false, 9000), // not seen for too long
            node("f", 1, false, true, 100),   // sheds
        ];
        let t = Targets::new(targets(&nodes, "a", 3000));
        // c takes every room while it is there; the shedding ones only when it refused.
        assert_eq!(t.pick(&[]).as_deref(), Some("c"));
        assert_eq!(t.pick(&[]).as_deref(), Some("c"));
        assert_eq!(t.pick(&["c".into()]).as_deref(), Some("b"));
        assert_eq!(t.pick(&["c".into(), "b".into()]).as_deref(), Some("f"));
        // Among those that shed: fewest rooms (b 1, f 2), then by id (both at 2).
        assert_eq!(t.pick(&["c".into()]).as_deref(), Some("b"));
        assert_eq!(t.pick(&["c".into()]).as_deref(), Some("b"));
        assert_eq!(t.pick(&["c".into()]).as_deref(), Some("f"));
        assert!(targets(&nodes[..1], "a", 3000).is_empty());
    }

    #[test]
    fn a_node_that_refused_is_asked_after_the_others() {
        let t = Targets::new([("b".to_owned(), 0, false), ("c".to_owned(), 4, false)]);
        assert_eq!(t.pick(&[]).as_deref(), Some("b"));
        // b refused (it sheds load, its heartbeat did not say so yet): c first from now.
        t.refused("b");
        t.refused("nobody");
        assert_eq!(t.pick(&[]).as_deref(), Some("c"));
        assert_eq!(t.pick(&[]).as_deref(), Some("c"));
        assert_eq!(t.pick(&["c".into()]).as_deref(), Some("b"));
        // Both refused: fewest rooms again (b 2, c 6).
        t.refused("c");
        assert_eq!(t.pick(&[]).as_deref(), Some("b"));
    }
}
