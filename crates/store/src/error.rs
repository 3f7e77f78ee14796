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
    /// [`TournamentStore::create_tournament`](crate::TournamentStore::create_tournament)
    /// with an id that is already taken. Nothing was written.
    #[error("tournament {0} already exists")]
    TournamentExists(Uuid),
    /// A tournament append that does not follow the stored log: `after` is the seq the
    /// caller believed last, `last` the last stored one (`None`: no such tournament).
    /// Nothing was written: another director appended first.
    #[error("entries of tournament {tournament} do not follow the stored log: expected after seq {after}, last stored {last:?}")]
    TournamentSeqMismatch {
        /// The tournament.
        tournament: Uuid,
        /// The seq the caller expected to be last.
        after: i64,
        /// The last stored seq, if any.
        last: Option<i64>,
    },
    /// An account's username key is held by a live account, or reserved after a deletion
    /// ([`AccountStore`](crate::AccountStore)). Nothing was written.
    #[error("username {0:?} is taken")]
    UsernameTaken(String),
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
    /// A write's `COMMIT` got no answer from the database: the connection failed while
    /// the `COMMIT` was sent or its answer awaited (an I/O, TLS or protocol error; an
    /// error *answered* by the database is [`StoreError::Database`], and means the
    /// transaction rolled back). The write may or may not have been applied: the caller
    /// finds out from the stored data (e.g. the event log's last `seq`). See
    /// [`WriteFailure::Ambiguous`].
    #[error("commit outcome unknown (no answer to COMMIT): {0}")]
    CommitUnknown(#[source] Arc<sqlx::Error>),
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

pub use parchis_records::WriteFailure;

impl StoreError {
    /// What this error means for a write ([`WriteFailure`]). Pure: decided from the
    /// variant, the sqlx error kind and the SQLSTATE.
    pub fn write_failure(&self) -> WriteFailure {
        match self {
            StoreError::Database(e) => sqlx_failure(e),
            StoreError::CommitUnknown(_) => WriteFailure::Ambiguous,
            _ => WriteFailure::Other,
        }
    }

    /// Whether no database connection could be had: [`WriteFailure::Unreachable`] or
    /// [`WriteFailure::Busy`] (nothing was applied; the same call may succeed in a
    /// moment). Every other error, including [`StoreError::Closed`],
    /// [`StoreError::Unavailable`] and an unanswered commit, is not.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self.write_failure(),
            WriteFailure::Unreachable | WriteFailure::Busy
        )
    }
}

/// [`StoreError::write_failure`] for a sqlx error (outside a `COMMIT`).
fn sqlx_failure(e: &sqlx::Error) -> WriteFailure {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) => WriteFailure::Unreachable,
        sqlx::Error::PoolTimedOut => WriteFailure::Busy,
        sqlx::Error::Database(d) => match d.code().as_deref() {
            Some(c) if c.starts_with("08") => WriteFailure::Unreachable,
            Some("57P01" | "57P02" | "57P03" | "53300") => WriteFailure::Unreachable,
            // PostgreSQL ended the session for sitting idle (in a transaction: cluster
            // mode's `idle_in_transaction_session_timeout`, e.g. a node resumed after a
            // pause): the transaction was rolled back, the next session may succeed.
            Some("25P03" | "57P05") => WriteFailure::Unreachable,
            Some("40001" | "40P01" | "57014") => WriteFailure::Transient,
            // SQLite (extended result codes, in decimal): SQLITE_BUSY and SQLITE_LOCKED
            // with their variants, after the busy timeout. The statement failed; a
            // `COMMIT` that fails so leaves the transaction open, and sqlx rolls it back.
            Some("5" | "261" | "517" | "773" | "6" | "262" | "518") => WriteFailure::Transient,
            _ => WriteFailure::Other,
        },
        _ => WriteFailure::Other,
    }
}

