//! PostgreSQL backend.

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPoolOptions};
use sqlx::{PgPool, Postgres};
use uuid::Uuid;

use crate::error::{is_foreign_key_violation, is_unique_violation, Result, StoreError};
use crate::pg_lease;
use crate::rows::{
    self, EventRow, GameRow, RoomRow, SeatRow, EVENT_COLUMNS, GAME_COLUMNS, LATEST_GAME,
    ROOM_COLUMNS, SEAT_COLUMNS,
};
use crate::types::{
    EventRecord, GameEnd, GameQuery, GameRecord, GameStart, RoomRecord, RoomSnapshot,
    RoomStatusUpdate, SeatRecord,
};
use crate::writer::{Backend, WriteOp, Writer};
use crate::{Fence, Lease, NodeInfo, NodeRecord, RoomWrite, Store};

/// Connections in the pool: one for the writer task, the rest for concurrent readers.
const MAX_CONNECTIONS: u32 = 8;

/// A [`Store`] on a PostgreSQL database.
///
/// Migrations from `migrations/postgres` are applied on connect (concurrent connects are
/// serialised by sqlx's migration lock). All writes go through a single group-commit writer
/// task; with the server's default `synchronous_commit = on`, a write is durable when it
/// returns. Snapshot reads run in `REPEATABLE READ` transactions.
pub struct PostgresStore {
    pool: PgPool,
    writer: Writer,
}

impl PostgresStore {
    /// Connects to a `postgres://` or `postgresql://` URL and applies migrations.
    ///
    /// # Errors
    /// [`StoreError::InvalidUrl`] if the URL does not parse, [`StoreError::Database`] if the
    /// server cannot be reached, [`StoreError::Migrate`] if the schema cannot be brought up to
    /// date.
    pub async fn connect(url: &str) -> Result<Self> {
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::InvalidUrl(format!("{}: {e}", crate::redact(url))))?;
        Self::connect_with(options).await
    }

    /// Connects with caller-built options (e.g. with a `search_path` to keep the tables in
    /// their own schema) and applies migrations.
    ///
    /// # Errors
    /// As [`Self::connect`].
    pub async fn connect_with(options: PgConnectOptions) -> Result<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options.application_name("parchis-store"))
            .await?;
        sqlx::migrate!("../../migrations/postgres")
            .run(&pool)
            .await?;
        tracing::info!("postgres store connected");
        let writer = Writer::spawn::<PgBackend>(pool.clone());
        Ok(PostgresStore { pool, writer })
    }

    async fn snapshots(&self, code: Option<&str>) -> Result<Vec<RoomSnapshot>> {
        let filter = if code.is_some() {
            "r.code = $1"
        } else {
            "r.status <> 'finished'"
        };
        let rooms_sql = format!(
            "SELECT {ROOM_COLUMNS} FROM rooms r WHERE {filter} ORDER BY r.created_at_ms, r.code COLLATE \"C\""
        );
        let seats_sql = format!(
            "SELECT {SEAT_COLUMNS} FROM seats s JOIN rooms r ON r.code = s.room_code \
             WHERE {filter} ORDER BY s.joined_at_ms, s.colour COLLATE \"C\""
        );
        let games_sql = format!(
            "SELECT {GAME_COLUMNS} FROM games g JOIN rooms r ON r.code = g.room_code \
             WHERE {filter} AND {LATEST_GAME}"
        );
        let events_sql = format!(
            "SELECT {EVENT_COLUMNS} FROM game_events e JOIN games g ON g.id = e.game_id \
             JOIN rooms r ON r.code = g.room_code \
             WHERE {filter} AND {LATEST_GAME} ORDER BY e.game_id, e.seq"
        );

        // Text is ordered bytewise (COLLATE "C"), as SQLite and the memory store do.
        // One snapshot for all four queries.
        let mut tx = self
            .pool
            .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .await?;
        let mut q_rooms = sqlx::query_as::<_, RoomRow>(&rooms_sql);
        let mut q_seats = sqlx::query_as::<_, SeatRow>(&seats_sql);
        let mut q_games = sqlx::query_as::<_, GameRow<Uuid>>(&games_sql);
        let mut q_events = sqlx::query_as::<_, EventRow<Uuid>>(&events_sql);
        if let Some(code) = code {
            q_rooms = q_rooms.bind(code);
            q_seats = q_seats.bind(code);
            q_games = q_games.bind(code);
            q_events = q_events.bind(code);
        }
        let rooms = q_rooms.fetch_all(&mut *tx).await?;
        let seats = q_seats.fetch_all(&mut *tx).await?;
        let games = q_games.fetch_all(&mut *tx).await?;
        let events = q_events.fetch_all(&mut *tx).await?;
        tx.commit().await?;

        Ok(rows::assemble(
            rooms.into_iter().map(rows::room).collect::<Result<_>>()?,
            seats.into_iter().map(rows::seat).collect(),
            games.into_iter().map(rows::game).collect::<Result<_>>()?,
            events.into_iter().map(rows::event).collect::<Result<_>>()?,
        ))
    }
}

