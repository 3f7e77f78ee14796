//! The sweeper (`docs/CLUSTER.md`, "Failover"): every `sweep-ms`, or at once when woken
//! (`NodeState::wake_sweeper`), claims rooms whose lease expired (or that have none) with
//! `claim_expired` (`FOR UPDATE SKIP LOCKED`, so nodes split the work) and brings each
//! one up through the restart's restore ([`super::takeover`]).
//!
//! Spread: one tick claims at most this node's share of the rooms the dead nodes held
//! ([`plan`]), so several live nodes share a dead node's rooms instead of the first
//! sweeper taking them all. Failover bound with the defaults: TTL 3 s + one sweep 0.5 s +
//! the restore.
//!
//! Load shedding (`docs/CLUSTER.md`, "Load shedding"): a node that sheds load claims
//! nothing while another live node does not shed (the dead nodes' rooms go to the nodes
//! able to carry them), unless rooms have waited [`DEFER_TTLS`] TTLs beyond their
//! expiry (seen from a dead node's heartbeat, or from the lease that expired longest ago:
//! a node dead for longer than [`ORPHAN_WINDOW_MS`] is no longer in the heartbeats read);
//! when every live node sheds, each claims at most [`SHEDDING_CLAIM`] rooms per
//! `sweep-ms`, so the rooms still come back, slowly.

use super::observe::How;
use super::takeover;
use crate::state::NodeState;
use futures_util::StreamExt;
use parchis_store::NodeInfo;
use std::time::Duration;

/// The fewest rooms one tick may claim (rooms without a lease, or of nodes that never
/// sent a heartbeat, are found this many at a time).
pub const MIN_CLAIM: u32 = 8;
/// The most rooms one tick claims.
pub const MAX_CLAIM: u32 = 1024;
/// The most rooms one tick of a node that sheds load claims (and it sweeps again no
/// sooner than `sweep-ms` later, however often it is woken): 16 rooms a second per node
/// at the default 500 ms.
pub const SHEDDING_CLAIM: u32 = 8;
/// A shedding node leaves a dead node's rooms to the nodes that do not shed until the
/// dead node has been silent for this many TTLs beyond the one its leases lasted (6 s at
/// the defaults, past the normal failover bound): then the others did not take them
/// (full, or stuck), and it claims them at [`SHEDDING_CLAIM`] a tick.
pub const DEFER_TTLS: i64 = 2;
/// A node whose last heartbeat is older than this is long gone: its rooms were claimed
/// already and no longer count for the spread.
pub const ORPHAN_WINDOW_MS: i64 = 60_000;
/// Claimed rooms restored at once.
const RESTORES_AT_ONCE: usize = 16;
/// Sweeps are at least this far apart, however often the sweeper is woken.
const MIN_GAP: Duration = Duration::from_millis(50);

/// What one sweep of a node may claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    /// The most rooms it claims (0: it does not ask).
    pub limit: u32,
    /// Whether a sweep that claimed a full batch runs again at once (more may wait);
    /// `false` for a node that sheds load: its next sweep is a whole `sweep-ms` later.
    pub burst: bool,
}

