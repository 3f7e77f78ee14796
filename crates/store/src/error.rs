//! The store's single error type.

use std::sync::Arc;

use uuid::Uuid;

/// Every way a [`Store`](crate::Store) call can fail.
///
/// Domain errors (the first group) come from constraint violations and missing rows and are
/// safe to match on; the rest are infrastructure failures whose messages are for logs, not for
/// players. The type is `Clone` (infrastructure sources are shared behind [`Arc`]) because a
/// single failed group commit is reported to every caller in the group.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// `create_room` with a code that is already taken.
    #[error("room {0:?} already exists")]
    RoomExists(String),
    /// The room does not exist (update of a missing room, or a seat or game for one).
    #[error("room {0:?} not found")]
    RoomNotFound(String),
    /// `create_game` with an id that is already taken.
    #[error("game {0} already exists")]
    GameExists(Uuid),
    /// The game does not exist.
    #[error("game {0} not found")]
    GameNotFound(Uuid),
    /// `finish_game` on a game that already finished; the stored result is left unchanged.
    #[error("game {0} is already finished")]
    GameFinished(Uuid),
    /// `append_events` with a `seq` already stored for the game, or repeated within the batch.
    /// Nothing of the batch was written.
    #[error("event seq {seq} already exists in game {game_id}")]
    DuplicateSeq {
        /// The game appended to.
        game_id: Uuid,
        /// The first offending sequence number found.
        seq: i64,
    },
    /// An append (or the events of a start or end) that does not directly follow the last
    /// event stored for the game: `after` is the `seq` the caller believed last (events
    /// must then be `after + 1, after + 2, …`), `last` the last stored one (`None`: the log
    /// is empty). Nothing was written. A second writer for the same game, or a step
    /// applied twice, ends here.
    #[error("events for game {game_id} do not follow the stored log: expected after seq {after}, last stored {last:?}")]
    SeqMismatch {
        /// The game appended to.
        game_id: Uuid,
        /// The `seq` the caller expected to be last.
        after: i64,
        /// The last stored `seq`, if any.
        last: Option<i64>,
    },
    /// A fenced room write ([`Store::write_room`](crate::Store::write_room)) whose fence no
    /// longer matches the room's lease: the writer lost the room (another node acquired it,
    /// or the lease was retired or never taken). Nothing of the write was written. The
    /// writer must stop the room at once (docs/CLUSTER.md, "Fencing").
    #[error(
        "write to room {room:?} fenced: epoch {epoch} is not the room's lease (now {current:?})"
    )]
    Fenced {
        /// The room written.
        room: String,
        /// The writer's epoch, refused.
        epoch: i64,
        /// The lease's current `(owner, epoch)`; `None` when the room has no lease.
        current: Option<(String, i64)>,
    },
    /// The backend cannot do this (e.g. leases on SQLite: cluster mode needs PostgreSQL).
    #[error("unsupported by this store: {0}")]
    Unsupported(&'static str),
    /// A [`RoomWrite`](crate::RoomWrite) whose records name another room than the room
    /// written. Nothing was written.
    #[error("invalid room write: {0}")]
    InvalidWrite(String),
    /// A store URL that is neither `postgres://`, `postgresql://` nor `sqlite:`.
    #[error("unsupported store URL {0:?}: expected postgres://, postgresql:// or sqlite:")]
    InvalidUrl(String),
    /// A stored row could not be decoded (bad JSON, unknown status, malformed UUID…).
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
    /// The store was closed with [`Store::close`](crate::Store::close), or its writer task died.
    #[error("the store is closed")]
    Closed,
    /// The database failed (connection lost, disk full, timeout…).
    #[error("database error: {0}")]
    Database(#[source] Arc<sqlx::Error>),
    /// The store cannot serve requests for a reason found by
    /// [`Store::ping`](crate::Store::ping) (e.g. the SQLite file was deleted under it).
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// Applying the embedded migrations failed.
    #[error("migration failed: {0}")]
    Migrate(#[source] Arc<sqlx::migrate::MigrateError>),
    /// A filesystem operation failed (creating the data directory).
    #[error("I/O error: {0}")]
    Io(#[source] Arc<std::io::Error>),
}

impl StoreError {
    /// Whether the database could not be reached: the connection was refused, lost or
    /// timed out, no connection came free in time, or the server refused connections
    /// (shutting down, starting up, too many clients: SQLSTATE class `08`, `57P01`–`57P03`,
    /// `53300`). Such a failure is the network's or the database server's, not the data's
    /// or the code's: nothing of a write that failed so is visible to this store's
    /// readers, and the same call may succeed once the database is back. (A commit whose
    /// connection broke at the very moment may have been applied all the same: callers
    /// that retry rely on their own checks, e.g. the event log's `seq`.) Every other
    /// error, including [`StoreError::Closed`] and [`StoreError::Unavailable`], is not.
    pub fn is_unreachable(&self) -> bool {
        match self {
            StoreError::Database(e) => sqlx_unreachable(e),
            _ => false,
        }
    }
}

/// [`StoreError::is_unreachable`] for a sqlx error.
fn sqlx_unreachable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::PoolTimedOut => true,
        sqlx::Error::Database(d) => d.code().is_some_and(|c| {
            c.starts_with("08") || matches!(c.as_ref(), "57P01" | "57P02" | "57P03" | "53300")
        }),
        _ => false,
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match e {
            // Reads after `close()` find the pool closed: same answer as for writes.
            sqlx::Error::PoolClosed => StoreError::Closed,
            e => StoreError::Database(Arc::new(e)),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        StoreError::Migrate(Arc::new(e))
    }
}

impl From<std::io::Error> for StoreError {
    fn from(e: std::io::Error) -> Self {
        StoreError::Io(Arc::new(e))
    }
}

/// Shorthand for results of store calls.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Whether a sqlx error is a unique/primary-key violation.
pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .is_some_and(|d| d.is_unique_violation())
}

/// Whether a sqlx error is a foreign-key violation.
pub(crate) fn is_foreign_key_violation(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .is_some_and(|d| d.is_foreign_key_violation())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(e: sqlx::Error) -> StoreError {
        StoreError::from(e)
    }

    #[test]
    fn connection_failures_are_unreachable_and_nothing_else_is() {
        let io = |kind| db(sqlx::Error::Io(std::io::Error::new(kind, "proxy cut")));
        assert!(io(std::io::ErrorKind::ConnectionRefused).is_unreachable());
        assert!(io(std::io::ErrorKind::ConnectionReset).is_unreachable());
        assert!(io(std::io::ErrorKind::UnexpectedEof).is_unreachable());
        assert!(db(sqlx::Error::PoolTimedOut).is_unreachable());
        assert!(db(sqlx::Error::Tls("handshake".into())).is_unreachable());

        assert!(
            !db(sqlx::Error::PoolClosed).is_unreachable(),
            "closed store"
        );
        assert!(!db(sqlx::Error::RowNotFound).is_unreachable());
        assert!(!db(sqlx::Error::Protocol("unexpected message".into())).is_unreachable());
        assert!(!db(sqlx::Error::ColumnNotFound("x".into())).is_unreachable());
        assert!(!StoreError::Closed.is_unreachable());
        assert!(!StoreError::Unavailable("file deleted".into()).is_unreachable());
        assert!(!StoreError::Corrupt("bad json".into()).is_unreachable());
        assert!(!StoreError::RoomNotFound("ABCD".into()).is_unreachable());
        assert!(!StoreError::Io(Arc::new(std::io::Error::other("mkdir"))).is_unreachable());
        assert!(!StoreError::Fenced {
            room: "ABCD".into(),
            epoch: 1,
            current: None
        }
        .is_unreachable());
    }
}
