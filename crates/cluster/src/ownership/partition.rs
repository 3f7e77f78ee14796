//! An owner that reaches PostgreSQL but not NATS (`docs/CLUSTER.md`, "Partitions"): its
//! leases would stay renewed while no edge can reach its rooms, so every relayed client
//! would wait for the whole partition. Once the node's NATS connection has been lost for
//! [`bound`] (the lease TTL), it stops every room it runs and releases their leases, so the
//! other nodes' sweepers take them at their next sweep and announce them (`moved`) to the
//! edges; meanwhile its own sweeper claims nothing ([`crate::Bus::is_connected`]). Its
//! local sockets follow their rooms like any stopped room's (a rehome, then 1012 when
//! NATS does not come back within the reattach window).

use super::lease;
use crate::state::NodeState;
use std::time::Duration;
use tracing::{error, info};

/// How long the NATS connection may stay lost before the node gives its rooms up: one
/// lease TTL (a cut is seen at once; a stalled link after two unanswered pings,
/// [`crate::bus::PING_INTERVAL`]).
pub fn bound(lease_ttl: Duration) -> Duration {
    lease_ttl
}

/// Watches the node's NATS connection until shutdown; gives the rooms up after [`bound`]
/// without it.
pub async fn watch(state: NodeState) {
    let Some(cluster) = state.cluster().cloned() else {
        return;
    };
    let mut link = cluster.bus.link();
    let shutdown = state.shutdown_token();
    let wait = bound(cluster.config.lease_ttl);
    loop {
        let now = *link.borrow_and_update();
        if now.connected {
            tokio::select! {
                () = shutdown.cancelled() => return,
                changed = link.changed() => if changed.is_err() { return },
            }
            continue;
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            changed = link.changed() => {
                if changed.is_err() {
                    return;
                }
                continue;
            }
            () = tokio::time::sleep_until(now.since + wait) => {}
        }
        give_up_rooms(&state).await;
        // Nothing more until the connection is back (and lost again).
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                changed = link.changed() => if changed.is_err() { return },
            }
            if link.borrow_and_update().connected {
                break;
            }
        }
    }
}

/// Stops every room of this node and releases its lease.
async fn give_up_rooms(state: &NodeState) {
    let Some(own) = state.ownership() else {
        return;
    };
    let fences = own.fences();
    error!(
        rooms = fences.len(),
        "NATS lost for a whole lease TTL: giving every room up to the other nodes"
    );
    for fence in &fences {
        super::observe::lease_lost(fence, "nats_lost");
        lease::stop_room(state, own, fence, "NATS lost");
    }
    for fence in &fences {
        lease::release(state, fence).await;
    }
    info!(
        rooms = fences.len(),
        "rooms given up: their leases are released"
    );
}
