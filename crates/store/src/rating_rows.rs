//! Rating rows as both SQL backends select them, and their conversion to records (ids are
//! `UUID` on PostgreSQL, text on SQLite: the `Id` parameter, as in `crate::rows`).

use parchis_records::{RatingHistoryRecord, RatingRecord};

use crate::error::{Result, StoreError};
use crate::rows::GameId;

/// `account_id, pool, mu, sigma, games, updated_at_ms`
pub(crate) type RatingRow<Id> = (Id, String, f64, f64, i64, i64);
/// `game_id, account_id, pool, place, mu_before, sigma_before, mu_after, sigma_after, at_ms`
pub(crate) type HistoryRow<Id> = (Id, Id, String, i32, f64, f64, f64, f64, i64);

/// Column lists matching the tuples above (aliases `t` for `ratings`, `h` for
/// `rating_history`).
pub(crate) const RATING_COLUMNS: &str =
    "t.account_id, t.pool, t.mu, t.sigma, t.games, t.updated_at_ms";
pub(crate) const HISTORY_COLUMNS: &str = "h.game_id, h.account_id, h.pool, h.place, \
     h.mu_before, h.sigma_before, h.mu_after, h.sigma_after, h.at_ms";

/// The leaderboard's order: the conservative rating μ − 3σ (the expression of the index
/// `ratings_leaderboard_idx`), then more games, then the account id (a stable order).
pub(crate) const LEADERBOARD_ORDER: &str =
    "ORDER BY (t.mu - 3 * t.sigma) DESC, t.games DESC, t.account_id";

pub(crate) fn rating<Id: GameId>(row: RatingRow<Id>) -> Result<RatingRecord> {
    let (account_id, pool, mu, sigma, games, updated_at_ms) = row;
    Ok(RatingRecord {
        account_id: account_id.into_uuid()?,
        pool,
        mu,
        sigma,
        games,
        updated_at_ms,
    })
}

pub(crate) fn history<Id: GameId>(row: HistoryRow<Id>) -> Result<RatingHistoryRecord> {
    let (game_id, account_id, pool, place, mu_before, sigma_before, mu_after, sigma_after, at_ms) =
        row;
    Ok(RatingHistoryRecord {
        game_id: game_id.into_uuid()?,
        account_id: account_id.into_uuid()?,
        pool,
        place: u8::try_from(place)
            .map_err(|_| StoreError::Corrupt(format!("rating history place {place}")))?,
        mu_before,
        sigma_before,
        mu_after,
        sigma_after,
        at_ms,
    })
}
