//! The NATS connection and the subjects of `docs/CLUSTER.md` ("NATS subjects"). Subject
//! names are built here only, so every part of the cluster agrees on them.

use super::config::{ClusterConfig, NodeId};
use super::ClusterError;
use futures_util::StreamExt;
use std::time::Duration;

/// The longest [`Bus::round_trip`].
pub const ROUND_TRIP: Duration = Duration::from_secs(5);
/// How often the client pings the NATS server: a link that went silent (stalled, not
/// closed) is found lost after two unanswered pings, about 2 to 3 s.
pub const PING_INTERVAL: Duration = Duration::from_secs(1);
/// The longest wait between two reconnect attempts (async-nats's default backs off to
/// 4 s: a NATS server back after a restart would be found up to 4 s late).
pub const RECONNECT_MAX_DELAY: Duration = Duration::from_millis(500);

/// The state of the node's NATS connection as its events told it ([`Bus::link`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// Connected now.
    pub connected: bool,
    /// Since when (connected or not).
    pub since: tokio::time::Instant,
    /// How many times the connection came back after it was lost.
    pub reconnects: u64,
}

/// A NATS client plus the cluster's subject prefix and this node's id.
#[derive(Clone, Debug)]
pub struct Bus {
    client: async_nats::Client,
    prefix: String,
    node: NodeId,
    link: tokio::sync::watch::Receiver<Link>,
}

/// What a NATS connection event changes in `link` (`None`: nothing). Pure.
pub fn on_event(link: &Link, connected: bool, now: tokio::time::Instant) -> Option<Link> {
    match (link.connected, connected) {
        (false, true) => Some(Link {
            connected: true,
            since: now,
            reconnects: link.reconnects + 1,
        }),
        (true, false) => Some(Link {
            connected: false,
            since: now,
            reconnects: link.reconnects,
        }),
        _ => None,
    }
}

impl Bus {
    /// Connects to `config.nats_url` (a name identifying the node is sent to NATS),
    /// pinging every [`PING_INTERVAL`] and reconnecting at least every
    /// [`RECONNECT_MAX_DELAY`]; the connection's events feed [`Bus::link`].
    ///
    /// # Errors
    /// [`ClusterError::Nats`] when the server cannot be reached.
    pub async fn connect(config: &ClusterConfig) -> Result<Bus, ClusterError> {
        let (tx, link) = tokio::sync::watch::channel(Link {
            connected: true,
            since: tokio::time::Instant::now(),
            reconnects: 0,
        });
        let tx = std::sync::Arc::new(tx);
        let node = config.node_id.to_string();
        let client = async_nats::ConnectOptions::new()
            .name(format!("parchis-{}-{}", config.cluster, config.node_id))
            .ping_interval(PING_INTERVAL)
            .reconnect_delay_callback(|attempts| {
                let ms = 2u64.saturating_pow(u32::try_from(attempts).unwrap_or(u32::MAX));
                Duration::from_millis(ms).min(RECONNECT_MAX_DELAY)
            })
            .event_callback(move |event| {
                let (tx, node) = (tx.clone(), node.clone());
                async move {
                    let connected = match event {
                        async_nats::Event::Connected => true,
                        async_nats::Event::Disconnected => false,
                        other => {
                            tracing::debug!(node = %node, event = %other, "NATS event");
                            return;
                        }
                    };
                    let now = tokio::time::Instant::now();
                    tx.send_if_modified(|link| match on_event(link, connected, now) {
                        Some(next) => {
                            if connected {
                                tracing::warn!(node = %node, reconnects = next.reconnects, "NATS connection back");
                            } else {
                                tracing::warn!(node = %node, "NATS connection lost");
                            }
                            *link = next;
                            true
                        }
                        None => false,
                    });
                }
            })
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
            link,
        })
    }

    /// Whether the NATS connection is up (as its last event said).
    pub fn is_connected(&self) -> bool {
        self.link.borrow().connected
    }

    /// The state of the NATS connection, updated by its events (a receiver of its own).
    pub fn link(&self) -> tokio::sync::watch::Receiver<Link> {
        self.link.clone()
    }

    /// The client.
    pub fn client(&self) -> &async_nats::Client {
        &self.client
    }

    /// Publishes `value` as JSON on `subject` (core NATS: at most once, no reply).
    ///
    /// # Errors
    /// The value does not serialise, or the client refused the message (its text).
    pub async fn publish_json<T: serde::Serialize>(
        &self,
        subject: String,
        value: &T,
    ) -> Result<(), String> {
        let bytes = serde_json::to_vec(value).map_err(|e| e.to_string())?;
        self.client
            .publish(subject, bytes.into())
            .await
            .map_err(|e| e.to_string())
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

    /// `P.renamed`: an account was renamed (issue 26); every node renames its seats in
    /// the rooms it runs. Core NATS: a lost message leaves a stale name on a seat.
    pub fn renamed_subject(&self) -> String {
        format!("{}.renamed", self.prefix)
    }

    /// `P.rerated`: a rated game's end changed the ratings of some accounts (issue 26);
    /// every node's rooms where they sit show the new ratings ([`crate::rerated`]). Core
    /// NATS: a lost message leaves a stale rating on a seat.
    pub fn rerated_subject(&self) -> String {
        format!("{}.rerated", self.prefix)
    }

    /// `P.tournament.<NODE>`: tournament commands forwarded to the node directing the
    /// tournament (`docs/TOURNAMENTS.md`, "Cluster").
    pub fn tournament_subject(&self, node: &str) -> String {
        format!("{}.tournament.{node}", self.prefix)
    }

    /// `P.tview.<ID>`: tournament `id`'s views as its director publishes them, for the
    /// live subscribers of every node.
    pub fn tournament_view_subject(&self, id: &uuid::Uuid) -> String {
        format!("{}.tview.{id}", self.prefix)
    }

    /// `P.lobby`: scatter/gather of every node's public rooms.
    pub fn lobby_subject(&self) -> String {
        format!("{}.lobby", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loss_then_a_return_counts_one_reconnect_and_repeats_change_nothing() {
        let t0 = tokio::time::Instant::now();
        let up = Link {
            connected: true,
            since: t0,
            reconnects: 0,
        };
        assert_eq!(on_event(&up, true, t0), None);
        let t1 = t0 + Duration::from_secs(1);
        let down = on_event(&up, false, t1).expect("lost");
        assert_eq!(
            (down.connected, down.since, down.reconnects),
            (false, t1, 0)
        );
        assert_eq!(on_event(&down, false, t1 + Duration::from_secs(1)), None);
        let t2 = t1 + Duration::from_secs(4);
        let back = on_event(&down, true, t2).expect("back");
        assert_eq!((back.connected, back.since, back.reconnects), (true, t2, 1));
    }
}