/// What one sweep of node `me` may claim: its share of the rooms the dead nodes held at
/// their last heartbeat, `ceil(orphans / claiming nodes)`, at least [`MIN_CLAIM`], at
/// most [`MAX_CLAIM`] and never more than `free` (the rooms it may still hold).
///
/// `nodes` are the heartbeats of the last [`ORPHAN_WINDOW_MS`]; a node is live when seen
/// within `ttl_ms` (the lease TTL: a node silent that long has lost its leases) and
/// claims when live and not draining; `me` always counts as live. `shedding`: whether
/// `me` sheds load now (its heartbeat may be behind). `expired_ms`: how long the
/// claimable lease that expired longest ago has been expired (0: none, or not read; only
/// a shedding node reads it, [`parchis_store::Store::longest_expired_ms`]).
///
/// * `me` does not shed: the claiming nodes are `me` and the others that do not shed
///   (those that shed leave the rooms to them); a full batch is swept again at once.
/// * `me` sheds and another claiming node does not: nothing, unless a dead node with
///   rooms has been silent longer than `ttl_ms * (1 + DEFER_TTLS)` or a lease has been
///   expired longer than `ttl_ms * DEFER_TTLS` (the others left it: full, stuck, or its
///   node is dead for longer than the heartbeats read); then [`SHEDDING_CLAIM`].
/// * every claiming node sheds: [`SHEDDING_CLAIM`] (no share: it is no more than
///   [`MIN_CLAIM`]).
///
/// Never more than `free`. A shedding node's full batch is not swept again at once.
pub fn plan(
    nodes: &[NodeInfo],
    me: &str,
    shedding: bool,
    expired_ms: i64,
    ttl_ms: i64,
    free: usize,
) -> Claim {
    let dead = |n: &NodeInfo| n.seen_ms_ago > ttl_ms && n.node_id != me;
    let orphans: u64 = nodes
        .iter()
        .filter(|n| dead(n))
        .map(|n| u64::from(n.rooms))
        .sum();
    let accepting = nodes
        .iter()
        .filter(|n| !dead(n) && !n.draining && !n.shedding && n.node_id != me)
        .count() as u64;
    let free = u64::try_from(free).unwrap_or(u64::MAX);
    let at_most = |n: u64| u32::try_from(n.min(free)).unwrap_or(MAX_CLAIM);
    if !shedding {
        let share = orphans
            .div_ceil(accepting + 1)
            .clamp(u64::from(MIN_CLAIM), u64::from(MAX_CLAIM));
        return Claim {
            limit: at_most(share),
            burst: true,
        };
    }
    let waited = || {
        let defer = ttl_ms.saturating_mul(1 + DEFER_TTLS);
        expired_ms > ttl_ms.saturating_mul(DEFER_TTLS)
            || nodes
                .iter()
                .any(|n| dead(n) && n.rooms > 0 && n.seen_ms_ago > defer)
    };
    let limit = if accepting == 0 || waited() {
        at_most(u64::from(SHEDDING_CLAIM))
    } else {
        0
    };
    Claim {
        limit,
        burst: false,
    }
}

/// Whether a sweep that claimed `claimed` rooms with `claim` runs again at once: it
/// claimed a full batch (more may wait) and bursts. A sweep that could not ask (limit 0:
/// the store failed, or the node may hold no more rooms) waits for the next `sweep-ms`.
pub fn again(claimed: usize, claim: Claim) -> bool {
    claim.burst && claim.limit > 0 && claimed >= claim.limit as usize
}

/// The sweeper task; ends at shutdown. A draining node claims nothing.
pub async fn sweeper(state: NodeState) {
    let (Some(cluster), Some(own)) = (state.cluster().cloned(), state.ownership()) else {
        return;
    };
    let shutdown = state.shutdown_token();
    // After a shedding node's sweep: no other before this (a wake-up waits for it).
    let mut not_before: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tokio::time::sleep(cluster.config.sweep) => {}
            _ = own.wake.notified() => {}
        }
        if let Some(at) = not_before.take() {
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = tokio::time::sleep_until(at) => {}
            }
        }
        if own.is_draining() || !cluster.bus.is_connected() {
            // Without NATS a node could not serve what it takes (`partition`).
            continue;
        }
        // A full batch: more may be waiting (rooms without a lease are not in the
        // heartbeats' count), so sweep again at once, unless this node sheds load.
        loop {
            let (claimed, claim) = sweep(&state).await;
            if claimed > 0 {
                tracing::info!(
                    node = %cluster.node(),
                    claimed,
                    shedding = !claim.burst,
                    "sweeper took rooms over"
                );
            }
            if !claim.burst {
                not_before = Some(tokio::time::Instant::now() + cluster.config.sweep);
                break;
            }
            tokio::time::sleep(MIN_GAP).await;
            if !again(claimed, claim) || own.is_draining() || shutdown.is_cancelled() {
                break;
            }
        }
    }
}

