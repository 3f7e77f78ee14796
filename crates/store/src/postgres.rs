//! PostgreSQL backend.

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, Postgres};
use uuid::Uuid;

use crate::error::{Result, StoreError};
use crate::pg_lease;
use crate::pg_ratings;
use crate::pg_writer::PgBackend;
use crate::rows::{
    self, EventRow, GameRow, LogRow, RoomRow, SeatRow, EVENT_COLUMNS, GAME_COLUMNS, LATEST_GAME,
    ROOM_COLUMNS, SEAT_COLUMNS,
};
use crate::writer::Writer;
use crate::{Fence, Lease, LeaseKeeper, NodeInfo, NodeRecord, RoomWrite, Store};
use parchis_records::{
    EventRecord, GameEnd, GameQuery, GameRecord, GameStart, RoomRecord, RoomSnapshot,
    RoomStatusUpdate, SeatRecord, StoredGame,
};
use parchis_records::{RatingHistoryRecord, RatingRecord};

/// Connection pools of a [`PostgresStore`] (`--pg-pool-size`, `--pg-lease-pool-size`,
/// `--pg-lease-statement-timeout-ms` of the server; docs/CLUSTER.md, "Lease connections").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostgresOptions {
    /// Connections of the main pool: the group-commit writer takes one per group, reads,
    /// room creations and lease releases/retirements the others. Default 8.
    pub pool_connections: u32,
    /// Connections kept open for the lease statements alone (renewal, node heartbeat,
    /// the sweeper's claims and node list, adoption), so that game writes and reads, however
    /// many, never make a renewal wait for a connection. 0: no pool of their own (they
    /// share the main pool; a single node, which has no leases). Default 2.
    pub lease_connections: u32,
    /// `statement_timeout` of the lease connections (a renewal that hangs is cancelled by
    /// the database instead of holding its connection and row locks), and their
    /// `idle_in_transaction_session_timeout` (a node stopped between a renewal's `UPDATE`
    /// and its `COMMIT` loses the session, so its row locks go). Default 2 s.
    pub lease_statement_timeout: Duration,
    /// `idle_in_transaction_session_timeout` of the main pool's connections (cluster mode:
    /// the lease TTL). A node stopped (`kill -STOP`, a stall) in the middle of a room
    /// write keeps its transaction open, and with it the lease row's `FOR KEY SHARE`
    /// lock that every takeover waits for (the sweepers' claims skip a locked row): the
    /// database ends such a session after this long, so the room can be claimed.
    /// `None`: no limit (a single node). Default `None`.
    pub idle_in_transaction_timeout: Option<Duration>,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            pool_connections: 8,
            lease_connections: 2,
            lease_statement_timeout: Duration::from_secs(2),
            idle_in_transaction_timeout: None,
        }
    }
}

/// A [`Store`] on a PostgreSQL database.
///
/// Migrations from `migrations/postgres` are applied on connect (concurrent connects are
/// serialised by sqlx's migration lock). All writes go through a single group-commit writer
/// task; with the server's default `synchronous_commit = on`, a write is durable when it
/// returns. Snapshot reads run in `REPEATABLE READ` transactions. Lease statements run on
/// a small pool of their own ([`PostgresOptions::lease_connections`]), never queued
/// behind the writer or the readers.
pub struct PostgresStore {
    pool: PgPool,
    /// The lease statements' pool (the main pool when it has no connections of its own).
    leases: PgPool,
    /// What [`Store::open_lease_keeper`] connects with (`None` without a lease pool: a
    /// single node).
    keeper_options: Option<(PgConnectOptions, PostgresOptions)>,
    writer: Writer,
    /// `current_schema()` once migrated: where `tower_sessions` is (accounts' sessions).
    schema: String,
}

impl PostgresStore {
    /// The main pool and the schema of the tables (the accounts' queries and sessions).
    pub(crate) fn pool_and_schema(&self) -> (&PgPool, &str) {
        (&self.pool, &self.schema)
    }

    /// Connects to a `postgres://` or `postgresql://` URL and applies migrations.
    ///
    /// # Errors
    /// [`StoreError::InvalidUrl`] if the URL does not parse, [`StoreError::Database`] if the
    /// server cannot be reached, [`StoreError::Migrate`] if the schema cannot be brought up to
    /// date.
    pub async fn connect(url: &str) -> Result<Self> {
        Self::connect_url_with(url, PostgresOptions::default()).await
    }

