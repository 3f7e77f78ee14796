//! Cluster mode (`docs/CLUSTER.md`): several nodes share one PostgreSQL database (the
//! authority on data and on who owns a room) and one NATS server (messages only).
//!
//! * [`config`]: the node's identity and the lease timings.
//! * [`bus`]: the NATS connection and the subjects of the design.
//! * [`ownership`]: leases, fencing, sweeper (failover), placement, drain.
//! * [`routing`]: commands and frames between nodes, relayed connections, lobby.
//!
//! Single-node mode has no [`Cluster`] at all (`NodeState::cluster()` is `None`).

pub mod bus;
pub mod config;
pub mod host;
pub mod ownership;
pub mod routing;
pub mod state;

pub use self::bus::Bus;
pub use self::config::{ClusterConfig, NodeId};
pub use self::host::ClusterHost;
pub use self::state::{LinkConfig, NodeState};

/// Why cluster mode could not start.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// Cluster mode needs the PostgreSQL store.
    #[error(
        "cluster mode (--nats-url) needs PostgreSQL: set DATABASE_URL=postgres://…; \
         SQLite is single-node only"
    )]
    NeedsPostgres,
    /// The node id is not usable in NATS subjects.
    #[error("node id {0:?}: use 1 to 32 of A-Z a-z 0-9 _ -")]
    BadNodeId(String),
    /// The cluster name is not usable as a NATS subject prefix.
    #[error("cluster name {0:?}: use 1 to 32 of A-Z a-z 0-9 _ -")]
    BadClusterName(String),
    /// NATS could not be reached.
    #[error("NATS at {url}: {message}")]
    Nats {
        /// The URL tried (credentials removed).
        url: String,
        /// What failed.
        message: String,
    },
}

/// Everything cluster mode adds to a node: its configuration and its NATS connection.
/// Shared by the handlers and actors through `NodeState::cluster()`.
pub struct Cluster {
    /// Node identity and lease timings.
    pub config: ClusterConfig,
    /// The NATS connection.
    pub bus: Bus,
    /// Relayed connections, served rooms, session routes ([`routing`]).
    pub routing: routing::Routing,
    /// The fences this node holds, whether it drains ([`ownership`]).
    pub ownership: ownership::Ownership,
}

impl Cluster {
    /// Connects to NATS at `config.nats_url`.
    ///
    /// # Errors
    /// [`ClusterError::Nats`] when NATS does not answer.
    pub async fn connect(config: ClusterConfig) -> Result<Cluster, ClusterError> {
        let bus = Bus::connect(&config).await?;
        Ok(Cluster {
            config,
            bus,
            routing: routing::Routing::default(),
            ownership: ownership::Ownership::new(),
        })
    }

    /// This node's id.
    pub fn node(&self) -> &NodeId {
        &self.config.node_id
    }
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("node", &self.config.node_id)
            .field("cluster", &self.config.cluster)
            .finish_non_exhaustive()
    }
}
