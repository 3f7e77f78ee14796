//! Records of ratings (issue 26): a rated game's result, carried by the game's end
//! ([`crate::GameEnd::rated`]) so its ratings commit in the same transaction, and the
//! stored ratings and their history.
//!
//! The store computes the new ratings itself, inside the end's transaction, from the
//! ratings it reads there (`parchis_store`, with `parchis-ratings`' Weng-Lin model): two
//! games of one player ending at once on two nodes never lose an update.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The rated result of one game: who played, in which unit (a player, or in `pairs` the
/// two partners) and at which place (D-40).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RatedGame {
    /// The rating pool: the rule set's canonical full name (`online`, `classic+two-out`,
    /// `pairs`…). Must parse as a rule set.
    pub pool: String,
    /// Every rated player, 2 to 4 units, each account at most once.
    pub players: Vec<RatedPlayer>,
}

/// One rated player of a [`RatedGame`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RatedPlayer {
    /// The player's account.
    pub account_id: Uuid,
    /// The player's unit: equal for partners in `pairs`, distinct otherwise (the engine's
    /// `Standing::team`).
    pub unit: u8,
    /// The unit's place, 1 = first (D-40); partners have the same.
    pub place: u8,
}

/// One account's current rating in one pool (`ratings`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatingRecord {
    /// The account.
    pub account_id: Uuid,
    /// The pool (rule set's full name).
    pub pool: String,
    /// Skill estimate μ.
    pub mu: f64,
    /// Uncertainty σ.
    pub sigma: f64,
    /// Rated games played in the pool.
    pub games: i64,
    /// When the last rated game changed it (unix ms).
    pub updated_at_ms: i64,
}

/// One row of `rating_history`: one player's rating change by one game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatingHistoryRecord {
    /// The account.
    pub account_id: Uuid,
    /// The game that changed it.
    pub game_id: Uuid,
    /// The pool.
    pub pool: String,
    /// The player's place in the game (D-40).
    pub place: u8,
    /// μ before the game.
    pub mu_before: f64,
    /// σ before the game.
    pub sigma_before: f64,
    /// μ after the game.
    pub mu_after: f64,
    /// σ after the game.
    pub sigma_after: f64,
    /// When the game ended (unix ms): the game end's `finished_at_ms`.
    pub at_ms: i64,
}
