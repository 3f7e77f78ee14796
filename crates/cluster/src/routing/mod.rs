//! Moving commands and frames between nodes (`docs/CLUSTER.md`, "Routing"):
//!
//! * [`service`]: the owner's `P.room.<CODE>` service (attach, command, detach, view).
//! * [`remote_link`]: the owner's remote links, drained onto `P.edge.<NODE>` by
//!   [`publisher`] (one per edge node: a frame for several sockets of one edge node goes
//!   once).
//! * [`edge`]: the edge's relayed connections and the dispatcher relaying frames to
//!   their sockets; [`relay`] is its pure per-connection state machine (stream position,
//!   commands waiting for their one reply); [`forward`] sends the client's attach and
//!   commands to the owner, [`ask`] bounds each request; [`reattach`] follows a room
//!   after a gap, an `end`, a `moved` notice or a rehome.
//! * [`lobby`]: the public lobby's scatter/gather on `P.lobby`.
//! * [`wire`]: the JSON shapes between nodes.
//! * [`unknown`]: the negative cache of codes no node serves and the store does not hold.
//!
//! A room's actor calls [`serve_room`] (its one caller) while it starts, before anyone
//! learns of the room: the subscription is on the NATS server before a creation is
//! answered or a `moved` notice ([`announce_moved`], the ownership side's) is sent. The
//! ownership side calls [`rehome`] when a room stops here with connections still
//! attached. A WebSocket session
//! holds its room as a [`RouteCell`]: a local room handle, or a relayed connection of
//! another node's room; [`rehome`] swaps it.

pub mod ask;
pub mod edge_in;
pub mod forward;
pub mod lobby;
pub mod reattach;
pub mod remote_link;
pub mod run;
pub mod service;

// The routing's tables and the wire between nodes sit below the node's state
// (`crate::links`); offered here under their old paths.
pub use crate::links::{edge, edge_msg, metrics, publisher, relay, table, unknown, wire};
pub use parchis_room::Reattach;
pub use run::{announce_moved, rehome, serve_room, start, view, ServeError};
pub use table::{route_of, GoneEdges, Route, RouteCell, Routing, Shared, PROBE_EVERY, PROBE_WAIT};
