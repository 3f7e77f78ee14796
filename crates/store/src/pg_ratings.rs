//! Ratings on PostgreSQL (issue 26): the end-of-game rating write, run by the writer
//! inside the end's transaction, and the reads.
//!
//! Two games of one player may end at once on two nodes. The write first makes sure each
//! player's row exists (`INSERT … ON CONFLICT DO NOTHING`, one statement, accounts in
//! sorted order), then locks the rows `FOR UPDATE` in account order and reads them, so
//! the second game's update waits for the first's commit and computes from its result:
//! no update is lost. (Two groups of the writer that rate overlapping players in opposite
//! orders could still deadlock; PostgreSQL then fails one, and the writer's isolated
//! replay gives that end its own error.)

use std::collections::HashMap;

use parchis_ratings::Rating;
use sqlx::postgres::PgConnection;
use sqlx::PgPool;
use uuid::Uuid;

use crate::error::Result;
use crate::rating_rows::{
    self, HistoryRow, RatingRow, HISTORY_COLUMNS, LEADERBOARD_ORDER, RATING_COLUMNS,
};
use crate::rating_update::{accounts, updates};
use parchis_records::{RatedGame, RatingHistoryRecord, RatingRecord};

/// Locks and reads the players' ratings, computes the new ones and writes them with one
/// history row each ([`crate::writer::WriteOp::RateGame`]).
pub(crate) async fn rate_game(
    conn: &mut PgConnection,
    game_id: Uuid,
    at_ms: i64,
    rated: &RatedGame,
) -> Result<bool> {
    let ids = accounts(rated)?;
    // A placeholder row (0 games) for a new player, so that there is a row to lock.
    sqlx::query(
        "INSERT INTO ratings (account_id, pool, mu, sigma, games, updated_at_ms) \
         SELECT a, $2, $3, $4, 0, $5 FROM UNNEST($1::uuid[]) WITH ORDINALITY AS u(a, n) \
         ORDER BY n ON CONFLICT (account_id, pool) DO NOTHING",
    )
    .bind(&ids)
    .bind(&rated.pool)
    .bind(Rating::INITIAL.mu)
    .bind(Rating::INITIAL.sigma)
    .bind(at_ms)
    .execute(&mut *conn)
    .await?;
    let rows = sqlx::query_as::<_, RatingRow<Uuid>>(&format!(
        "SELECT {RATING_COLUMNS} FROM ratings t WHERE t.pool = $1 AND t.account_id = ANY($2) \
         ORDER BY t.account_id FOR UPDATE"
    ))
    .bind(&rated.pool)
    .bind(&ids)
    .fetch_all(&mut *conn)
    .await?;
    let mut current = HashMap::new();
    for row in rows {
        let r = rating_rows::rating(row)?;
        if r.games > 0 {
            current.insert(r.account_id, r);
        }
    }
    for (rating, history) in updates(game_id, at_ms, rated, &current)? {
        sqlx::query(
            "UPDATE ratings SET mu = $3, sigma = $4, games = $5, updated_at_ms = $6 \
             WHERE account_id = $1 AND pool = $2",
        )
        .bind(rating.account_id)
        .bind(&rating.pool)
        .bind(rating.mu)
        .bind(rating.sigma)
        .bind(rating.games)
        .bind(rating.updated_at_ms)
        .execute(&mut *conn)
        .await?;
        sqlx::query(
            "INSERT INTO rating_history (game_id, account_id, pool, place, mu_before, \
             sigma_before, mu_after, sigma_after, at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(history.game_id)
        .bind(history.account_id)
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

/// [`crate::Store::reset_ratings`] on PostgreSQL: one transaction.
pub(crate) async fn reset_ratings(pool: &PgPool, account_id: Uuid) -> Result<u64> {
    let mut tx = pool.begin().await?;
    sqlx::query("DELETE FROM rating_history WHERE account_id = $1")
        .bind(account_id)
        .execute(&mut *tx)
        .await?;
    let deleted = sqlx::query("DELETE FROM ratings WHERE account_id = $1")
        .bind(account_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    tx.commit().await?;
    Ok(deleted)
}

/// [`crate::Store::ratings_of`] on PostgreSQL.
pub(crate) async fn ratings_of(pool: &PgPool, account_id: Uuid) -> Result<Vec<RatingRecord>> {
    sqlx::query_as::<_, RatingRow<Uuid>>(&format!(
        "SELECT {RATING_COLUMNS} FROM ratings t WHERE t.account_id = $1 AND t.games > 0 \
         ORDER BY t.pool COLLATE \"C\""
    ))
    .bind(account_id)
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(rating_rows::rating)
    .collect()
}

/// [`crate::Store::rating_history`] on PostgreSQL.
pub(crate) async fn rating_history(
    pool: &PgPool,
    account_id: Uuid,
    rating_pool: Option<&str>,
    limit: u32,
) -> Result<Vec<RatingHistoryRecord>> {
    sqlx::query_as::<_, HistoryRow<Uuid>>(&format!(
        "SELECT {HISTORY_COLUMNS} FROM rating_history h WHERE h.account_id = $1 \
         AND ($2::text IS NULL OR h.pool = $2) ORDER BY h.at_ms DESC, h.game_id DESC LIMIT $3"
    ))
    .bind(account_id)
    .bind(rating_pool)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(rating_rows::history)
    .collect()
}

/// [`crate::Store::leaderboard`] on PostgreSQL.
pub(crate) async fn leaderboard(
    pool: &PgPool,
    rating_pool: &str,
    limit: u32,
    min_games: i64,
) -> Result<Vec<RatingRecord>> {
    sqlx::query_as::<_, RatingRow<Uuid>>(&format!(
        "SELECT {RATING_COLUMNS} FROM ratings t WHERE t.pool = $1 AND t.games >= $2 \
         {LEADERBOARD_ORDER} LIMIT $3"
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
