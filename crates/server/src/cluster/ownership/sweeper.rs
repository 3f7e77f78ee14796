//! The sweeper (`docs/CLUSTER.md`, "Failover"): every `sweep-ms`, or at once when woken
//! ([`super::wake_sweeper`]), claims rooms whose lease expired (or that have none) with
//! `claim_expired` (`FOR UPDATE SKIP LOCKED`, so nodes split the work) and brings each
//! one up through the restart's restore ([`super::takeover`]).
//!
//! Spread: one tick claims at most this node's share of the rooms the dead nodes held
//! ([`claim_limit`]), so several live nodes share a dead node's rooms instead of the first
//! sweeper taking them all. Failover bound with the defaults: TTL 3 s + one sweep 0.5 s +
//! the restore.

use super::observe::How;
use super::{ownership, takeover, ttl_ms};
use crate::state::AppState;
use futures_util::StreamExt;
use parchis_store::NodeInfo;
use std::time::Duration;

/// The fewest rooms one tick may claim (rooms without a lease, or of nodes that never
/// sent a heartbeat, are found this many at a time).
pub const MIN_CLAIM: u32 = 8;
/// The most rooms one tick claims.
pub const MAX_CLAIM: u32 = 1024;
/// A node whose last heartbeat is older than this is long gone: its rooms were claimed
/// already and no longer count for the spread.
pub const ORPHAN_WINDOW_MS: i64 = 60_000;
/// Claimed rooms restored at once.
const RESTORES_AT_ONCE: usize = 16;
/// Sweeps are at least this far apart, however often the sweeper is woken.
const MIN_GAP: Duration = Duration::from_millis(50);

/// How many rooms one tick of node `me` may claim: its share of the rooms the dead nodes
/// held at their last heartbeat, `ceil(orphans / live nodes)`, at least [`MIN_CLAIM`], at
/// most [`MAX_CLAIM`] and never more than `free` (the rooms it may still hold).
///
/// `nodes` are the heartbeats of the last [`ORPHAN_WINDOW_MS`]; a node is live when seen
/// within `ttl_ms` (the lease TTL: a node silent that long has lost its leases) and not
/// draining; `me` always counts as live.
pub fn claim_limit(nodes: &[NodeInfo], me: &str, ttl_ms: i64, free: usize) -> u32 {
    let dead = |n: &NodeInfo| n.seen_ms_ago > ttl_ms && n.node_id != me;
    let orphans: u64 = nodes
        .iter()
        .filter(|n| dead(n))
        .map(|n| u64::from(n.rooms))
        .sum();
    let live = nodes
        .iter()
        .filter(|n| !dead(n) && !n.draining && n.node_id != me)
        .count() as u64
        + 1;
    let share = orphans
        .div_ceil(live)
        .clamp(u64::from(MIN_CLAIM), u64::from(MAX_CLAIM));
    let free = u64::try_from(free).unwrap_or(u64::MAX);
    u32::try_from(share.min(free)).unwrap_or(MAX_CLAIM)
}

/// The sweeper task; ends at shutdown. A draining node claims nothing.
pub async fn sweeper(state: AppState) {
    let (Some(cluster), Some(own)) = (state.cluster().cloned(), ownership(&state)) else {
        return;
    };
    let shutdown = state.shutdown_token();
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tokio::time::sleep(cluster.config.sweep) => {}
            _ = own.wake.notified() => {}
        }
        if own.is_draining() {
            continue;
        }
        // A full batch: more may be waiting (rooms without a lease are not in the
        // heartbeats' count), so sweep again at once.
        loop {
            let (claimed, limit) = sweep(&state).await;
            if claimed > 0 {
                tracing::info!(node = %cluster.node(), claimed, "sweeper took rooms over");
            }
            tokio::time::sleep(MIN_GAP).await;
            if claimed < limit || own.is_draining() || shutdown.is_cancelled() {
                break;
            }
        }
    }
}

/// One sweep: claims this node's share of the expired or unowned rooms and brings them
/// up. Returns how many it claimed and how many it could have (0, 0 when it could not
/// ask).
pub async fn sweep(state: &AppState) -> (usize, usize) {
    let Some(cluster) = state.cluster() else {
        return (0, 0);
    };
    let node = cluster.node().as_str();
    let ttl = ttl_ms(cluster);
    let free = state.config().max_rooms.saturating_sub(state.room_count());
    let nodes = match state.store().live_nodes(ORPHAN_WINDOW_MS).await {
        Ok(nodes) => nodes,
        Err(e) => {
            tracing::warn!(node, error = %e, "sweeper could not read the nodes");
            return (0, 0);
        }
    };
    let limit = claim_limit(&nodes, node, ttl, free);
    if limit == 0 {
        return (0, 0);
    }
    let fences = match state.store().claim_expired(node, ttl, limit).await {
        Ok(fences) => fences,
        Err(e) => {
            tracing::warn!(node, error = %e, "sweeper could not claim rooms");
            return (0, 0);
        }
    };
    if let Some(own) = ownership(state) {
        // Renewed from now on, while they are restored.
        for fence in &fences {
            own.hold(fence.clone());
        }
    }
    let claimed = fences.len();
    futures_util::stream::iter(fences)
        .for_each_concurrent(RESTORES_AT_ONCE, |fence| async move {
            takeover::bring_up(state, fence, How::Claimed).await;
        })
        .await;
    (claimed, limit as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, rooms: u32, seen_ms_ago: i64, draining: bool) -> NodeInfo {
        NodeInfo {
            node_id: id.into(),
            rooms,
            draining,
            seen_ms_ago,
        }
    }

    #[test]
    fn live_nodes_share_a_dead_nodes_rooms() {
        // c died with 300 rooms; a (me) and b are live: 150 each.
        let nodes = [
            node("a", 10, 200, false),
            node("b", 12, 900, false),
            node("c", 300, 4000, false),
        ];
        assert_eq!(claim_limit(&nodes, "a", 3000, 10_000), 150);
        // A draining node takes no share: a takes them all.
        let nodes = [
            node("a", 10, 200, false),
            node("b", 12, 900, true),
            node("c", 300, 4000, false),
        ];
        assert_eq!(claim_limit(&nodes, "a", 3000, 10_000), 300);
    }

    #[test]
    fn the_share_is_bounded() {
        let quiet = [node("a", 10, 200, false), node("b", 12, 900, false)];
        assert_eq!(claim_limit(&quiet, "a", 3000, 10_000), MIN_CLAIM);
        let huge = [node("a", 0, 0, false), node("z", 100_000, 5000, false)];
        assert_eq!(claim_limit(&huge, "a", 3000, 10_000), MAX_CLAIM);
        // Never more than the rooms this node may still hold.
        assert_eq!(claim_limit(&huge, "a", 3000, 5), 5);
        assert_eq!(claim_limit(&huge, "a", 3000, 0), 0);
    }

    #[test]
    fn me_is_live_even_without_a_fresh_heartbeat() {
        // My own row is stale (my heartbeat is late): my rooms are not orphans, and I
        // count once.
        let nodes = [node("a", 40, 5000, false), node("c", 30, 5000, false)];
        assert_eq!(claim_limit(&nodes, "a", 3000, 10_000), 30);
        assert_eq!(claim_limit(&[], "a", 3000, 10_000), MIN_CLAIM);
    }
}