/// The writer's SQL on PostgreSQL.
pub(crate) struct PgBackend;

#[async_trait]
impl Backend for PgBackend {
    type Db = Postgres;

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
                     joined_at_ms, bot) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                     ON CONFLICT (room_code, colour) DO UPDATE SET \
                     display_name = excluded.display_name, token_hash = excluded.token_hash, \
                     is_creator = excluded.is_creator, joined_at_ms = excluded.joined_at_ms, \
                     bot = excluded.bot",
                )
                .bind(&s.room_code)
                .bind(&s.colour)
                .bind(&s.display_name)
                .bind(&s.token_hash)
                .bind(s.is_creator)
                .bind(s.joined_at_ms)
                .bind(&s.bot)
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
                     finished_at_ms, result, reason, deadline_ms, dice) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
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
                .bind(g.deadline_ms)
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
                let done = sqlx::query("UPDATE games SET deadline_ms = $1 WHERE id = $2")
                    .bind(*deadline_ms)
                    .bind(*game_id)
                    .execute(&mut *conn)
                    .await?;
                if done.rows_affected() == 0 {
                    return Err(StoreError::GameNotFound(*game_id));
                }
                Ok(true)
            }
            WriteOp::FinishGame {
                game_id,
                result,
                reason,
                finished_at_ms,
            } => {
                let done = sqlx::query(
                    "UPDATE games SET finished_at_ms = $1, result = $2, reason = $3, \
                     deadline_ms = NULL WHERE id = $4 AND finished_at_ms IS NULL",
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
                Ok(true)
            }
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

    async fn last_seqs(conn: &mut PgConnection, games: &[Uuid]) -> Result<Vec<Option<i64>>> {
        // One statement for the whole group, in the order given.
        let rows: Vec<(i64, Option<i64>)> = sqlx::query_as(
            "SELECT g.n, (SELECT MAX(seq) FROM game_events WHERE game_id = g.id) \
             FROM UNNEST($1::uuid[]) WITH ORDINALITY AS g(id, n) ORDER BY g.n",
        )
        .bind(games.to_vec())
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows.into_iter().map(|(_, last)| last).collect())
    }

    async fn lock_leases(
        conn: &mut PgConnection,
        rooms: &[String],
    ) -> Result<Vec<(String, String, i64)>> {
        pg_lease::lock_leases(conn, rooms).await
    }
}

#[async_trait]
impl Store for PostgresStore {
    async fn create_room(&self, room: &RoomRecord) -> Result<()> {
        self.writer.create_room(room).await
    }

    async fn update_room_status(&self, code: &str, update: RoomStatusUpdate) -> Result<()> {
        let write = RoomWrite::RoomStatus(update);
        self.writer.room(code, write).await.map(drop)
    }

    async fn upsert_seat(&self, seat: &SeatRecord) -> Result<()> {
        let write = RoomWrite::UpsertSeat(seat.clone());
        self.writer.room(&seat.room_code, write).await.map(drop)
    }

    async fn delete_seat(&self, room_code: &str, colour: &str) -> Result<bool> {
        let colour = colour.to_owned();
        self.writer
            .room(room_code, RoomWrite::DeleteSeat { colour })
            .await
    }

    async fn create_room_leased(
        &self,
        room: &RoomRecord,
        node: &str,
        ttl_ms: i64,
    ) -> Result<Fence> {
        pg_lease::create_leased(&self.pool, room, node, ttl_ms).await
    }

    async fn write_room(
        &self,
        room_code: &str,
        fence: Option<&Fence>,
        write: RoomWrite,
    ) -> Result<()> {
        self.writer.write_room(room_code, fence, write).await
    }

    async fn acquire_lease(
        &self,
        room_code: &str,
        node: &str,
        ttl_ms: i64,
    ) -> Result<Option<Fence>> {
        pg_lease::acquire(&self.pool, room_code, node, ttl_ms).await
    }

    async fn claim_expired(&self, node: &str, ttl_ms: i64, limit: u32) -> Result<Vec<Fence>> {
        pg_lease::claim_expired(&self.pool, node, ttl_ms, limit).await
    }

    async fn renew_leases(&self, node: &str, ttl_ms: i64, held: &[Fence]) -> Result<Vec<Fence>> {
        pg_lease::renew(&self.pool, node, ttl_ms, held).await
    }

    async fn release_lease(&self, fence: &Fence) -> Result<bool> {
        pg_lease::release(&self.pool, fence).await
    }

    async fn retire_lease(&self, fence: &Fence) -> Result<bool> {
        pg_lease::retire(&self.pool, fence).await
    }

    async fn lease(&self, room_code: &str) -> Result<Option<Lease>> {
        pg_lease::lease(&self.pool, room_code).await
    }

    async fn heartbeat_node(&self, node: &NodeRecord) -> Result<()> {
        pg_lease::heartbeat(&self.pool, node).await
    }

    async fn live_nodes(&self, max_age_ms: i64) -> Result<Vec<NodeInfo>> {
        pg_lease::live_nodes(&self.pool, max_age_ms).await
    }

