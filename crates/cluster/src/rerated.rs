//! New ratings in every node's live rooms (issue 26, `docs/ACCOUNTS.md`): once a rated
//! game's end is stored, its node's rooms re-read the ratings of its players
//! ([`parchis_room::Rooms::rerate_accounts`]) and the node publishes the accounts on
//! `P.rerated` ([`publish`], by [`crate::ClusterHost`]); every node follows the subject
//! ([`listen`]) and tells its rooms, which read the new ratings from the shared store.
//! Core NATS delivers at most once: a node that misses the message leaves the old rating
//! on its seats until that room's next game end, restore or join. The publishing node
//! skips its own message (its rooms were told before it was published).

use crate::membership::Cluster;
use parchis_room::Rooms;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// The message on `P.rerated`.
#[derive(Debug, Serialize, Deserialize)]
struct Rerated {
    /// The node that published it.
    node: String,
    /// The accounts whose ratings changed.
    accounts: Vec<Uuid>,
}

/// Publishes on `P.rerated` that the ratings of `accounts` changed. A failure is logged:
/// the other nodes' seats keep the old rating until their rooms read it again.
pub async fn publish(cluster: &Cluster, accounts: &[Uuid]) {
    if accounts.is_empty() {
        return;
    }
    let msg = Rerated {
        node: cluster.node().as_str().to_owned(),
        accounts: accounts.to_vec(),
    };
    let published = cluster
        .bus
        .publish_json(cluster.bus.rerated_subject(), &msg)
        .await;
    if let Err(e) = published {
        tracing::warn!(error = %e, "new ratings not announced to the other nodes");
    }
}

/// Tells `rooms` (this node's) of the accounts other nodes announce on `P.rerated`, until
/// `shutdown`; this node's own messages are skipped.
pub async fn listen(cluster: std::sync::Arc<Cluster>, rooms: Rooms, shutdown: CancellationToken) {
    let mut sub = match cluster
        .bus
        .client()
        .subscribe(cluster.bus.rerated_subject())
        .await
    {
        Ok(sub) => sub,
        Err(e) => {
            tracing::error!(error = %e, "new ratings of other nodes not followed");
            return;
        }
    };
    loop {
        let msg = tokio::select! {
            _ = shutdown.cancelled() => break,
            msg = futures_util::StreamExt::next(&mut sub) => match msg {
                Some(msg) => msg,
                None => break,
            },
        };
        match serde_json::from_slice::<Rerated>(&msg.payload) {
            Ok(r) if r.node == cluster.node().as_str() => {}
            Ok(r) => rooms.rerate_accounts(&r.accounts, None).await,
            Err(e) => tracing::warn!(error = %e, "an unreadable new-ratings message"),
        }
    }
}