    /// As [`Self::connect`], with these pools.
    ///
    /// # Errors
    /// As [`Self::connect`].
    pub async fn connect_url_with(url: &str, pools: PostgresOptions) -> Result<Self> {
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::InvalidUrl(format!("{}: {e}", crate::redact(url))))?;
        Self::connect_with_pools(options, pools).await
    }

    /// Connects with caller-built options (e.g. with a `search_path` to keep the tables in
    /// their own schema) and applies migrations.
    ///
    /// # Errors
    /// As [`Self::connect`].
    pub async fn connect_with(options: PgConnectOptions) -> Result<Self> {
        Self::connect_with_pools(options, PostgresOptions::default()).await
    }

    /// As [`Self::connect_with`], with these pools.
    ///
    /// # Errors
    /// As [`Self::connect`].
    pub async fn connect_with_pools(
        options: PgConnectOptions,
        pools: PostgresOptions,
    ) -> Result<Self> {
        let mut main = options.clone().application_name("parchis-store");
        if let Some(idle) = pools.idle_in_transaction_timeout {
            let ms = idle.as_millis().max(1).to_string();
            main = main.options([("idle_in_transaction_session_timeout", ms.as_str())]);
        }
        let pool = PgPoolOptions::new()
            .max_connections(pools.pool_connections.max(2))
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(main)
            .await?;
        sqlx::migrate!("../../migrations/postgres")
            .run(&pool)
            .await?;
        let schema: String = sqlx::query_scalar("SELECT current_schema()")
            .fetch_one(&pool)
            .await?;
        let leases = if pools.lease_connections == 0 {
            pool.clone()
        } else {
            pg_lease::lease_pool(&options, pools, pools.lease_connections).await?
        };
        tracing::info!(
            pool = pools.pool_connections,
            lease_pool = pools.lease_connections,
            "postgres store connected"
        );
        let writer = Writer::spawn::<PgBackend>(pool.clone());
        Ok(PostgresStore {
            pool,
            leases,
            keeper_options: (pools.lease_connections > 0).then_some((options, pools)),
            writer,
            schema,
        })
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

        let logs_sql = rows::log_sql(
            "JOIN rooms r ON r.code = g.room_code",
            &format!("{filter} AND {LATEST_GAME}"),
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
        let mut q_logs = sqlx::query_as::<_, LogRow<Uuid>>(&logs_sql);
        if let Some(code) = code {
            q_logs = q_logs.bind(code);
            q_rooms = q_rooms.bind(code);
            q_seats = q_seats.bind(code);
            q_games = q_games.bind(code);
            q_events = q_events.bind(code);
        }
        let rooms = q_rooms.fetch_all(&mut *tx).await?;
        let seats = q_seats.fetch_all(&mut *tx).await?;
        let games = q_games.fetch_all(&mut *tx).await?;
        let events = q_events.fetch_all(&mut *tx).await?;
        let logs = q_logs.fetch_all(&mut *tx).await?;
        tx.commit().await?;

        Ok(rows::assemble(
            rooms.into_iter().map(rows::room).collect::<Result<_>>()?,
            seats.into_iter().map(rows::seat).collect(),
            games.into_iter().map(rows::game).collect::<Result<_>>()?,
            events.into_iter().map(rows::event).collect::<Result<_>>()?,
            rows::packed_logs(logs)?,
        ))
    }
}

#[async_trait]
impl Store for PostgresStore {
    fn accounts(&self) -> Option<&dyn crate::AccountStore> {
        Some(self)
    }

    fn tournaments(&self) -> Option<&dyn crate::TournamentStore> {
        Some(self)
    }

