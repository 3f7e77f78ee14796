//! Why a director refused or failed an input ([`DirectorError`]).

use parchis_store::StoreError;
use parchis_tournament::{CommandError, FoldError, SettingsError};
use uuid::Uuid;

/// Why an input to a tournament's director was not done (nothing was stored).
#[derive(Debug, thiserror::Error)]
pub enum DirectorError {
    /// No tournament has this id.
    #[error("no tournament {0}")]
    NotFound(Uuid),
    /// The settings of a new tournament are invalid.
    #[error("invalid settings: {0}")]
    Settings(#[from] SettingsError),
    /// The core refused the input (the text is for the client).
    #[error("{0}")]
    Refused(#[from] CommandError),
    /// The store does not keep tournaments (a test wrapper), or refused the write.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// The stored log does not fold (a bug or corrupt data).
    #[error("stored tournament does not fold: {0}")]
    Corrupt(#[from] FoldError),
    /// The stored log is not valid JSON of the core's entries.
    #[error("stored tournament entry unreadable: {0}")]
    Unreadable(String),
    /// Cluster mode: another node directs this tournament (holds its lease); send the
    /// input there.
    #[error("tournament {tournament} is directed by node {owner}")]
    Elsewhere {
        /// The tournament.
        tournament: Uuid,
        /// The node holding its lease (empty when it expired meanwhile).
        owner: String,
    },
    /// The organiser already organises `max` tournaments that have not finished
    /// ([`crate::Directors::create_at_most`]); nothing was stored.
    #[error("this account organises {max} unfinished tournaments already, as many as one account may; one must finish first")]
    TooManyOpen {
        /// The most unfinished tournaments one account may organise.
        max: usize,
    },
    /// The director stopped (shutdown, or it lost its log to another writer).
    #[error("the tournament's director is not running")]
    Stopped,
}
