//! Ratings on SQLite (issue 26): the end-of-game rating write, run by the writer inside
//! the end's transaction (the one writer serialises it with every other write), and the
//! reads.

use std::collections::HashMap;

use sqlx::sqlite::SqliteConnection;
use sqlx::SqlitePool;
use uuid::Uuid;

use crate::error::Result;
use crate::rating_rows::{
    self, HistoryRow, RatingRow, HISTORY_COLUMNS, LEADERBOARD_ORDER, RATING_COLUMNS,
};
use crate::rating_update::{accounts, updates};
use parchis_records::{RatedGame, RatingHistoryRecord, RatingRecord};

/// Reads the players' ratings, computes the new ones and writes them with one history row
/// each ([`crate::writer::WriteOp::RateGame`]).
pub(crate) async fn rate_game(
    conn: &mut SqliteConnection,
    game_id: Uuid,
    at_ms: i64,
    rated: &RatedGame,
) -> Result<bool> {
    let mut current = HashMap::new();
    for id in accounts(rated)? {
        let row = sqlx::query_as::<_, RatingRow<String>>(&format!(
            "SELECT {RATING_COLUMNS} FROM ratings t WHERE t.account_id = ? AND t.pool = ?"
        ))
        .bind(id.to_string())
        .bind(&rated.pool)
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(row) = row {
            current.insert(id, rating_rows::rating(row)?);
        }
    }
    for (rating, history) in updates(game_id, at_ms, rated, &current)? {
        sqlx::query(
            "INSERT INTO ratings (account_id, pool, mu, sigma, games, updated_at_ms) \
             VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, pool) DO UPDATE SET \
             mu = excluded.mu, sigma = excluded.sigma, games = excluded.games, \
             updated_at_ms = excluded.updated_at_ms",
        )
        .bind(rating.account_id.to_string())
        .bind(&rating.pool)
        .bind(rating.mu)
        .bind(rating.sigma)
        .bind(rating.games)
        .bind(rating.updated_at_ms)
        .execute(&mut *conn)
        .await?;
        sqlx::query(
            "INSERT INTO rating_history (game_id, account_id, pool, place, mu_before, \
             sigma_before, mu_after, sigma_after, at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(history.game_id.to_string())
        .bind(history.account_id.to_string())
        .bind(&history.pool)
        .bind(i32::from(history.place))
        .bind(history.mu_before)
        .bind(history.sigma_before)
        .bind(history.mu_after)
        .bind(history.sigma_after)
        .bind(history.at_ms)
        .execute(&mut *conn)
        .await?;
    }
    Ok(true)
}

/// [`crate::Store::reset_ratings`] on SQLite: one transaction.
pub(crate) async fn reset_ratings(pool: &SqlitePool, account_id: Uuid) -> Result<u64> {
    let id = account_id.to_string();
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query("DELETE FROM rating_history WHERE account_id = ?")
        .bind(&id)
        .execute(&mut *tx)
        .await?;
    let deleted = sqlx::query("DELETE FROM ratings WHERE account_id = ?")
        .bind(&id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    tx.commit().await?;
    Ok(deleted)
}

/// [`crate::Store::ratings_of`] on SQLite.
pub(crate) async fn ratings_of(pool: &SqlitePool, account_id: Uuid) -> Result<Vec<RatingRecord>> {
    sqlx::query_as::<_, RatingRow<String>>(&format!(
        "SELECT {RATING_COLUMNS} FROM ratings t WHERE t.account_id = ? AND t.games > 0 \
         ORDER BY t.pool"
    ))
    .bind(account_id.to_string())
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(rating_rows::rating)
    .collect()
}

/// [`crate::Store::rating_history`] on SQLite.
pub(crate) async fn rating_history(
    pool: &SqlitePool,
    account_id: Uuid,
    rating_pool: Option<&str>,
    limit: u32,
) -> Result<Vec<RatingHistoryRecord>> {
    sqlx::query_as::<_, HistoryRow<String>>(&format!(
        "SELECT {HISTORY_COLUMNS} FROM rating_history h WHERE h.account_id = ? \
         AND (? IS NULL OR h.pool = ?) ORDER BY h.at_ms DESC, h.game_id DESC LIMIT ?"
    ))
    .bind(account_id.to_string())
    .bind(rating_pool)
    .bind(rating_pool)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(rating_rows::history)
    .collect()
}

/// [`crate::Store::leaderboard`] on SQLite.
pub(crate) async fn leaderboard(
    pool: &SqlitePool,
    rating_pool: &str,
    limit: u32,
    min_games: i64,
) -> Result<Vec<RatingRecord>> {
    sqlx::query_as::<_, RatingRow<String>>(&format!(
        "SELECT {RATING_COLUMNS} FROM ratings t WHERE t.pool = ? AND t.games >= ? \
         {LEADERBOARD_ORDER} LIMIT ?"
    ))
    .bind(rating_pool)
    .bind(min_games)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(rating_rows::rating)
    .collect()
}
