//! `GET /api/leaderboard` (issue 26): a rating pool's best players by the conservative
//! rating μ − 3σ, from their fifth rated game.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Default number of players listed by `GET /api/leaderboard`.
pub const LEADERBOARD_LIMIT_DEFAULT: u32 = 50;
/// Most players `GET /api/leaderboard` lists.
pub const LEADERBOARD_LIMIT_MAX: u32 = 100;

/// Query of `GET /api/leaderboard`; every field optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeaderboardQuery {
    /// The pool: a rule set's name in any spelling accepted at room creation (`online`,
    /// `pairs`, `classic+two-out`…), default `online`.
    pub preset: Option<String>,
    /// Players listed, 1 to 100 (default 50).
    pub limit: Option<u32>,
}

/// One player of a [`Leaderboard`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LeaderboardEntry {
    /// Rank, 1 = best.
    pub rank: u32,
    /// The player's username.
    pub username: String,
    /// Weng-Lin μ.
    pub mu: f64,
    /// Weng-Lin σ.
    pub sigma: f64,
    /// Rated games played in the pool (at least 5).
    pub games: u32,
    /// The number shown to players (from μ − 3σ).
    pub display: i64,
}

/// Body of `GET /api/leaderboard`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Leaderboard {
    /// The pool (the rule set's canonical name).
    pub pool: String,
    /// Best first: by μ − 3σ, then more games; only players with at least 5 rated games
    /// in the pool.
    pub players: Vec<LeaderboardEntry>,
}
