//! A node's membership of the cluster: its configuration, its NATS connection and the
//! routing's and ownership's state ([`Cluster`]), and why cluster mode could not start.

use crate::bus::Bus;
use crate::config::ClusterConfig;
use crate::config::NodeId;
use crate::held::Ownership;
use crate::links::table::Routing;

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
/// Shared by the cluster code through `NodeState::cluster()`.
pub struct Cluster {
    /// Node identity and lease timings.
    pub config: ClusterConfig,
    /// The NATS connection.
    pub bus: Bus,
    /// Relayed connections, served rooms, session routes ([`routing`](crate::routing)).
    pub routing: Routing,
    /// The fences this node holds, whether it drains ([`ownership`](crate::ownership)).
    pub ownership: Ownership,
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
            routing: Routing::default(),
            ownership: Ownership::new(),
        })
    }

    /// This node's id.
    pub fn node(&self) -> &NodeId {
        &self.config.node_id
    }

    /// The lease TTL in milliseconds, as the store takes it.
    pub fn ttl_ms(&self) -> i64 {
        i64::try_from(self.config.lease_ttl.as_millis()).unwrap_or(i64::MAX)
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
