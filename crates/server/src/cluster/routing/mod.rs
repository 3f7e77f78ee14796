//! Moving commands and frames between nodes (`docs/CLUSTER.md`, "Routing"): the owner's
//! `P.room.<CODE>` service, remote links drained onto `P.edge.<NODE>`, the edge
//! dispatcher that relays frames to local sockets and reattaches on a gap or a `moved`
//! notice, and the lobby scatter/gather.
//!
//! Skeleton: filled in by the routing work (issue 13). The ownership side calls
//! [`serve_room`] when a room starts running here and [`rehome`] when it stops here with
//! connections still attached.

use crate::room::ConnLink;
use crate::state::AppState;
use parchis_protocol::close_code;

pub use crate::room::Reattach;

/// A local connection of a room that stopped on this node.
#[derive(Debug)]
pub struct Rehomed {
    /// The connection's queue and kick switch.
    pub link: ConnLink,
    /// What it was in the room.
    pub reattach: Reattach,
    /// The last room `seq` queued to it.
    pub last_seq: u64,
}

/// Starts serving `P.room.<code>` for room `code`, which now runs on this node (its handle
/// is registered in `state`); the service ends when the room is deregistered.
/// `moved_epoch`: `Some(epoch)` when this node took the room over from another (claim or
/// adoption): a `moved` notice is published so edges reattach.
pub fn serve_room(state: &AppState, code: &str, moved_epoch: Option<i64>) {
    let _ = (state, code, moved_epoch);
}

/// Moves the local connections of room `code`, which stopped on this node, to its new
/// owner: they become relayed connections and the clients do not reconnect.
/// Skeleton: closes them with 1012 so that clients reconnect and resume.
pub fn rehome(state: &AppState, code: &str, conns: Vec<Rehomed>) {
    let _ = (state, code);
    for c in conns {
        c.link.kick.kick(
            close_code::SERVICE_RESTART,
            "the room moved: reconnect and resume",
        );
    }
}