    fn pairing(&self) -> Option<&dyn crate::PairingStore> {
        Some(self)
    }

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
        pg_lease::acquire(&self.leases, room_code, node, ttl_ms).await
    }

    async fn claim_expired(&self, node: &str, ttl_ms: i64, limit: u32) -> Result<Vec<Fence>> {
        pg_lease::claim_expired(&self.leases, node, ttl_ms, limit).await
    }

    async fn longest_expired_ms(&self) -> Result<Option<i64>> {
        pg_lease::longest_expired_ms(&self.leases).await
    }

    async fn renew_leases(&self, node: &str, ttl_ms: i64, held: &[Fence]) -> Result<Vec<Fence>> {
        pg_lease::renew(&self.leases, node, ttl_ms, held).await
    }

    async fn open_lease_keeper(&self) -> Result<Option<Box<dyn LeaseKeeper>>> {
        let Some((options, pools)) = &self.keeper_options else {
            return Ok(None);
        };
        let pool = pg_lease::lease_pool(options, *pools, pg_lease::KEEPER_CONNECTIONS).await?;
        Ok(Some(Box::new(pg_lease::Keeper::new(pool))))
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
        pg_lease::heartbeat(&self.leases, node).await
    }

    async fn live_nodes(&self, max_age_ms: i64) -> Result<Vec<NodeInfo>> {
        pg_lease::live_nodes(&self.leases, max_age_ms).await
    }

    async fn forget_node(&self, node_id: &str) -> Result<()> {
        pg_lease::forget_node(&self.leases, node_id).await
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

    async fn wait_room_writes(&self, code: &str) -> Result<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SET LOCAL lock_timeout = '2s'")
            .execute(&mut *tx)
            .await?;
        // The games' tail rows, the games, then the room: the order of a fold's and a game
        // end's own writes. An append to an existing tail row (an update of it, migration
        // 0017) checks no foreign key, so it locks that row and no `games` row.
        sqlx::query(
            "SELECT 1 FROM game_log_tail t JOIN games g ON g.id = t.game_id \
             WHERE g.room_code = $1 ORDER BY t.game_id FOR UPDATE OF t",
        )
        .bind(code)
        .fetch_all(&mut *tx)
        .await?;
        sqlx::query("SELECT 1 FROM games WHERE room_code = $1 ORDER BY id FOR UPDATE")
            .bind(code)
            .fetch_all(&mut *tx)
            .await?;
        sqlx::query("SELECT 1 FROM rooms WHERE code = $1 FOR UPDATE")
            .bind(code)
            .fetch_optional(&mut *tx)
            .await?;
        // Nothing was written: the locks are only waited for.
        tx.rollback().await?;
        Ok(())
    }

    async fn load_unfinished(&self) -> Result<Vec<RoomSnapshot>> {
        self.snapshots(None).await
    }

    async fn get_game(&self, id: Uuid) -> Result<Option<(GameRecord, Vec<EventRecord>)>> {
        Ok(self.get_game_log(id).await?.map(|g| (g.game, g.events)))
    }

    async fn get_game_log(&self, id: Uuid) -> Result<Option<StoredGame>> {
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
        let logs = sqlx::query_as::<_, LogRow<Uuid>>(&rows::log_sql("", "g.id = $1"))
            .bind(id)
            .fetch_all(&mut *tx)
            .await?;
        let log = rows::packed_logs(logs)?.remove(&id);
        let events = if log.is_some() {
            Vec::new()
        } else {
            sqlx::query_as::<_, EventRow<Uuid>>(&format!(
                "SELECT {EVENT_COLUMNS} FROM game_events e WHERE e.game_id = $1 ORDER BY e.seq"
            ))
            .bind(id)
            .fetch_all(&mut *tx)
            .await?
        };
        tx.commit().await?;
        let events = events
            .into_iter()
            .map(|row| rows::event(row).map(|(_, e)| e))
            .collect::<Result<_>>()?;
        Ok(Some(StoredGame {
            game: rows::game(game)?,
            events,
            log,
        }))
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
        if query.public_only {
            // As `room_is_public`: only a JSON `false` makes a room private.
            sql.push(
                " AND EXISTS (SELECT 1 FROM rooms r WHERE r.code = g.room_code \
                 AND COALESCE((r.settings::jsonb -> 'public') <> 'false'::jsonb, TRUE))",
            );
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

    async fn ratings_of(&self, account_id: Uuid) -> Result<Vec<RatingRecord>> {
        pg_ratings::ratings_of(&self.pool, account_id).await
    }

    async fn rating_history(
        &self,
        account_id: Uuid,
        pool: Option<&str>,
        limit: u32,
    ) -> Result<Vec<RatingHistoryRecord>> {
        pg_ratings::rating_history(&self.pool, account_id, pool, limit).await
    }

    async fn reset_ratings(&self, account_id: Uuid) -> Result<u64> {
        pg_ratings::reset_ratings(&self.pool, account_id).await
    }

    async fn leaderboard(
        &self,
        pool: &str,
        limit: u32,
        min_games: i64,
    ) -> Result<Vec<RatingRecord>> {
        pg_ratings::leaderboard(&self.pool, pool, limit, min_games).await
    }

    async fn ping(&self) -> Result<()> {
        self.writer.check_open()?;
        sqlx::query("SELECT 1 FROM rooms LIMIT 1")
            .fetch_optional(&self.pool)
            .await?;
        Ok(())
    }

    fn write_pressure(&self) -> crate::WritePressure {
        self.writer.pressure()
    }

    async fn close(&self) {
        self.writer.close().await;
        self.pool.close().await;
        self.leases.close().await;
    }
}
