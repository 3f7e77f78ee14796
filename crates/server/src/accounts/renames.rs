//! A renamed account's new name in the live rooms where it sits (issue 26,
//! `docs/ACCOUNTS.md`): the admin rename, once stored, is announced to this node's rooms
//! ([`parchis_room::Rooms::rename_account`]) and, in a cluster, to every other node over
//! NATS (`P.renamed`, [`listen`]). Core NATS delivers at most once: a node that misses
//! the message leaves the old name on its seats until the player joins again.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::state::AppState;

/// The message on `P.renamed`.
#[derive(Debug, Serialize, Deserialize)]
struct Renamed {
    /// The account.
    account: Uuid,
    /// Its new username.
    name: String,
}

/// Account `account` is now called `name`: this node's rooms are told, and in a cluster
/// every node is (this one hears it again; renaming twice changes nothing).
pub async fn announce(state: &AppState, account: Uuid, name: &str) {
    state.rooms().rename_account(account, name).await;
    let Some(cluster) = state.cluster() else {
        return;
    };
    let msg = Renamed {
        account,
        name: name.to_owned(),
    };
    let published = cluster
        .bus
        .publish_json(cluster.bus.renamed_subject(), &msg)
        .await;
    if let Err(e) = published {
        tracing::warn!(account = %account, error = %e, "the rename not announced to the other nodes");
    }
}

/// Cluster mode: renames the seats of the accounts other nodes announce, until the
/// server shuts down. Nothing on a single node.
pub async fn listen(state: AppState) {
    let Some(cluster) = state.cluster().cloned() else {
        return;
    };
    let mut sub = match cluster
        .bus
        .client()
        .subscribe(cluster.bus.renamed_subject())
        .await
    {
        Ok(sub) => sub,
        Err(e) => {
            tracing::error!(error = %e, "renames of other nodes not followed");
            return;
        }
    };
    let shutdown = state.shutdown_token();
    loop {
        let msg = tokio::select! {
            _ = shutdown.cancelled() => break,
            msg = futures_util::StreamExt::next(&mut sub) => match msg {
                Some(msg) => msg,
                None => break,
            },
        };
        match serde_json::from_slice::<Renamed>(&msg.payload) {
            Ok(r) => state.rooms().rename_account(r.account, &r.name).await,
            Err(e) => tracing::warn!(error = %e, "an unreadable rename message"),
        }
    }
}
