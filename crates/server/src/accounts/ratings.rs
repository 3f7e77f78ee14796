//! A player's ratings and rating history as the accounts routes show them (issue 26):
//! the store's rows turned into the wire's [`PoolRating`] and [`RatingPoint`].

use std::collections::BTreeMap;

use parchis_protocol::{PoolRating, RatingPoint};
use parchis_ratings::Rating;
use parchis_store::{RatingHistoryRecord, RatingRecord, Store};
use uuid::Uuid;

use crate::http::ApiError;

/// Rating history points shown on a profile: the newest this many rated games.
pub const HISTORY_POINTS: u32 = 100;

/// The wire form of one stored rating.
pub fn pool_rating(r: &RatingRecord) -> PoolRating {
    PoolRating {
        mu: r.mu,
        sigma: r.sigma,
        games: u32::try_from(r.games).unwrap_or(u32::MAX),
        display: i64::from(
            Rating {
                mu: r.mu,
                sigma: r.sigma,
            }
            .display(),
        ),
    }
}

/// The account's ratings by pool (empty before its first rated game).
pub async fn ratings_of(
    store: &dyn Store,
    account_id: Uuid,
) -> Result<BTreeMap<String, PoolRating>, ApiError> {
    Ok(store
        .ratings_of(account_id)
        .await?
        .iter()
        .map(|r| (r.pool.clone(), pool_rating(r)))
        .collect())
}

fn point(h: &RatingHistoryRecord) -> RatingPoint {
    RatingPoint {
        pool: h.pool.clone(),
        game_id: h.game_id.to_string(),
        at_ms: h.at_ms,
        display: i64::from(
            Rating {
                mu: h.mu_after,
                sigma: h.sigma_after,
            }
            .display(),
        ),
    }
}

/// The account's last [`HISTORY_POINTS`] rating changes, every pool, oldest first.
pub async fn history_of(store: &dyn Store, account_id: Uuid) -> Result<Vec<RatingPoint>, ApiError> {
    let mut rows = store
        .rating_history(account_id, None, HISTORY_POINTS)
        .await?;
    rows.reverse();
    Ok(rows.iter().map(point).collect())
}
