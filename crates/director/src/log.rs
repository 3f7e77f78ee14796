//! A tournament's stored log: the core's entries as JSON in the store's
//! [`TournamentStore`] (write-ahead: an input's events are appended before the director
//! acts on them).

use crate::error::DirectorError;
use parchis_store::{Store, TournamentStore};
use parchis_tournament::Entry;
use serde_json::Value;
use uuid::Uuid;

/// The store's tournaments, or [`DirectorError::Store`] (`Unsupported`) when it keeps none.
pub fn tournaments(store: &dyn Store) -> Result<&dyn TournamentStore, DirectorError> {
    store.tournaments().ok_or(DirectorError::Store(
        parchis_store::StoreError::Unsupported("this store keeps no tournaments"),
    ))
}

/// `entries` as stored values.
pub fn encode(entries: &[Entry]) -> Result<Vec<Value>, DirectorError> {
    entries
        .iter()
        .map(|e| serde_json::to_value(e).map_err(|e| DirectorError::Unreadable(e.to_string())))
        .collect()
}

/// Reads tournament `id`'s log: its entries, in order (empty: no such tournament).
///
/// # Errors
/// The store's; [`DirectorError::Unreadable`] for an entry that is not a core entry.
pub async fn load(store: &dyn Store, id: Uuid) -> Result<Vec<Entry>, DirectorError> {
    tournaments(store)?
        .tournament_log(id)
        .await?
        .into_iter()
        .map(|v| serde_json::from_value(v).map_err(|e| DirectorError::Unreadable(e.to_string())))
        .collect()
}
