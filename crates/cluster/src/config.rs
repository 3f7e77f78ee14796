//! The node's identity and the lease timings of cluster mode (`docs/CLUSTER.md`,
//! "Starting a cluster").

use super::ClusterError;
use rand::RngCore;
use std::time::Duration;

/// A node's name in leases and NATS subjects: 1 to 32 of `[A-Za-z0-9_-]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(String);

impl NodeId {
    /// Checks `id`.
    ///
    /// # Errors
    /// [`ClusterError::BadNodeId`] when empty, longer than 32 or not `[A-Za-z0-9_-]`.
    pub fn new(id: &str) -> Result<NodeId, ClusterError> {
        if subject_token(id) {
            Ok(NodeId(id.to_owned()))
        } else {
            Err(ClusterError::BadNodeId(id.to_owned()))
        }
    }

    /// A random id, `n-` and 8 hex digits (the default; logged at start).
    pub fn random() -> NodeId {
        NodeId(format!("n-{:08x}", rand::rngs::OsRng.next_u32()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether `s` can be one token of a NATS subject here: 1 to 32 of `[A-Za-z0-9_-]`.
pub fn subject_token(s: &str) -> bool {
    (1..=32).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Cluster mode settings (flags and environment in `docs/CLUSTER.md`).
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// NATS server URL, e.g. `nats://127.0.0.1:4222`.
    pub nats_url: String,
    /// This node.
    pub node_id: NodeId,
    /// NATS subject prefix (`--cluster`, default `parchis`).
    pub cluster: String,
    /// A lease not renewed for this long expires (by PostgreSQL's clock). Default 3 s.
    pub lease_ttl: Duration,
    /// Leases are renewed (in one statement per node) this often. Default 1 s.
    pub lease_renew: Duration,
    /// How often the sweeper looks for expired or unowned rooms. Default 500 ms.
    pub sweep: Duration,
    /// Longest SIGTERM hand-off before the node exits anyway. Default 20 s.
    pub drain_timeout: Duration,
}

impl ClusterConfig {
    /// Settings with the documented defaults for `nats_url` and `node_id`.
    ///
    /// # Errors
    /// [`ClusterError::BadClusterName`] is never returned here (the default is valid).
    pub fn new(nats_url: impl Into<String>, node_id: NodeId) -> ClusterConfig {
        ClusterConfig {
            nats_url: nats_url.into(),
            node_id,
            cluster: "parchis".to_owned(),
            lease_ttl: Duration::from_millis(3000),
            lease_renew: Duration::from_millis(1000),
            sweep: Duration::from_millis(500),
            drain_timeout: Duration::from_secs(20),
        }
    }

    /// Sets the subject prefix.
    ///
    /// # Errors
    /// [`ClusterError::BadClusterName`] unless 1 to 32 of `[A-Za-z0-9_-]`.
    pub fn with_cluster(mut self, name: &str) -> Result<ClusterConfig, ClusterError> {
        if !subject_token(name) {
            return Err(ClusterError::BadClusterName(name.to_owned()));
        }
        self.cluster = name.to_owned();
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_are_subject_tokens() {
        assert!(NodeId::new("a").is_ok());
        assert!(NodeId::new("node_2-b").is_ok());
        assert!(NodeId::new("").is_err());
        assert!(NodeId::new("a.b").is_err());
        assert!(NodeId::new("a b").is_err());
        assert!(NodeId::new(&"x".repeat(33)).is_err());
        let r = NodeId::random();
        assert!(
            r.as_str().starts_with("n-") && r.as_str().len() == 10,
            "{r}"
        );
        assert!(NodeId::new(r.as_str()).is_ok());
    }

    #[test]
    fn cluster_name_is_checked() {
        let c = ClusterConfig::new("nats://x", NodeId::random());
        assert_eq!(c.cluster, "parchis");
        assert!(c.clone().with_cluster("t1").is_ok());
        assert!(c.with_cluster("a.>").is_err());
    }
}
