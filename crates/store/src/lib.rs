//! Persistence layer of the Parchís server.
//!
//! Stores rooms, their seats, the games played in them and each game's append-only event
//! log, on SQLite (default, one file) or PostgreSQL. The store knows nothing about game
//! rules: settings, rules, results and events are opaque JSON ([`serde_json::Value`]).
//! All times are `i64` unix milliseconds.
//!
//! * [`Store`] — the object-safe interface the server uses (`Arc<dyn Store>`).
//! * [`open_store`] — picks the backend from a URL and applies the migrations.
//! * [`SqliteStore`], [`PostgresStore`] — the durable backends, with group commit: one writer
//!   task per store commits every pending write in a single transaction.
//! * [`MemoryStore`] — for tests.
//!
//! # Leases and fencing (cluster mode)
//!
//! In cluster mode (docs/CLUSTER.md) several server nodes share one PostgreSQL database and
//! each room is owned by one node at a time, proven by its lease in `room_leases`
//! (migration `0004_cluster.sql`): [`Store::create_room_leased`], [`Store::acquire_lease`],
//! [`Store::claim_expired`] (the sweepers, `FOR UPDATE SKIP LOCKED`),
//! [`Store::renew_leases`] (one statement per node), [`Store::release_lease`] (drain) and
//! [`Store::retire_lease`] (finished rooms). Each acquire bumps the lease's `epoch`, and the
//! [`Fence`] it returns goes with every write of the room through [`Store::write_room`]:
//! the write checks `owner` and `epoch` under a `FOR KEY SHARE` row lock in its own
//! transaction, so a node that lost the room gets [`StoreError::Fenced`] and writes
//! nothing, and a takeover waits for any write it races with. Expiry is always the
//! database's clock. Node heartbeats: [`Store::heartbeat_node`], [`Store::live_nodes`].
//! SQLite answers these with [`StoreError::Unsupported`]; [`MemoryStore`] implements them
//! on its own monotonic clock.
//!
//! ```no_run
//! # async fn demo() -> Result<(), parchis_store::StoreError> {
//! use parchis_store::{open_store, EventRecord, Store};
//! let store = open_store(None, std::path::Path::new("data")).await?; // data/parchis.db
//! # let game_id = uuid::Uuid::nil();
//! store
//!     .append_events(game_id, vec![EventRecord { seq: 1, event: serde_json::json!({"roll": 5}), created_at_ms: 0 }])
//!     .await?;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod accounts;
mod checkpoint;
mod deadlines;
mod error;
mod memory;
mod pairing;
mod pg_lease;
mod pg_ratings;
mod pg_writer;
mod postgres;
mod rating_rows;
mod rating_update;
mod rows;
mod sql_accounts;
mod sql_tournaments;
mod sqlite;
mod sqlite_ratings;
mod store;
mod tournaments;
mod writer;

use std::path::Path;
use std::sync::Arc;

pub use accounts::{AccountRecord, AccountStore, Deletion, NewAccount, SessionPool};
pub use checkpoint::{SqliteOptions, SqliteOptionsError, MAX_TRUNCATE_WAIT};
pub use error::{Result, StoreError, WriteFailure};
pub use memory::MemoryStore;
pub use pairing::{Entered, PairingStore, StoredTicket, PAIRING_LEASE};
pub use parchis_records::{
    hash_token, room_is_public, EventRecord, GameEnd, GameQuery, GameRecord, GameStart, LogPiece,
    PackedLog, RoomRecord, RoomSnapshot, RoomStatus, RoomStatusUpdate, SeatRecord, StoredGame,
    UnknownRoomStatus,
};
pub use parchis_records::{Fence, Lease, NodeInfo, NodeRecord, RoomWrite};
pub use parchis_records::{RatedGame, RatedPlayer, RatingHistoryRecord, RatingRecord};
pub use postgres::{PostgresOptions, PostgresStore};
pub use sqlite::SqliteStore;
pub use store::{LeaseKeeper, Store, ViaStore};
pub use tournaments::{TournamentStore, MAX_TOURNAMENTS_LISTED};
pub use writer::WritePressure;

/// File name of the default SQLite database inside the data directory.
pub const DEFAULT_DB_FILE: &str = "parchis.db";

/// Opens the store named by `url`, applying migrations:
///
/// * `postgres://…` or `postgresql://…` — [`PostgresStore`];
/// * `sqlite:…` — [`SqliteStore`] on that file (created if missing);
/// * `None` — [`SqliteStore`] on `<data_dir>/parchis.db`, creating `data_dir` if needed.
///
/// Must be called inside a tokio runtime (the store spawns its writer task on it).
///
/// # Errors
/// [`StoreError::InvalidUrl`] for any other URL; [`StoreError::Io`] if `data_dir` cannot be
/// created; otherwise the errors of [`SqliteStore::connect`] / [`PostgresStore::connect`].
pub async fn open_store(url: Option<&str>, data_dir: &Path) -> Result<Arc<dyn Store>> {
    open_store_with(url, data_dir, SqliteOptions::default()).await
}

/// As [`open_store_with`], with the pools of a PostgreSQL store too (a SQLite store
/// ignores them, a PostgreSQL store ignores `sqlite`).
///
/// # Errors
/// As [`open_store`].
pub async fn open_store_tuned(
    url: Option<&str>,
    data_dir: &Path,
    sqlite: SqliteOptions,
    postgres: PostgresOptions,
) -> Result<Arc<dyn Store>> {
    match url {
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => Ok(
            Arc::new(PostgresStore::connect_url_with(url, postgres).await?),
        ),
        _ => open_store_with(url, data_dir, sqlite).await,
    }
}

/// As [`open_store`], with the WAL options of a SQLite store (a PostgreSQL store ignores
/// them).
///
/// # Errors
/// As [`open_store`].
pub async fn open_store_with(
    url: Option<&str>,
    data_dir: &Path,
    sqlite: SqliteOptions,
) -> Result<Arc<dyn Store>> {
    match url {
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            Ok(Arc::new(PostgresStore::connect(url).await?))
        }
        Some(url) if url.starts_with("sqlite:") => {
            Ok(Arc::new(SqliteStore::connect_url_with(url, sqlite).await?))
        }
        Some(url) => Err(StoreError::InvalidUrl(redact(url))),
        None => {
            std::fs::create_dir_all(data_dir)?;
            let path = data_dir.join(DEFAULT_DB_FILE);
            tracing::info!(path = %path.display(), "opening default sqlite store");
            Ok(Arc::new(SqliteStore::open_with(&path, sqlite).await?))
        }
    }
}

/// Drops anything that may be a password from a URL before it goes into an error message.
pub(crate) fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            format!("{}://***{}", &url[..scheme_end], &url[at..])
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn redact_hides_credentials() {
        assert_eq!(redact("mysql://u:pw@host/db"), "mysql://***@host/db");
        assert_eq!(redact("redis://host"), "redis://host");
    }
}
