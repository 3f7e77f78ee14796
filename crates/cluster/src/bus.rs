//! The NATS connection and the subjects of `docs/CLUSTER.md` ("NATS subjects"). Subject
//! names are built here only, so every part of the cluster agrees on them.

use super::config::{ClusterConfig, NodeId};
use super::ClusterError;
use futures_util::StreamExt;
use std::time::Duration;

/// The longest [`Bus::round_trip`].
pub const ROUND_TRIP: Duration = Duration::from_secs(5);

/// A NATS client plus the cluster's subject prefix and this node's id.
#[derive(Clone, Debug)]
pub struct Bus {
    client: async_nats::Client,
    prefix: String,
    node: NodeId,
}

impl Bus {
    /// Connects to `config.nats_url` (a name identifying the node is sent to NATS).
    ///
    /// # Errors
    /// [`ClusterError::Nats`] when the server cannot be reached.
    pub async fn connect(config: &ClusterConfig) -> Result<Bus, ClusterError> {
        let client = async_nats::ConnectOptions::new()
            .name(format!("parchis-{}-{}", config.cluster, config.node_id))
            .connect(config.nats_url.as_str())
            .await
            .map_err(|e| ClusterError::Nats {
                url: config.nats_url.clone(),
                message: e.to_string(),
            })?;
        Ok(Bus {
            client,
            prefix: config.cluster.clone(),
            node: config.node_id.clone(),
        })
    }

    /// The client.
    pub fn client(&self) -> &async_nats::Client {
        &self.client
    }

    /// Returns once the NATS server has processed everything this client sent before
    /// (subscriptions included): a message to a fresh inbox of its own comes back, and
    /// the server handles one client's messages in order. (`flush` only writes the
    /// client's buffer to the socket.)
    ///
    /// # Errors
    /// NATS refused a step or the message did not come back within [`ROUND_TRIP`].
    pub async fn round_trip(&self) -> Result<(), String> {
        let inbox = self.client.new_inbox();
        let mut echo = self
            .client
            .subscribe(inbox.clone())
            .await
            .map_err(|e| e.to_string())?;
        self.client
            .publish(inbox, bytes::Bytes::new())
            .await
            .map_err(|e| e.to_string())?;
        let back = tokio::time::timeout(ROUND_TRIP, echo.next()).await;
        let _ = echo.unsubscribe().await;
        match back {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err("the NATS connection closed".into()),
            Err(_) => Err(format!("NATS did not answer within {ROUND_TRIP:?}")),
        }
    }

    /// This node.
    pub fn node(&self) -> &NodeId {
        &self.node
    }

    /// `P.room.<CODE>`: requests to a room's owner.
    pub fn room_subject(&self, code: &str) -> String {
        format!("{}.room.{code}", self.prefix)
    }

    /// `P.edge.<NODE>`: frames and kicks for connections whose socket is on `node`.
    pub fn edge_subject(&self, node: &NodeId) -> String {
        format!("{}.edge.{node}", self.prefix)
    }

    /// `P.moved`: a node acquired a room it did not create.
    pub fn moved_subject(&self) -> String {
        format!("{}.moved", self.prefix)
    }

    /// `P.node.<NODE>`: requests to one node (create, adopt).
    pub fn node_subject(&self, node: &NodeId) -> String {
        format!("{}.node.{node}", self.prefix)
    }

    /// `P.lobby`: scatter/gather of every node's public rooms.
    pub fn lobby_subject(&self) -> String {
        format!("{}.lobby", self.prefix)
    }
}
