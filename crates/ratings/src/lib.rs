//! # parchis-ratings
//!
//! Ratings of players per rule set, and quick pairing. Pure: no I/O, no clock (time comes
//! in as unix milliseconds), no randomness.
//!
//! * [`pool`]: a rating pool is a rule set's canonical full name (`online`, `classic`,
//!   `classic+two-out`, `pairs`…): [`Pool`].
//! * [`model`]: Weng-Lin (OpenSkill) updates of μ and σ from a game's places, with the
//!   `skillratings` crate ([`rate`]); teams for `pairs`; the conservative rating μ − 3σ
//!   that orders the leaderboard and the `display` integer shown to players
//!   ([`Rating`]); [`units`] turns the engine's standings into rated teams.
//! * [`matcher`]: the quick-pairing matcher, a pure function of the waiting players,
//!   the blocked pairs and now ([`match_groups`]).
//!
//! ```
//! use parchis_ratings::{rate, Rating};
//! // Two new players; the first wins.
//! let new = rate(&[(vec![Rating::INITIAL], 1), (vec![Rating::INITIAL], 2)]).unwrap();
//! assert!(new[0][0].mu > 25.0 && new[1][0].mu < 25.0);
//! assert!(new[0][0].sigma < Rating::INITIAL.sigma);
//! ```

#![warn(missing_docs)]

pub mod matcher;
pub mod model;
pub mod pool;

pub use matcher::{match_groups, Group, MatchConfig, Queue, Waiting};
pub use model::{on_leaderboard, rate, units, RateError, Rating, Unit, MIN_LEADERBOARD_GAMES};
pub use pool::{Pool, PoolError};
