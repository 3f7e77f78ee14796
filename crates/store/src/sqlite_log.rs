//! The packed game log on SQLite (issue 28, `docs/STORAGE.md`): a group commit's piece
//! as one `game_log_tail` row, the tail folded into `games.log` every
//! [`LOG_COMPACT_EVERY`] rows and at the game's end, and the log read back whole.

use sqlx::sqlite::SqliteConnection;
use sqlx::Executor;
use uuid::Uuid;

use crate::error::{is_foreign_key_violation, is_unique_violation, Result, StoreError};
use parchis_records::{GameLog, LOG_COMPACT_EVERY};

/// Stores one piece ([`crate::writer::WriteOp::AppendLog`]) and compacts when the tail
/// is long enough.
///
/// # Errors
/// [`StoreError::DuplicateSeq`] for a piece already stored at `last_seq`,
/// [`StoreError::GameNotFound`].
pub(crate) async fn append(
    conn: &mut SqliteConnection,
    game_id: Uuid,
    last_seq: i64,
    bytes: &[u8],
) -> Result<bool> {
    let id = game_id.to_string();
    // Refused as a duplicate when already folded into `games.log` (at or before its
    // `log_seq`), as when still in the tail (the primary key).
    let done = sqlx::query(
        "INSERT INTO game_log_tail (game_id, last_seq, bytes) SELECT ?1, ?2, ?3 \
         WHERE NOT EXISTS (SELECT 1 FROM games WHERE id = ?1 AND log_seq >= ?2)",
    )
    .bind(&id)
    .bind(last_seq)
    .bind(bytes)
    .execute(&mut *conn)
    .await
    .map_err(|err| {
        if is_unique_violation(&err) {
            StoreError::DuplicateSeq {
                game_id,
                seq: last_seq,
            }
        } else if is_foreign_key_violation(&err) {
            StoreError::GameNotFound(game_id)
        } else {
            err.into()
        }
    })?;
    if done.rows_affected() == 0 {
        return Err(StoreError::DuplicateSeq {
            game_id,
            seq: last_seq,
        });
    }
    let tail: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM game_log_tail WHERE game_id = ?")
        .bind(&id)
        .fetch_one(&mut *conn)
        .await?;
    if tail >= LOG_COMPACT_EVERY {
        compact(conn, game_id).await?;
    }
    Ok(true)
}

/// Appends the game's tail rows to `games.log` in `last_seq` order, sets `log_seq` and
/// deletes them (a no-op without tail rows). Runs inside the caller's transaction.
pub(crate) async fn compact(conn: &mut SqliteConnection, game_id: Uuid) -> Result<()> {
    let id = game_id.to_string();
    let pieces: Vec<(i64, Vec<u8>)> = sqlx::query_as(
        "SELECT last_seq, bytes FROM game_log_tail WHERE game_id = ? ORDER BY last_seq",
    )
    .bind(&id)
    .fetch_all(&mut *conn)
    .await?;
    let Some(&(last_seq, _)) = pieces.last() else {
        return Ok(());
    };
    let folded: Vec<u8> = pieces.into_iter().flat_map(|(_, b)| b).collect();
    sqlx::query("UPDATE games SET log = COALESCE(log, X'') || ?, log_seq = ? WHERE id = ?")
        .bind(folded)
        .bind(last_seq)
        .bind(&id)
        .execute(&mut *conn)
        .await?;
    conn.execute(sqlx::query("DELETE FROM game_log_tail WHERE game_id = ?").bind(&id))
        .await?;
    Ok(())
}

/// The game's packed log (`games.log` then its tail), `None` when it has none (a game
/// stored in the old event-row format, or no such game).
pub(crate) async fn read(conn: &mut SqliteConnection, game_id: Uuid) -> Result<Option<GameLog>> {
    let id = game_id.to_string();
    let head: Option<(Option<Vec<u8>>, Option<i64>)> =
        sqlx::query_as("SELECT log, log_seq FROM games WHERE id = ?")
            .bind(&id)
            .fetch_optional(&mut *conn)
            .await?;
    let Some((log, log_seq)) = head else {
        return Ok(None);
    };
    let tail: Vec<(i64, Vec<u8>)> = sqlx::query_as(
        "SELECT last_seq, bytes FROM game_log_tail WHERE game_id = ? ORDER BY last_seq",
    )
    .bind(&id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(crate::rows::game_log(log, log_seq, tail))
}
