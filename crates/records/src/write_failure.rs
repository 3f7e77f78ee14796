//! What a failed store write means for the one who asked for it.

/// What a failed write means for its caller (`parchis_store::StoreError::write_failure`): whether
/// anything of it may have been applied, and whether sending it again can succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteFailure {
    /// The database could not be reached: the connection was refused, lost or broke
    /// before the `COMMIT` (I/O or TLS error), or the server refused connections
    /// (shutting down, starting up, too many clients: SQLSTATE class `08`,
    /// `57P01`–`57P03`, `53300`), or it ended the session for sitting idle (`25P03`,
    /// `57P05`). Nothing was applied; the same write may succeed once the database is
    /// back.
    Unreachable,
    /// No pooled connection came free within the pool's acquire timeout
    /// (`sqlx::Error::PoolTimedOut`): the server is busy, the database not necessarily
    /// out of reach. Nothing was applied; retry in a moment.
    Busy,
    /// The database rolled the transaction back for a reason of the moment:
    /// serialization failure (`40001`), deadlock (`40P01`), statement timeout or
    /// cancellation (`57014`); on SQLite the database stayed busy or locked past the
    /// busy timeout (`SQLITE_BUSY`, `SQLITE_LOCKED` and their extended codes). Nothing
    /// was applied; the same write may succeed at once.
    Transient,
    /// The `COMMIT` was sent but no answer came (`parchis_store::StoreError::CommitUnknown`): the write
    /// may or may not have been applied. The caller must look at the stored data before
    /// it tells anyone that nothing was applied.
    Ambiguous,
    /// Anything else (a constraint, a mismatch, corrupt data, a closed store, a bug):
    /// sending the same write again would not mend it.
    Other,
}
