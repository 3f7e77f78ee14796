//! Cluster mode (`docs/CLUSTER.md`): several nodes share one PostgreSQL database (the
//! authority on data and on who owns a room) and one NATS server (messages only).
//!
//! * [`config`]: the node's identity and the lease timings.
//! * [`membership`]: [`Cluster`], what cluster mode adds to a node.
//! * [`owned`]: [`Owned`], what ownership needs of a kind of actor run under leases
//!   (rooms: [`RoomKind`]; a championship director next), and the node's [`Kinds`].
//! * [`state`]: [`NodeState`], the narrow context of the cluster code (the node's rooms,
//!   its cluster membership, admission, queue sizes).
//! * [`host`]: [`ClusterHost`], the rooms' host on a cluster node.
//! * [`rerated`]: new ratings announced to every node's rooms (`P.rerated`).
//! * [`bus`]: the NATS connection and the subjects of the design.
//! * [`ownership`]: leases, fencing, sweeper (failover), placement, drain.
//! * [`routing`]: commands and frames between nodes, relayed connections, lobby.
//!
//! Single-node mode has no [`Cluster`] at all (`NodeState::cluster()` is `None`).
//!
//! Module order (each imports only modules before it): `config`, `bus`, `held` (the
//! ownership's bookkeeping) and `links` (the routing's tables and the wire), `membership`,
//! `owned`, `state`, `rerated`, the rest of `routing` and
//! `ownership`, `host`. This file only declares and re-exports.

#![warn(missing_docs)]

pub mod bus;
pub mod config;
pub mod held;
pub mod host;
pub mod links;
pub mod membership;
pub mod owned;
pub mod ownership;
pub mod rerated;
pub mod routing;
pub mod state;

pub use self::bus::Bus;
pub use self::config::{ClusterConfig, NodeId};
pub use self::host::ClusterHost;
pub use self::membership::{Cluster, ClusterError};
pub use self::owned::{Kinds, Owned, RoomKind};
pub use self::state::{LinkConfig, NodeState};
