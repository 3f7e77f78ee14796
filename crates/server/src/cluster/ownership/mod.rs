//! Who runs which room (`docs/CLUSTER.md`, "Ownership", "Placement", "Failover",
//! "Drain"): leases with an epoch in PostgreSQL, renewed in batches; the sweeper that
//! claims expired or unowned rooms; the placement of new rooms; the SIGTERM hand-off; the
//! `P.node.<NODE>` requests (create, adopt).
//!
//! Skeleton: filled in by the ownership work (issue 13). The routing calls
//! [`wake_sweeper`] when a room's subject has no responder.

use crate::state::AppState;

/// Asks this node's sweeper to look for expired or unowned rooms now rather than at its
/// next tick (a client reached a room nobody serves). Cheap; may be called often.
pub fn wake_sweeper(state: &AppState) {
    let _ = state;
}
