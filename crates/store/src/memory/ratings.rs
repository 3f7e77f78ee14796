//! The memory store's ratings (issue 26): the rating rows of a rated game's end, computed
//! before the end changes anything (so the end stays all or nothing), and the reads, in
//! the SQL backends' orders.

use std::collections::HashMap;

use parchis_records::{RatedGame, RatingHistoryRecord, RatingRecord};
use uuid::Uuid;

use super::inner::Inner;
use crate::error::Result;
use crate::rating_update::{accounts, updates};

/// The new rating and history rows of a rated game, not yet applied.
pub(super) type RatingRows = Vec<(RatingRecord, RatingHistoryRecord)>;

impl Inner {
    /// The rows a rated game's end writes, from the current ratings.
    ///
    /// # Errors
    /// As `crate::rating_update::updates`.
    pub(super) fn rating_rows(
        &self,
        game_id: Uuid,
        at_ms: i64,
        rated: &RatedGame,
    ) -> Result<RatingRows> {
        let current: HashMap<Uuid, RatingRecord> = accounts(rated)?
            .into_iter()
            .filter_map(|id| {
                self.ratings
                    .get(&(id, rated.pool.clone()))
                    .map(|r| (id, r.clone()))
            })
            .collect();
        updates(game_id, at_ms, rated, &current)
    }

    /// Writes rows made by [`Inner::rating_rows`].
    pub(super) fn apply_rating_rows(&mut self, rows: RatingRows) {
        for (rating, history) in rows {
            self.ratings
                .insert((rating.account_id, rating.pool.clone()), rating);
            self.rating_history.push(history);
        }
    }

    /// [`crate::Store::reset_ratings`]: the account's rating and history rows go.
    pub(super) fn reset_ratings(&mut self, account_id: Uuid) -> u64 {
        let before = self.ratings.len();
        self.ratings.retain(|(id, _), _| *id != account_id);
        self.rating_history.retain(|h| h.account_id != account_id);
        (before - self.ratings.len()) as u64
    }

    pub(super) fn ratings_of(&self, account_id: Uuid) -> Vec<RatingRecord> {
        // Keyed by (account, pool): one account's rows come in pool order.
        self.ratings
            .range((account_id, String::new())..)
            .take_while(|((id, _), _)| *id == account_id)
            .map(|(_, r)| r.clone())
            .collect()
    }

    pub(super) fn rating_history(
        &self,
        account_id: Uuid,
        pool: Option<&str>,
        limit: u32,
    ) -> Vec<RatingHistoryRecord> {
        let mut rows: Vec<RatingHistoryRecord> = self
            .rating_history
            .iter()
            .filter(|h| h.account_id == account_id && pool.is_none_or(|p| h.pool == p))
            .cloned()
            .collect();
        rows.sort_by_key(|r| std::cmp::Reverse((r.at_ms, r.game_id)));
        rows.truncate(limit as usize);
        rows
    }

    pub(super) fn leaderboard(&self, pool: &str, limit: u32, min_games: i64) -> Vec<RatingRecord> {
        let mut rows: Vec<RatingRecord> = self
            .ratings
            .values()
            .filter(|r| r.pool == pool && r.games >= min_games)
            .cloned()
            .collect();
        rows.sort_by(|a, b| {
            let (ca, cb) = (a.mu - 3.0 * a.sigma, b.mu - 3.0 * b.sigma);
            cb.total_cmp(&ca)
                .then(b.games.cmp(&a.games))
                .then(a.account_id.cmp(&b.account_id))
        });
        rows.truncate(limit as usize);
        rows
    }
}
