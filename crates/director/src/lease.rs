//! Cluster mode (`docs/TOURNAMENTS.md`, "Cluster"): a tournament's director runs on the one
//! node holding its lease (`tournament_leases`), and every append it makes is fenced by
//! that lease's epoch. [`Leasing`] says which node this is and how long a lease lasts;
//! [`Held`] is one director's lease, renewed every third of the TTL from its own loop.
//! Single-node mode has no [`Leasing`]: appends are unfenced.

use crate::error::DirectorError;
use crate::log;
use parchis_store::{Fence, Store};
use std::time::Duration;
use tokio::time::Instant;
use uuid::Uuid;

/// This node's part in tournament leasing.
#[derive(Debug, Clone)]
pub struct Leasing {
    /// This node's id (`--node-id`), the lease's owner.
    pub node: String,
    /// How long a lease lasts unrenewed (the cluster's `lease-ttl-ms`); a dead director's
    /// tournament is taken over by another node after this.
    pub ttl: Duration,
}

impl Leasing {
    /// How often a held lease is renewed, and how often a node looks for tournaments whose
    /// lease has expired: a third of the TTL.
    pub fn period(&self) -> Duration {
        self.ttl / 3
    }

    fn ttl_ms(&self) -> i64 {
        i64::try_from(self.ttl.as_millis()).unwrap_or(i64::MAX)
    }

    /// Acquires (or renews) tournament `id`'s lease for this node: the fence, or `None`
    /// when another node holds it.
    ///
    /// # Errors
    /// The store's.
    pub async fn acquire(
        &self,
        store: &dyn Store,
        id: Uuid,
    ) -> Result<Option<Fence>, DirectorError> {
        Ok(log::tournaments(store)?
            .acquire_tournament_lease(id, &self.node, self.ttl_ms())
            .await?)
    }
}

/// One director's lease.
#[derive(Debug)]
pub struct Held {
    /// The leasing rules.
    pub leasing: Leasing,
    /// The fence every append carries.
    pub fence: Fence,
    /// When the last renewal that succeeded was sent.
    renewed_at: Instant,
}

/// What a renewal found.
#[derive(Debug, PartialEq, Eq)]
pub enum Renewal {
    /// Still ours (perhaps under a new epoch, if it had expired and nobody took it).
    Kept,
    /// Another node holds it, or no renewal succeeded for a whole TTL: stop now.
    Lost,
}

impl Held {
    /// A lease just acquired.
    pub fn new(leasing: Leasing, fence: Fence) -> Held {
        Held {
            leasing,
            fence,
            renewed_at: Instant::now(),
        }
    }

    /// Whether a renewal is due.
    pub fn due(&self) -> bool {
        self.renewed_at.elapsed() >= self.leasing.period()
    }

    /// Releases the lease of tournament `id` (its director stopped here while the lease
    /// was still held): another node may take it at once. A failure is logged: the lease
    /// then expires after the TTL.
    pub async fn release(&self, store: &dyn Store, id: Uuid) {
        let released = match log::tournaments(store) {
            Ok(ts) => ts.release_tournament_lease(id, &self.fence).await,
            Err(e) => {
                tracing::warn!(tournament = %id, error = %e, "tournament lease not released");
                return;
            }
        };
        match released {
            Ok(()) => {
                tracing::info!(tournament = %id, node = %self.fence.node, epoch = self.fence.epoch, "tournament lease released")
            }
            Err(e) => {
                tracing::warn!(tournament = %id, error = %e, "tournament lease not released: it expires after the TTL")
            }
        }
    }

    /// Renews the lease of tournament `id`. A store failure keeps it until a whole TTL has
    /// passed since the last renewal that succeeded.
    pub async fn renew(&mut self, store: &dyn Store, id: Uuid) -> Renewal {
        let sent = Instant::now();
        match self.leasing.acquire(store, id).await {
            Ok(Some(fence)) => {
                if fence.epoch != self.fence.epoch {
                    tracing::warn!(tournament = %id, old = self.fence.epoch, new = fence.epoch, "tournament lease re-taken after expiry");
                }
                self.fence = fence;
                self.renewed_at = sent;
                Renewal::Kept
            }
            Ok(None) => Renewal::Lost,
            Err(e) => {
                tracing::warn!(tournament = %id, error = %e, "tournament lease not renewed");
                if self.renewed_at.elapsed() >= self.leasing.ttl {
                    Renewal::Lost
                } else {
                    Renewal::Kept
                }
            }
        }
    }
}
