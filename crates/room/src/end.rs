//! How a room's actor ends, and the local connections a stopping room hands on: plain
//! room concepts, acted on by the room's [`crate::Host`].

use crate::link::ConnLink;
use parchis_room_core::Reattach;
use tokio::sync::oneshot;

/// Why a room's actor ended on this node; the [`crate::Host`] acts on it (in cluster
/// mode, for the room's lease).
#[derive(Debug)]
pub enum RoomEnd {
    /// Finished or idle and empty: the lease is retired (never claimed again).
    Disposed,
    /// The server shuts down: the lease is released so another node can take it at once.
    Shutdown,
    /// The lease was lost (a renewal did not keep it): no write, connections rehomed.
    Lost(&'static str),
    /// A write was refused with `Fenced`: another node owns the room.
    Fenced,
    /// Drain: the lease is released, then the local connections are handed back on
    /// `reply` (the drain asks another node to adopt the room and rehomes them).
    Handoff(oneshot::Sender<Vec<Rehomed>>),
    /// The stored room is ahead of the live one (a write whose commit got no answer was
    /// applied, or a write was refused as not following the log): the room is rebuilt
    /// from its stored state. In cluster mode the lease is released, this node adopts the
    /// room again at once (the drain's `adopt`, restored from the log) and the local
    /// connections are rehomed to it; on a single node it is restored in place
    /// (`room/rebuild.rs`).
    Rebuild,
}

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
