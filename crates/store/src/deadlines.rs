//! The turn deadline's own table, `game_deadlines` (issue 28; migrations
//! `postgres/0016_game_deadlines.sql`, `sqlite/0010_game_deadlines.sql`): one row per
//! running game whose clock runs, `(game_id, deadline_ms)`, written by the writer's
//! `SetDeadline`, `CreateGame` (a start with a deadline) and `FinishGame` (the row
//! deleted), and read back as [`GameRecord::deadline_ms`](parchis_records::GameRecord)
//! by a subquery in `crate::rows::GAME_COLUMNS` (`NULL`: no row). It used to be a column
//! of `games`: on PostgreSQL each write of it (a restore's or a takeover's fresh clock)
//! then copied a running game's whole row (≈ 2.4 KB with its packed log) into a new row
//! version (docs/BENCHMARKS.md, "Turn deadline in its own table"). A cleared deadline is a
//! deleted row, never a NULL, so finished games cost nothing here.
//!
//! Both dialects are in this one file (`$n` for PostgreSQL, `?` for SQLite) so that the
//! table's few statements are kept in step.

use sqlx::postgres::PgConnection;
use sqlx::sqlite::SqliteConnection;
use uuid::Uuid;

use crate::error::{is_foreign_key_violation, Result, StoreError};

/// Sets (`Some`, an upsert) or clears (`None`, the row deleted) a game's deadline on
/// PostgreSQL.
///
/// # Errors
/// [`StoreError::GameNotFound`] if no such game; the database's errors.
pub(crate) async fn pg_set(
    conn: &mut PgConnection,
    game_id: Uuid,
    deadline_ms: Option<i64>,
) -> Result<()> {
    match deadline_ms {
        Some(deadline) => {
            sqlx::query(
                "INSERT INTO game_deadlines (game_id, deadline_ms) VALUES ($1, $2) \
                 ON CONFLICT (game_id) DO UPDATE SET deadline_ms = excluded.deadline_ms",
            )
            .bind(game_id)
            .bind(deadline)
            .execute(&mut *conn)
            .await
            .map_err(|e| not_found(e, game_id))?;
        }
        None => {
            let done = sqlx::query("DELETE FROM game_deadlines WHERE game_id = $1")
                .bind(game_id)
                .execute(&mut *conn)
                .await?;
            if done.rows_affected() == 0 {
                let exists = sqlx::query_scalar::<_, i32>("SELECT 1 FROM games WHERE id = $1")
                    .bind(game_id)
                    .fetch_optional(&mut *conn)
                    .await?
                    .is_some();
                if !exists {
                    return Err(StoreError::GameNotFound(game_id));
                }
            }
        }
    }
    Ok(())
}

/// Deletes a game's deadline row, if any (its end), on PostgreSQL.
pub(crate) async fn pg_clear(conn: &mut PgConnection, game_id: Uuid) -> Result<()> {
    sqlx::query("DELETE FROM game_deadlines WHERE game_id = $1")
        .bind(game_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// [`pg_set`] on SQLite (game ids stored as text).
///
/// # Errors
/// [`StoreError::GameNotFound`] if no such game; the database's errors.
pub(crate) async fn sqlite_set(
    conn: &mut SqliteConnection,
    game_id: Uuid,
    deadline_ms: Option<i64>,
) -> Result<()> {
    let id = game_id.to_string();
    match deadline_ms {
        Some(deadline) => {
            sqlx::query(
                "INSERT INTO game_deadlines (game_id, deadline_ms) VALUES (?, ?) \
                 ON CONFLICT (game_id) DO UPDATE SET deadline_ms = excluded.deadline_ms",
            )
            .bind(&id)
            .bind(deadline)
            .execute(&mut *conn)
            .await
            .map_err(|e| not_found(e, game_id))?;
        }
        None => {
            let done = sqlx::query("DELETE FROM game_deadlines WHERE game_id = ?")
                .bind(&id)
                .execute(&mut *conn)
                .await?;
            if done.rows_affected() == 0 {
                let exists = sqlx::query_scalar::<_, i64>("SELECT 1 FROM games WHERE id = ?")
                    .bind(&id)
                    .fetch_optional(&mut *conn)
                    .await?
                    .is_some();
                if !exists {
                    return Err(StoreError::GameNotFound(game_id));
                }
            }
        }
    }
    Ok(())
}

/// [`pg_clear`] on SQLite.
pub(crate) async fn sqlite_clear(conn: &mut SqliteConnection, game_id: Uuid) -> Result<()> {
    sqlx::query("DELETE FROM game_deadlines WHERE game_id = ?")
        .bind(game_id.to_string())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// A foreign-key violation (no such game) as [`StoreError::GameNotFound`].
fn not_found(e: sqlx::Error, game_id: Uuid) -> StoreError {
    if is_foreign_key_violation(&e) {
        StoreError::GameNotFound(game_id)
    } else {
        e.into()
    }
}
