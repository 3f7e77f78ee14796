//! A rated game's new ratings, computed inside the transaction that ends the game (every
//! backend reads the players' current ratings there, then writes what this returns):
//! checks of the [`RatedGame`] and the Weng-Lin update of `parchis-ratings`.

use std::collections::HashMap;

use parchis_ratings::{rate, Pool, Rating};
use parchis_records::{RatedGame, RatingHistoryRecord, RatingRecord};
use uuid::Uuid;

use crate::error::{Result, StoreError};

/// The accounts of `rated`, sorted (the order rows are locked in), each once.
///
/// # Errors
/// [`StoreError::InvalidWrite`] when an account is listed twice or the pool is not a rule
/// set's canonical name.
pub(crate) fn accounts(rated: &RatedGame) -> Result<Vec<Uuid>> {
    let pool = Pool::parse(&rated.pool).map_err(|e| StoreError::InvalidWrite(e.to_string()))?;
    if pool.as_str() != rated.pool {
        return Err(StoreError::InvalidWrite(format!(
            "pool {:?} is not written canonically: {pool}",
            rated.pool
        )));
    }
    let mut ids: Vec<Uuid> = rated.players.iter().map(|p| p.account_id).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    if ids.len() != before {
        return Err(StoreError::InvalidWrite(
            "a rated game lists an account twice".into(),
        ));
    }
    Ok(ids)
}

/// The new rating row and the history row of every player of `rated` (in the order of
/// `rated.players`), from `current` (missing: a new player, [`Rating::INITIAL`]).
///
/// # Errors
/// [`StoreError::InvalidWrite`] for a game that cannot be rated: an account twice, a
/// pool that is not a rule set, partners with different places, fewer than 2 or more than
/// 4 units, a place out of range, a stored rating out of range.
pub(crate) fn updates(
    game_id: Uuid,
    at_ms: i64,
    rated: &RatedGame,
    current: &HashMap<Uuid, RatingRecord>,
) -> Result<Vec<(RatingRecord, RatingHistoryRecord)>> {
    accounts(rated)?;
    let invalid = |why: String| StoreError::InvalidWrite(why);
    // Units in order of first appearance; each player's (unit index, index in unit).
    let mut units: Vec<(u8, u8, Vec<Rating>)> = Vec::new();
    let mut slots = Vec::with_capacity(rated.players.len());
    for p in &rated.players {
        let before = current
            .get(&p.account_id)
            .map_or(Rating::INITIAL, |r| Rating {
                mu: r.mu,
                sigma: r.sigma,
            });
        let i = match units.iter().position(|(unit, _, _)| *unit == p.unit) {
            Some(i) if units[i].1 != p.place => {
                return Err(invalid(format!(
                    "partners of unit {} have places {} and {}",
                    p.unit, units[i].1, p.place
                )))
            }
            Some(i) => i,
            None => {
                units.push((p.unit, p.place, Vec::new()));
                units.len() - 1
            }
        };
        slots.push((i, units[i].2.len(), before));
        units[i].2.push(before);
    }
    let input: Vec<(Vec<Rating>, u8)> = units
        .into_iter()
        .map(|(_, place, ratings)| (ratings, place))
        .collect();
    let new = rate(&input).map_err(|e| invalid(e.to_string()))?;
    Ok(rated
        .players
        .iter()
        .zip(slots)
        .map(|(p, (unit, member, before))| {
            let after = new[unit][member];
            let games = current.get(&p.account_id).map_or(0, |r| r.games) + 1;
            (
                RatingRecord {
                    account_id: p.account_id,
                    pool: rated.pool.clone(),
                    mu: after.mu,
                    sigma: after.sigma,
                    games,
                    updated_at_ms: at_ms,
                },
                RatingHistoryRecord {
                    account_id: p.account_id,
                    game_id,
                    pool: rated.pool.clone(),
                    place: p.place,
                    mu_before: before.mu,
                    sigma_before: before.sigma,
                    mu_after: after.mu,
                    sigma_after: after.sigma,
                    at_ms,
                },
            )
        })
        .collect())
}