/// The error of a write transaction's `COMMIT`: an error the database answered (it
/// rolled the transaction back) is [`StoreError::Database`] as usual; any other (the
/// connection failed with the `COMMIT` on its way or its answer outstanding) is
/// [`StoreError::CommitUnknown`].
pub(crate) fn commit_error(e: sqlx::Error) -> StoreError {
    match e {
        e @ sqlx::Error::Database(_) => StoreError::from(e),
        e => StoreError::CommitUnknown(Arc::new(e)),
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
    use std::borrow::Cow;

    fn db(e: sqlx::Error) -> StoreError {
        StoreError::from(e)
    }

    /// A database error answered with SQLSTATE `code`.
    #[derive(Debug)]
    struct Answered(&'static str);

    impl std::fmt::Display for Answered {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "SQLSTATE {}", self.0)
        }
    }

    impl std::error::Error for Answered {}

    impl sqlx::error::DatabaseError for Answered {
        fn message(&self) -> &str {
            self.0
        }
        fn code(&self) -> Option<Cow<'_, str>> {
            Some(Cow::Borrowed(self.0))
        }
        fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
            self
        }
        fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
            self
        }
        fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
            self
        }
        fn kind(&self) -> sqlx::error::ErrorKind {
            sqlx::error::ErrorKind::Other
        }
    }

    fn sqlstate(code: &'static str) -> sqlx::Error {
        sqlx::Error::Database(Box::new(Answered(code)))
    }

    fn io(kind: std::io::ErrorKind) -> sqlx::Error {
        sqlx::Error::Io(std::io::Error::new(kind, "proxy cut"))
    }

    #[test]
    fn each_sqlstate_has_its_class() {
        use WriteFailure::*;
        let cases = [
            ("08000", Unreachable),
            ("08006", Unreachable),
            ("08P01", Unreachable),
            ("57P01", Unreachable),
            ("57P02", Unreachable),
            ("57P03", Unreachable),
            ("53300", Unreachable),
            ("25P03", Unreachable),
            ("57P05", Unreachable),
            ("40001", Transient),
            ("40P01", Transient),
            ("57014", Transient),
            // SQLite's extended result codes.
            ("5", Transient),
            ("517", Transient),
            ("773", Transient),
            ("6", Transient),
            ("10", Other),
            ("13", Other),
            ("2067", Other),
            ("23505", Other),
            ("23503", Other),
            ("42P01", Other),
            ("53100", Other),
            ("25P02", Other),
        ];
        for (code, class) in cases {
            assert_eq!(db(sqlstate(code)).write_failure(), class, "SQLSTATE {code}");
        }
    }

    #[test]
    fn each_sqlx_variant_has_its_class() {
        use WriteFailure::*;
        assert_eq!(
            db(io(std::io::ErrorKind::ConnectionRefused)).write_failure(),
            Unreachable
        );
        assert_eq!(
            db(io(std::io::ErrorKind::ConnectionReset)).write_failure(),
            Unreachable
        );
        assert_eq!(
            db(io(std::io::ErrorKind::UnexpectedEof)).write_failure(),
            Unreachable
        );
        assert_eq!(
            db(sqlx::Error::Tls("handshake".into())).write_failure(),
            Unreachable
        );
        assert_eq!(db(sqlx::Error::PoolTimedOut).write_failure(), Busy);
        assert_eq!(db(sqlx::Error::RowNotFound).write_failure(), Other);
        assert_eq!(
            db(sqlx::Error::Protocol("unexpected".into())).write_failure(),
            Other
        );
        assert_eq!(
            db(sqlx::Error::ColumnNotFound("x".into())).write_failure(),
            Other
        );
        // A closed pool is the closed store.
        assert!(matches!(db(sqlx::Error::PoolClosed), StoreError::Closed));
        assert_eq!(db(sqlx::Error::PoolClosed).write_failure(), Other);
    }

    #[test]
    fn a_commit_without_an_answer_is_ambiguous_and_an_answered_one_is_not() {
        use WriteFailure::*;
        let lost = commit_error(io(std::io::ErrorKind::ConnectionReset));
        assert!(matches!(lost, StoreError::CommitUnknown(_)), "{lost:?}");
        assert_eq!(lost.write_failure(), Ambiguous);
        assert!(!lost.is_unreachable(), "it may have been applied");
        assert_eq!(
            commit_error(sqlx::Error::Protocol("garbled".into())).write_failure(),
            Ambiguous
        );
        assert_eq!(
            commit_error(sqlx::Error::Tls("reset".into())).write_failure(),
            Ambiguous
        );
        // The database answered the COMMIT with an error: it rolled back.
        assert_eq!(commit_error(sqlstate("40001")).write_failure(), Transient);
        assert_eq!(commit_error(sqlstate("23505")).write_failure(), Other);
        assert_eq!(commit_error(sqlstate("57P01")).write_failure(), Unreachable);
        // The session ended idle in its transaction before the COMMIT arrived.
        assert_eq!(commit_error(sqlstate("25P03")).write_failure(), Unreachable);
        // SQLite: COMMIT refused busy (the transaction is rolled back by sqlx).
        assert_eq!(commit_error(sqlstate("5")).write_failure(), Transient);
    }

    #[test]
    fn unreachable_means_no_connection_could_be_had() {
        assert!(db(io(std::io::ErrorKind::ConnectionRefused)).is_unreachable());
        assert!(db(sqlx::Error::PoolTimedOut).is_unreachable(), "busy");
        assert!(db(sqlstate("57P01")).is_unreachable());
        assert!(!db(sqlstate("40001")).is_unreachable(), "transient");
        assert!(
            !db(sqlx::Error::PoolClosed).is_unreachable(),
            "closed store"
        );
        assert!(!StoreError::Closed.is_unreachable());
        assert!(!StoreError::Unavailable("file deleted".into()).is_unreachable());
        assert!(!StoreError::Corrupt("bad json".into()).is_unreachable());
        assert!(!StoreError::RoomNotFound("ABCD".into()).is_unreachable());
        assert!(!StoreError::Io(Arc::new(std::io::Error::other("mkdir"))).is_unreachable());
        let mismatch = StoreError::SeqMismatch {
            game_id: Uuid::nil(),
            after: 3,
            last: Some(4),
        };
        assert_eq!(mismatch.write_failure(), WriteFailure::Other);
        assert!(!StoreError::Fenced {
            room: "ABCD".into(),
            epoch: 1,
            current: None
        }
        .is_unreachable());
    }
}
