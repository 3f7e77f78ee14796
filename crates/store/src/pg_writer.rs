//! The group-commit writer's SQL on PostgreSQL: one [`WriteOp`] at a time, every append of
//! a group in one statement, log positions and fence rows for a whole group at once.
//!
//! A running game's packed-log tail is ONE `game_log_tail` row (migration
//! `postgres/0017_game_log_tail_row.sql`, docs/STORAGE.md), updated in place: an append
//! is an upsert adding its piece to the row's `bytes` and 1 to its `pieces`; a fold
//! ([`PgBackend::FOLD_EVERY`] pieces) appends `bytes` to `games.log` and resets the row
//! (`bytes = ''`, `pieces = 0`, `last_seq` kept: it is then `games.log_seq`); the game's
//! end folds what is left and deletes the row. No index names the updated columns, so
//! these updates are HOT: their old versions are pruned within the page, without a
//! vacuum, unlike the deleted rows of one row per append.

use async_trait::async_trait;
use serde_json::Value;
use sqlx::postgres::PgConnection;
use sqlx::Postgres;
use uuid::Uuid;

use crate::deadlines;
use crate::error::{is_foreign_key_violation, is_unique_violation, Result, StoreError};
use crate::writer::{Backend, StoredEnd, TailAppend, WriteOp};
use parchis_records::{EventRecord, LogPiece};