/// One sweep: claims this node's share of the expired or unowned rooms ([`plan`]) and
/// brings them up. Returns how many it claimed and the plan (a zero limit when it could
/// not ask).
pub async fn sweep(state: &NodeState) -> (usize, Claim) {
    let nothing = Claim {
        limit: 0,
        burst: false,
    };
    let Some(cluster) = state.cluster() else {
        return (0, nothing);
    };
    let shedding = state.ownership().is_some_and(|o| o.load.is_shedding());
    let nothing = Claim {
        burst: !shedding,
        ..nothing
    };
    let node = cluster.node().as_str();
    let ttl = cluster.ttl_ms();
    let free = state
        .rooms()
        .config()
        .max_rooms
        .saturating_sub(state.room_count());
    let nodes = match state.store().live_nodes(ORPHAN_WINDOW_MS).await {
        Ok(nodes) => nodes,
        Err(e) => {
            tracing::warn!(node, error = %e, "sweeper could not read the nodes");
            return (0, nothing);
        }
    };
    // The nodes whose edge subscriptions are probed (routing::GoneEdges).
    cluster.routing.gone_edges.note(&nodes, node);
    // A shedding node also looks at the leases: rooms of a node dead for longer than the
    // heartbeats read wait there (one indexed read per sweep, only while it sheds).
    let expired_ms = if shedding {
        match state.store().longest_expired_ms().await {
            Ok(ms) => ms.unwrap_or(0),
            Err(e) => {
                tracing::warn!(node, error = %e, "sweeper could not read the expired leases");
                0
            }
        }
    } else {
        0
    };
    let claim = plan(&nodes, node, shedding, expired_ms, ttl, free);
    if claim.limit == 0 {
        return (0, claim);
    }
    let fences = match state.store().claim_expired(node, ttl, claim.limit).await {
        Ok(fences) => fences,
        Err(e) => {
            tracing::warn!(node, error = %e, "sweeper could not claim rooms");
            return (0, nothing);
        }
    };
    if let Some(own) = state.ownership() {
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
    (claimed, claim)
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

    fn shedding(n: NodeInfo) -> NodeInfo {
        NodeInfo {
            shedding: true,
            ..n
        }
    }

    /// The limit of a node that does not shed (its batches are swept again at once).
    fn claim_limit(nodes: &[NodeInfo], me: &str, ttl_ms: i64, free: usize) -> u32 {
        let claim = plan(nodes, me, false, 0, ttl_ms, free);
        assert!(claim.burst, "{claim:?}");
        claim.limit
    }

    /// The limit of a node that sheds (never swept again at once).
    fn shedding_limit(nodes: &[NodeInfo], me: &str, ttl_ms: i64, free: usize) -> u32 {
        let claim = plan(nodes, me, true, 0, ttl_ms, free);
        assert!(!claim.burst, "{claim:?}");
        claim.limit
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

    #[test]
    fn a_shedding_node_leaves_the_rooms_to_a_node_that_does_not_shed() {
        // c died with 300 rooms; b sheds, a does not: a takes them all, b none.
        let nodes = [
            node("a", 10, 200, false),
            shedding(node("b", 12, 900, false)),
            node("c", 300, 4000, false),
        ];
        assert_eq!(claim_limit(&nodes, "a", 3000, 10_000), 300);
        assert_eq!(shedding_limit(&nodes, "b", 3000, 10_000), 0);
        // Nor rooms without a lease or of nodes never seen (no dead node at all).
        let quiet = [node("a", 10, 200, false), node("b", 12, 900, false)];
        assert_eq!(shedding_limit(&quiet, "b", 3000, 10_000), 0);
        // b's own row may be behind (not shedding yet): it still defers to a.
        let behind = [
            node("a", 10, 200, false),
            node("b", 12, 900, false),
            node("c", 300, 4000, false),
        ];
        assert_eq!(shedding_limit(&behind, "b", 3000, 10_000), 0);
        // a draining node claims nothing: it is no reason to defer.
        let draining = [
            node("a", 10, 200, true),
            shedding(node("b", 12, 900, false)),
            node("c", 300, 4000, false),
        ];
        assert_eq!(shedding_limit(&draining, "b", 3000, 10_000), SHEDDING_CLAIM);
        // Nor is a node silent for longer than the TTL (dead itself).
        let silent = [
            node("a", 10, 3001, false),
            shedding(node("b", 12, 900, false)),
        ];
        assert_eq!(shedding_limit(&silent, "b", 3000, 10_000), SHEDDING_CLAIM);
    }

    #[test]
    fn when_every_live_node_sheds_each_claims_a_few_rooms_per_sweep() {
        let nodes = [
            shedding(node("a", 10, 200, false)),
            shedding(node("b", 12, 900, false)),
            node("c", 300, 4000, false),
        ];
        assert_eq!(shedding_limit(&nodes, "a", 3000, 10_000), SHEDDING_CLAIM);
        assert_eq!(shedding_limit(&nodes, "b", 3000, 10_000), SHEDDING_CLAIM);
        // Also with nothing known dead (rooms without a lease), and alone.
        assert_eq!(
            shedding_limit(&nodes[..2], "a", 3000, 10_000),
            SHEDDING_CLAIM
        );
        assert_eq!(shedding_limit(&[], "a", 3000, 10_000), SHEDDING_CLAIM);
        // Still within the rooms it may hold.
        assert_eq!(shedding_limit(&nodes, "a", 3000, 3), 3);
        assert_eq!(shedding_limit(&nodes, "a", 3000, 0), 0);
        // A node that does not shed still takes its share at once: b's and c's sheds
        // leave the whole 300 to it.
        assert_eq!(claim_limit(&nodes, "a", 3000, 10_000), 300);
    }

    #[test]
    fn a_shedding_node_takes_rooms_the_others_left_waiting() {
        // c died 3 TTLs ago (its leases expired 2 TTLs ago): a does not shed but has not
        // taken them (full, or stuck). b helps, at the shedding rate.
        let waiting = |seen: i64| {
            [
                node("a", 10, 200, false),
                shedding(node("b", 12, 900, false)),
                node("c", 300, seen, false),
            ]
        };
        assert_eq!(shedding_limit(&waiting(9000), "b", 3000, 10_000), 0);
        assert_eq!(
            shedding_limit(&waiting(9001), "b", 3000, 10_000),
            SHEDDING_CLAIM
        );
        // A dead node that held no room is no reason.
        let empty = [
            node("a", 10, 200, false),
            shedding(node("b", 12, 900, false)),
            node("c", 0, 50_000, false),
        ];
        assert_eq!(shedding_limit(&empty, "b", 3000, 10_000), 0);
    }

    #[test]
    fn only_a_full_batch_is_swept_again_at_once() {
        let claim = |limit, burst| Claim { limit, burst };
        assert!(again(8, claim(8, true)));
        assert!(!again(7, claim(8, true)));
        // A shedding node's full batch waits too.
        assert!(!again(8, claim(8, false)));
        // Nothing asked (the store failed, or no room free): it waits for the next
        // sweep-ms instead of asking again every 50 ms.
        assert!(!again(0, claim(0, true)));
        // A full node's plan: nothing to ask until a room is free.
        let full = plan(&[node("c", 300, 4000, false)], "a", false, 0, 3000, 0);
        assert_eq!(full.limit, 0);
        assert!(!again(0, full));
    }

    #[test]
    fn a_shedding_node_takes_leases_left_expired_after_their_node_left_the_heartbeats() {
        // a does not shed (but is full, or stuck); the node that held the rooms died more
        // than ORPHAN_WINDOW_MS ago, so it is not among the heartbeats read. Its leases
        // have been expired for a minute: b claims them at the shedding rate.
        let nodes = [
            node("a", 10, 200, false),
            shedding(node("b", 12, 900, false)),
        ];
        let with = |expired_ms, free| plan(&nodes, "b", true, expired_ms, 3000, free);
        let expect = |limit| Claim {
            limit,
            burst: false,
        };
        assert_eq!(with(60_000, 10_000), expect(SHEDDING_CLAIM));
        assert_eq!(with(6001, 10_000), expect(SHEDDING_CLAIM));
        assert_eq!(with(60_000, 2), expect(2));
        // Expired for no more than DEFER_TTLS TTLs: a still has the time to take them.
        assert_eq!(with(6000, 10_000), expect(0));
        assert_eq!(with(0, 10_000), expect(0));
        // A node that does not shed ignores it (it claims its share anyway).
        assert_eq!(
            plan(&nodes, "a", false, 60_000, 3000, 10_000),
            plan(&nodes, "a", false, 0, 3000, 10_000)
        );
    }
}
