//! Who runs which room (`docs/CLUSTER.md`, "Ownership", "Placement", "Failover",
//! "Drain"): leases with an epoch in PostgreSQL, renewed in batches; the sweeper that
//! claims expired or unowned rooms; the placement of new rooms; the SIGTERM hand-off; the
//! `P.node.<NODE>` requests (create, adopt).
//!
//! * [`held`] ([`Ownership`]): this node's bookkeeping: the fences it holds, whether it drains, the
//!   sweeper's wake-up.
//! * [`lease`]: the renewer (one statement per node per `lease-renew-ms`), release and
//!   retirement (what becomes of a lease when its room ends here is the host's:
//!   `crate::host`).
//! * [`lease_thread`]: the OS thread, runtime and connections the renewer and the
//!   heartbeat run on, apart from the main runtime.
//! * [`sweeper`]: claims expired or unowned rooms every `sweep-ms` (failover).
//! * [`takeover`]: brings a room whose lease this node just acquired into service through
//!   the restart's restore.
//! * [`placement`]: where `POST /api/rooms` creates a room.
//! * [`node`]: the heartbeat and the `P.node.<NODE>` service (create, adopt).
//! * [`drain`]: the SIGTERM hand-off.
//! * [`partition`]: a node without NATS for a lease TTL gives its rooms up.
//! * [`shedding`]: an overloaded node takes no new rooms and is not ready, before its
//!   renewals run late enough to lose its leases; [`monitor`] samples the load.
//! * [`run`]: start and clean exit (waking the sweeper is `NodeState::wake_sweeper`).
//! * [`clock`]: this node's wall clock against the database's (a skew gauge, a warning
//!   beyond a second).
//! * [`observe`]: the log lines and metrics of all of the above.
//!
//! Every room actor in cluster mode holds its [`parchis_store::Fence`]; its writes go through
//! `Store::write_room` with it, so a node that lost a room can never write into its log.

pub mod drain;
pub mod lease;
pub mod lease_thread;
pub mod monitor;
pub mod node;
pub mod observe;
pub mod partition;
pub mod placement;
pub mod run;
pub mod sweeper;
pub mod takeover;

// The ownership's bookkeeping sits below the node's state (`crate::held`); offered here
// under its old paths.
pub use crate::held::{self, clock, shedding, Ownership};
pub use parchis_room::RoomEnd;
pub use run::{leave, start};