/// Folds a game's tail row into `games.log` in one statement (its bytes appended,
/// `log_seq` set to its `last_seq`, the row reset to no bytes and no pieces by an
/// update, not deleted: a HOT update, module docs) if it holds at least `min_pieces`
/// pieces. Returns whether it folded.
async fn fold_log(conn: &mut PgConnection, game_id: Uuid, min_pieces: i64) -> Result<bool> {
    // `o` is the row as the statement found it (the reset's RETURNING gives new values).
    let done = sqlx::query(
        "WITH t AS (UPDATE game_log_tail n SET bytes = ''::bytea, pieces = 0 \
         FROM game_log_tail o WHERE n.game_id = $1 AND o.game_id = $1 AND o.pieces >= $2 \
         RETURNING o.last_seq, o.bytes) \
         UPDATE games SET log = COALESCE(log, ''::bytea) || t.bytes, log_seq = t.last_seq \
         FROM t WHERE id = $1",
    )
    .bind(game_id)
    .bind(min_pieces)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Appends one piece to a game's tail row (made on its first piece), counting one more
/// piece; then folds the tail when it holds [`PgBackend::FOLD_EVERY`] pieces. The writer
/// checked the piece's position first ([`crate::writer::check_piece`]); the update
/// checks again that the row still ends right before the piece, as the row stands once
/// any transaction writing it has ended (a write whose `COMMIT` was lost may land after
/// the check: what the unique `(game_id, last_seq)` key caught with one row per piece).
///
/// # Errors
/// [`StoreError::GameNotFound`] for a game that is not stored; [`moved_tail`]'s error for
/// a tail row that moved on.
async fn append_piece(conn: &mut PgConnection, game_id: Uuid, piece: &LogPiece) -> Result<()> {
    let after = piece.first_seq - 1;
    let done = sqlx::query(
        "INSERT INTO game_log_tail AS t (game_id, last_seq, pieces, bytes) \
         VALUES ($1, $2, 1, $3) ON CONFLICT (game_id) DO UPDATE SET \
         bytes = t.bytes || EXCLUDED.bytes, last_seq = EXCLUDED.last_seq, pieces = t.pieces + 1 \
         WHERE t.last_seq = $4",
    )
    .bind(game_id)
    .bind(piece.last_seq)
    .bind(&piece.bytes)
    .bind(after)
    .execute(&mut *conn)
    .await
    .map_err(|err| {
        if is_foreign_key_violation(&err) {
            StoreError::GameNotFound(game_id)
        } else {
            err.into()
        }
    })?;
    if done.rows_affected() == 0 {
        return Err(moved_tail(conn, game_id, after, piece.first_seq).await);
    }
    fold_log(conn, game_id, PgBackend::FOLD_EVERY).await?;
    Ok(())
}

/// The error of an append after `after` whose game's tail row no longer ends there:
/// [`StoreError::DuplicateSeq`] if it already holds `first_seq` (a write that landed
/// late), else [`StoreError::SeqMismatch`] with where it ends.
async fn moved_tail(
    conn: &mut PgConnection,
    game_id: Uuid,
    after: i64,
    first_seq: i64,
) -> StoreError {
    let last =
        sqlx::query_scalar::<_, i64>("SELECT last_seq FROM game_log_tail WHERE game_id = $1")
            .bind(game_id)
            .fetch_optional(&mut *conn)
            .await;
    match last {
        Ok(Some(last)) if last >= first_seq => StoreError::DuplicateSeq {
            game_id,
            seq: first_seq,
        },
        Ok(last) => StoreError::SeqMismatch {
            game_id,
            after,
            last,
        },
        Err(e) => e.into(),
    }
}

/// The writer's SQL on PostgreSQL.
pub(crate) struct PgBackend;

#[async_trait]
impl Backend for PgBackend {
    type Db = Postgres;

    /// Less often than SQLite's 32: each fold writes a new version of the game's `games`
    /// row (≈ 2–3 KB with its log), while the appends in between are HOT updates of the
    /// small tail row. In a simulation of the one-row tail with autovacuum off, 48 stored
    /// the fewest bytes per finished game (docs/STORAGE.md, "How it is stored").
    const FOLD_EVERY: i64 = 48;

    // Over 80 lines: one match arm per write operation, each one statement: the backend's SQL dialect in one place.
    async fn apply(conn: &mut PgConnection, op: &WriteOp) -> Result<bool> {
        match op {
            // The writer checks fences itself, against the rows `lock_leases` locked.
            WriteOp::CheckFence(_) => Err(StoreError::Unsupported(
                "a fence is checked by the writer, not applied",
            )),
            WriteOp::CreateRoom(r) => {
                sqlx::query(
                    "INSERT INTO rooms (code, settings, status, created_at_ms, started_at_ms, \
                     finished_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(&r.code)
                .bind(r.settings.to_string())
                .bind(r.status.as_str())
                .bind(r.created_at_ms)
                .bind(r.started_at_ms)
                .bind(r.finished_at_ms)
                .bind(r.updated_at_ms)
                .execute(&mut *conn)
                .await
                .map_err(|e| {
                    if is_unique_violation(&e) {
                        StoreError::RoomExists(r.code.clone())
                    } else {
                        e.into()
                    }
                })?;
                Ok(true)
            }
            WriteOp::UpdateRoomStatus { code, update } => {
                let done = sqlx::query(
                    "UPDATE rooms SET status = $1, started_at_ms = $2, finished_at_ms = $3, \
                     updated_at_ms = $4 WHERE code = $5",
                )
                .bind(update.status.as_str())
                .bind(update.started_at_ms)
                .bind(update.finished_at_ms)
                .bind(update.updated_at_ms)
                .bind(code)
                .execute(&mut *conn)
                .await?;
                if done.rows_affected() == 0 {
                    return Err(StoreError::RoomNotFound(code.clone()));
                }
                Ok(true)
            }
            WriteOp::UpsertSeat(s) => {
                sqlx::query(
                    "INSERT INTO seats (room_code, colour, display_name, token_hash, is_creator, \
                     joined_at_ms, bot, account_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                     ON CONFLICT (room_code, colour) DO UPDATE SET \
                     display_name = excluded.display_name, token_hash = excluded.token_hash, \
                     is_creator = excluded.is_creator, joined_at_ms = excluded.joined_at_ms, \
                     bot = excluded.bot, account_id = excluded.account_id",
                )
                .bind(&s.room_code)
                .bind(&s.colour)
                .bind(&s.display_name)
                .bind(&s.token_hash)
                .bind(s.is_creator)
                .bind(s.joined_at_ms)
                .bind(&s.bot)
                .bind(s.account_id)
                .execute(&mut *conn)
                .await
                .map_err(|e| {
                    if is_foreign_key_violation(&e) {
                        StoreError::RoomNotFound(s.room_code.clone())
                    } else {
                        e.into()
                    }
                })?;
                Ok(true)
            }
            WriteOp::DeleteSeat { room_code, colour } => {
                let done = sqlx::query("DELETE FROM seats WHERE room_code = $1 AND colour = $2")
                    .bind(room_code)
                    .bind(colour)
                    .execute(&mut *conn)
                    .await?;
                Ok(done.rows_affected() > 0)
            }
            WriteOp::CreateGame(g) => {
                sqlx::query(
                    "INSERT INTO games (id, room_code, preset, rules, rules_hash, created_at_ms, \
                     finished_at_ms, result, reason, dice) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                )
                .bind(g.id)
                .bind(&g.room_code)
                .bind(&g.preset)
                .bind(g.rules.to_string())
                .bind(&g.rules_hash)
                .bind(g.created_at_ms)
                .bind(g.finished_at_ms)
                .bind(g.result.as_ref().map(Value::to_string))
                .bind(&g.reason)
                .bind(g.dice.as_ref().map(Value::to_string))
                .execute(&mut *conn)
                .await
                .map_err(|e| {
                    if is_unique_violation(&e) {
                        StoreError::GameExists(g.id)
                    } else if is_foreign_key_violation(&e) {
                        StoreError::RoomNotFound(g.room_code.clone())
                    } else {
                        e.into()
                    }
                })?;
                if g.deadline_ms.is_some() {
                    deadlines::pg_set(conn, g.id, g.deadline_ms).await?;
                }
                Ok(true)
            }
            WriteOp::AppendLog { game_id, piece, .. } => {
                append_piece(conn, *game_id, piece).await?;
                Ok(true)
            }
            WriteOp::AppendEvents {
                game_id, events, ..
            } => {
                // Row by row, so a duplicate names its exact seq. Only taken for a lone
                // append or when isolating a failed group; grouped appends use `append_all`.
                for e in events {
                    sqlx::query(
                        "INSERT INTO game_events (game_id, seq, event, created_at_ms) \
                         VALUES ($1, $2, $3, $4)",
                    )
                    .bind(*game_id)
                    .bind(e.seq)
                    .bind(e.event.to_string())
                    .bind(e.created_at_ms)
                    .execute(&mut *conn)
                    .await
                    .map_err(|err| {
                        if is_unique_violation(&err) {
                            StoreError::DuplicateSeq {
                                game_id: *game_id,
                                seq: e.seq,
                            }
                        } else if is_foreign_key_violation(&err) {
                            StoreError::GameNotFound(*game_id)
                        } else {
                            err.into()
                        }
                    })?;
                }
                Ok(true)
            }
            WriteOp::SetDeadline {
                game_id,
                deadline_ms,
            } => {
                deadlines::pg_set(conn, *game_id, *deadline_ms).await?;
                Ok(true)
            }
            WriteOp::FinishGame {
                game_id,
                result,
                reason,
                finished_at_ms,
            } => {
                // The end's fold and the finish in ONE update of the row (one dead row
                // version, not two), the tail row deleted (a finished game has none); the
                // tail is only taken from an unfinished game. A tail reset by a fold has no
                // bytes and `last_seq` = `log_seq`: it changes neither.
                let done = sqlx::query(
                    "WITH t AS (DELETE FROM game_log_tail WHERE game_id = $4 \
                     AND EXISTS (SELECT 1 FROM games WHERE id = $4 AND finished_at_ms IS NULL) \
                     RETURNING last_seq, bytes) \
                     UPDATE games SET finished_at_ms = $1, result = $2, reason = $3, \
                     log = CASE WHEN EXISTS (SELECT 1 FROM t) \
                     THEN COALESCE(log, ''::bytea) || (SELECT bytes FROM t) ELSE log END, \
                     log_seq = COALESCE((SELECT last_seq FROM t), log_seq) \
                     WHERE id = $4 AND finished_at_ms IS NULL",
                )
                .bind(*finished_at_ms)
                .bind(result.to_string())
                .bind(reason)
                .bind(*game_id)
                .execute(&mut *conn)
                .await?;
                if done.rows_affected() == 0 {
                    let exists = sqlx::query_scalar::<_, i32>("SELECT 1 FROM games WHERE id = $1")
                        .bind(*game_id)
                        .fetch_optional(&mut *conn)
                        .await?
                        .is_some();
                    return Err(if exists {
                        StoreError::GameFinished(*game_id)
                    } else {
                        StoreError::GameNotFound(*game_id)
                    });
                }
                deadlines::pg_clear(conn, *game_id).await?;
                Ok(true)
            }
            WriteOp::RateGame {
                game_id,
                at_ms,
                rated,
            } => crate::pg_ratings::rate_game(conn, *game_id, *at_ms, rated).await,
        }
    }

    async fn append_all(conn: &mut PgConnection, appends: &[(Uuid, &[EventRecord])]) -> Result<()> {
        // Every event of the group in ONE statement (one round trip), as parallel arrays.
        let total = appends.iter().map(|(_, events)| events.len()).sum();
        let mut ids = Vec::with_capacity(total);
        let mut seqs = Vec::with_capacity(total);
        let mut payloads = Vec::with_capacity(total);
        let mut times = Vec::with_capacity(total);
        for (game_id, events) in appends {
            for e in *events {
                ids.push(*game_id);
                seqs.push(e.seq);
                payloads.push(e.event.to_string());
                times.push(e.created_at_ms);
            }
        }
        sqlx::query(
            "INSERT INTO game_events (game_id, seq, event, created_at_ms) \
             SELECT * FROM UNNEST($1::uuid[], $2::bigint[], $3::text[], $4::bigint[])",
        )
        .bind(ids)
        .bind(seqs)
        .bind(payloads)
        .bind(times)
        .execute(&mut *conn)
        .await?;
        Ok(())
    }

    async fn last_seqs(conn: &mut PgConnection, games: &[Uuid]) -> Result<Vec<StoredEnd>> {
        // One statement for the whole group, in the order given.
        // The greatest seq stored in either format: the packed log's tail (its one row's
        // `last_seq`: after a fold, the folded log's), its folded part, or (a game stored
        // before issue 28) its event rows; and the tail's length, its `pieces`.
        let rows: Vec<(i64, Option<i64>, bool, i64)> = sqlx::query_as(
            "SELECT g.n, COALESCE(\
             (SELECT last_seq FROM game_log_tail WHERE game_id = g.id), \
             (SELECT log_seq FROM games WHERE id = g.id), \
             (SELECT MAX(seq) FROM game_events WHERE game_id = g.id)), \
             EXISTS (SELECT 1 FROM game_log_tail WHERE game_id = g.id) \
             OR EXISTS (SELECT 1 FROM games WHERE id = g.id AND log_seq IS NOT NULL), \
             COALESCE((SELECT pieces FROM game_log_tail WHERE game_id = g.id), 0)::BIGINT \
             FROM UNNEST($1::uuid[]) WITH ORDINALITY AS g(id, n) ORDER BY g.n",
        )
        .bind(games.to_vec())
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(_, last, packed, tail)| ((last, packed), tail))
            .collect())
    }

    async fn append_pieces(conn: &mut PgConnection, tails: &[TailAppend]) -> Result<()> {
        // Every game's upsert in ONE statement (one round trip), as parallel arrays; the
        // writer made one `TailAppend` per game (an upsert cannot touch a row twice). A
        // row is updated only if it still ends where the writer checked (`append_piece`).
        if tails.is_empty() {
            return Ok(());
        }
        let ids: Vec<Uuid> = tails.iter().map(|t| t.game_id).collect();
        let seqs: Vec<i64> = tails.iter().map(|t| t.last_seq).collect();
        let bytes: Vec<&[u8]> = tails.iter().map(|t| t.bytes.as_slice()).collect();
        let afters: Vec<i64> = tails.iter().map(|t| t.after_seq).collect();
        let appended: Vec<Uuid> = sqlx::query_scalar(
            "WITH u AS (SELECT * FROM UNNEST($1::uuid[], $2::bigint[], $3::bytea[], $4::bigint[]) \
             AS u(id, seq, b, after)) \
             INSERT INTO game_log_tail AS t (game_id, last_seq, pieces, bytes) \
             SELECT id, seq, 1, b FROM u \
             ON CONFLICT (game_id) DO UPDATE SET \
             bytes = t.bytes || EXCLUDED.bytes, last_seq = EXCLUDED.last_seq, pieces = t.pieces + 1 \
             WHERE t.last_seq = (SELECT after FROM u WHERE u.id = t.game_id) \
             RETURNING t.game_id",
        )
        .bind(ids)
        .bind(seqs)
        .bind(bytes)
        .bind(afters)
        .fetch_all(&mut *conn)
        .await?;
        if appended.len() < tails.len() {
            let moved = tails.iter().find(|t| !appended.contains(&t.game_id));
            if let Some(t) = moved {
                return Err(moved_tail(conn, t.game_id, t.after_seq, t.after_seq + 1).await);
            }
        }
        for tail in tails.iter().filter(|t| t.fold) {
            fold_log(conn, tail.game_id, Self::FOLD_EVERY).await?;
        }
        Ok(())
    }

    /// `FOR KEY SHARE`, in `room_code` order: the writer's fence check (lock modes:
    /// `crate::pg_lease`'s module docs).
    async fn lock_leases(
        conn: &mut PgConnection,
        rooms: &[String],
    ) -> Result<Vec<(String, String, i64)>> {
        Ok(sqlx::query_as(
            "SELECT room_code, owner, epoch FROM room_leases WHERE room_code = ANY($1::text[]) \
             ORDER BY room_code FOR KEY SHARE",
        )
        .bind(rooms)
        .fetch_all(&mut *conn)
        .await?)
    }
}
