//! The SQL side of the writer: what each store backend (SQLite, PostgreSQL) runs for a
//! [`WriteOp`], the one thing the writer's generic code asks of it.

use async_trait::async_trait;
use sqlx::Database;
use uuid::Uuid;

use super::ops::{StoredEnd, TailAppend, WriteOp, FOLD_EVERY};
use crate::error::Result;
use parchis_records::EventRecord;

/// The SQL one backend runs for each [`WriteOp`].
#[async_trait]
pub(crate) trait Backend: Send + Sync + 'static {
    /// The sqlx database driver.
    type Db: Database;

    /// A game's tail is folded into `games.log` once it holds this many pieces (appends;
    /// and always in the game's end transaction): the writer marks the fold
    /// ([`TailAppend::fold`]) from the tail length [`Backend::last_seqs`] reads. The
    /// default, [`FOLD_EVERY`], is SQLite's (and the memory store's); PostgreSQL folds
    /// less often (its tail is one row updated in place: `crate::pg_writer`).
    const FOLD_EVERY: i64 = FOLD_EVERY;

    /// Applies one operation on `conn` (inside a transaction or savepoint) and maps
    /// constraint violations to domain errors. Returns whether a row was changed.
    async fn apply(conn: &mut <Self::Db as Database>::Connection, op: &WriteOp) -> Result<bool>;

    /// Applies several `AppendEvents` at once (the grouped fast path). On error, which
    /// append failed need not be known: the group is replayed one operation at a time.
    async fn append_all(
        conn: &mut <Self::Db as Database>::Connection,
        appends: &[(Uuid, &[EventRecord])],
    ) -> Result<()>;

    /// The end of each game's log in `games` (same order), in one statement: its last
    /// stored `seq` in either format (`None`: empty log or no such game), whether the
    /// game is stored as a packed log (issue 28: a folded log or a tail row), and how many
    /// pieces (appends) its tail holds since the last fold.
    async fn last_seqs(
        conn: &mut <Self::Db as Database>::Connection,
        games: &[Uuid],
    ) -> Result<Vec<StoredEnd>>;

    /// Appends each [`TailAppend`] (its pieces already checked by the writer) to its
    /// game's tail, all in one statement (one tail row each on SQLite; on PostgreSQL
    /// appended to the game's one tail row), then folds the tails marked `fold` into
    /// `games.log`: the grouped path of a group's lone pieces. On error, which append failed need not be known:
    /// the group is replayed one operation at a time.
    async fn append_pieces(
        conn: &mut <Self::Db as Database>::Connection,
        tails: &[TailAppend],
    ) -> Result<()>;

    /// Locks the lease rows of `rooms` (sorted, distinct) `FOR KEY SHARE` in one statement, in
    /// `room_code` order, and returns each existing row's `(room_code, owner, epoch)`.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] on a backend without leases.
    async fn lock_leases(
        conn: &mut <Self::Db as Database>::Connection,
        rooms: &[String],
    ) -> Result<Vec<(String, String, i64)>>;
}