    async fn forget_node(&self, node_id: &str) -> Result<()> {
        pg_lease::forget_node(&self.pool, node_id).await
    }

    async fn create_game(&self, game: &GameRecord) -> Result<()> {
        self.writer.create_game(game).await
    }

    async fn append_events(&self, game_id: Uuid, events: Vec<EventRecord>) -> Result<()> {
        self.writer.append_events(game_id, events).await
    }

    async fn append_after(
        &self,
        game_id: Uuid,
        after_seq: i64,
        events: Vec<EventRecord>,
    ) -> Result<()> {
        let write = RoomWrite::Append {
            game_id,
            after_seq,
            events,
        };
        self.writer.room("", write).await.map(drop)
    }

    async fn start_game(&self, start: GameStart) -> Result<()> {
        let code = start.game.room_code.clone();
        let write = RoomWrite::Start(Box::new(start));
        self.writer.room(&code, write).await.map(drop)
    }

    async fn end_game(&self, end: GameEnd) -> Result<()> {
        let code = end.room_code.clone();
        let write = RoomWrite::End(Box::new(end));
        self.writer.room(&code, write).await.map(drop)
    }

    async fn set_deadline(&self, game_id: Uuid, deadline_ms: Option<i64>) -> Result<()> {
        let write = RoomWrite::SetDeadline {
            game_id,
            deadline_ms,
        };
        self.writer.room("", write).await.map(drop)
    }

    async fn finish_game(
        &self,
        game_id: Uuid,
        result: &Value,
        reason: &str,
        finished_at_ms: i64,
    ) -> Result<()> {
        self.writer
            .finish_game(game_id, result, reason, finished_at_ms)
            .await
    }

    async fn get_room(&self, code: &str) -> Result<Option<RoomSnapshot>> {
        Ok(self.snapshots(Some(code)).await?.into_iter().next())
    }

    async fn load_unfinished(&self) -> Result<Vec<RoomSnapshot>> {
        self.snapshots(None).await
    }

    async fn get_game(&self, id: Uuid) -> Result<Option<(GameRecord, Vec<EventRecord>)>> {
        let mut tx = self
            .pool
            .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .await?;
        let game = sqlx::query_as::<_, GameRow<Uuid>>(&format!(
            "SELECT {GAME_COLUMNS} FROM games g WHERE g.id = $1"
        ))
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(game) = game else {
            return Ok(None);
        };
        let events = sqlx::query_as::<_, EventRow<Uuid>>(&format!(
            "SELECT {EVENT_COLUMNS} FROM game_events e WHERE e.game_id = $1 ORDER BY e.seq"
        ))
        .bind(id)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        let events = events
            .into_iter()
            .map(|row| rows::event(row).map(|(_, e)| e))
            .collect::<Result<_>>()?;
        Ok(Some((rows::game(game)?, events)))
    }

    async fn list_games(&self, room_code: &str) -> Result<Vec<GameRecord>> {
        sqlx::query_as::<_, GameRow<Uuid>>(&format!(
            "SELECT {GAME_COLUMNS} FROM games g WHERE g.room_code = $1 \
             ORDER BY g.created_at_ms, g.id"
        ))
        .bind(room_code)
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(rows::game)
        .collect()
    }

    async fn find_games(&self, query: &GameQuery) -> Result<Vec<GameRecord>> {
        let mut sql = sqlx::QueryBuilder::<Postgres>::new(format!(
            "SELECT {GAME_COLUMNS} FROM games g WHERE 1 = 1"
        ));
        if let Some(room) = &query.room_code {
            sql.push(" AND g.room_code = ").push_bind(room.clone());
        }
        if let Some(preset) = &query.preset {
            sql.push(" AND g.preset = ").push_bind(preset.clone());
        }
        match query.finished {
            Some(true) => {
                sql.push(" AND g.finished_at_ms IS NOT NULL");
            }
            Some(false) => {
                sql.push(" AND g.finished_at_ms IS NULL");
            }
            None => {}
        }
        if let Some(reason) = &query.reason {
            sql.push(" AND g.reason = ").push_bind(reason.clone());
        }
        if let Some(since) = query.since_ms {
            sql.push(" AND g.created_at_ms >= ").push_bind(since);
        }
        if let Some((at, id)) = query.before {
            sql.push(" AND (g.created_at_ms < ")
                .push_bind(at)
                .push(" OR (g.created_at_ms = ")
                .push_bind(at)
                .push(" AND g.id < ")
                .push_bind(id)
                .push("))");
        }
        sql.push(" ORDER BY g.created_at_ms DESC, g.id DESC LIMIT ")
            .push_bind(i64::from(query.limit));
        sql.build_query_as::<GameRow<Uuid>>()
            .fetch_all(&self.pool)
            .await?
            .into_iter()
            .map(rows::game)
            .collect()
    }

    async fn ping(&self) -> Result<()> {
        self.writer.check_open()?;
        sqlx::query("SELECT 1 FROM rooms LIMIT 1")
            .fetch_optional(&self.pool)
            .await?;
        Ok(())
    }

    async fn close(&self) {
        self.writer.close().await;
        self.pool.close().await;
    }
}
