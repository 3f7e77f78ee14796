//! The packed game log on PostgreSQL (issue 28, `docs/STORAGE.md`): a group commit's
//! piece as one `game_log_tail` row, the tail folded into `games.log` every
//! [`LOG_COMPACT_EVERY`] rows and at the game's end (one statement each), and the log
//! read back whole.

use sqlx::postgres::PgConnection;
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
    conn: &mut PgConnection,
    game_id: Uuid,
    last_seq: i64,
    bytes: &[u8],
) -> Result<bool> {
    // The insert answers the tail's length, so compaction costs no extra round trip
    // when it is not due; no row when the piece is already folded into `games.log` (at
    // or before its `log_seq`): a duplicate, as one still in the tail (the primary key).
    let tail: Option<i64> = sqlx::query_scalar(
        "WITH added AS (INSERT INTO game_log_tail (game_id, last_seq, bytes) \
         SELECT $1, $2, $3 WHERE NOT EXISTS \
         (SELECT 1 FROM games WHERE id = $1 AND log_seq >= $2) RETURNING 1) \
         SELECT 1 + (SELECT COUNT(*) FROM game_log_tail WHERE game_id = $1) FROM added",
    )
    .bind(game_id)
    .bind(last_seq)
    .bind(bytes)
    .fetch_optional(&mut *conn)
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
    let Some(tail) = tail else {
        return Err(StoreError::DuplicateSeq {
            game_id,
            seq: last_seq,
        });
    };
    if tail >= LOG_COMPACT_EVERY {
        compact(conn, game_id).await?;
    }
    Ok(true)
}

/// Appends the game's tail rows to `games.log` in `last_seq` order, sets `log_seq` and
/// deletes them, in one statement (a no-op without tail rows). Runs inside the
/// caller's transaction.
pub(crate) async fn compact(conn: &mut PgConnection, game_id: Uuid) -> Result<()> {
    sqlx::query(
        "WITH tail AS (DELETE FROM game_log_tail WHERE game_id = $1 \
         RETURNING last_seq, bytes), \
         folded AS (SELECT string_agg(bytes, ''::bytea ORDER BY last_seq) AS bytes, \
         MAX(last_seq) AS last_seq FROM tail) \
         UPDATE games g SET log = COALESCE(g.log, ''::bytea) || f.bytes, log_seq = f.last_seq \
         FROM folded f WHERE g.id = $1 AND f.last_seq IS NOT NULL",
    )
    .bind(game_id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The game's packed log (`games.log` then its tail) `None`
/// when it has none (a game stored in the old event-row format, or no such game).
pub(crate) async fn read(conn: &mut PgConnection, game_id: Uuid) -> Result<Option<GameLog>> {
    let head: Option<(Option<Vec<u8>>, Option<i64>)> =
        sqlx::query_as("SELECT log, log_seq FROM games WHERE id = $1")
            .bind(game_id)
            .fetch_optional(&mut *conn)
            .await?;
    let Some((log, log_seq)) = head else {
        return Ok(None);
    };
    let tail: Vec<(i64, Vec<u8>)> = sqlx::query_as(
        "SELECT last_seq, bytes FROM game_log_tail WHERE game_id = $1 ORDER BY last_seq",
    )
    .bind(game_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(crate::rows::game_log(log, log_seq, tail))
}
