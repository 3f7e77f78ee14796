//! SQLite backend: one database file in WAL mode, bundled SQLite (no system library).
//!
//! Why one file of ~890 lines: it is the one SQL dialect of this backend — connection
//! options, the writer's statements (one arm per write operation) and the reads — kept
//! next to each other so that a schema change is made in one place.

use std::path::Path;
use std::str::FromStr;

use async_trait::async_trait;
use serde_json::Value;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Sqlite, SqlitePool};
use uuid::Uuid;

use crate::checkpoint::{wal_path, Checkpointer, SqliteOptions, BUSY_TIMEOUT};
use crate::deadlines;
use crate::error::{is_foreign_key_violation, is_unique_violation, Result, StoreError};
use crate::rows::{
    self, EventRow, GameRow, LogRow, RoomRow, SeatRow, EVENT_COLUMNS, GAME_COLUMNS, LATEST_GAME,
    ROOM_COLUMNS, SEAT_COLUMNS,
};
use crate::sqlite_ratings;
use crate::store::NEEDS_POSTGRES;
use crate::writer::{Backend, StoredEnd, TailAppend, WriteOp, Writer};
use crate::{Fence, RoomWrite, Store};
use parchis_records::{
    EventRecord, GameEnd, GameQuery, GameRecord, GameStart, LogPiece, RoomRecord, RoomSnapshot,
    RoomStatusUpdate, SeatRecord, StoredGame,
};
use parchis_records::{RatingHistoryRecord, RatingRecord};

/// Connections in the pool: one for the writer task, the rest for concurrent readers.
const MAX_CONNECTIONS: u32 = 4;

/// Page cache per connection, as a `PRAGMA cache_size` value (negative = KiB): 32 MiB,
/// so the pages that hundreds of running games append to stay in memory instead of being
/// re-read from the file (SQLite's default is 2 MiB). Filled only as pages are used.
const CACHE_SIZE_PRAGMA: &str = "-32768";
/// WAL pages at which a committing write checkpoints by itself (SQLite's default is
/// 1,000). The [`Checkpointer`] copies committed pages to the database file every
/// [`SqliteOptions::checkpoint_interval`], off the write path, so such a checkpoint has at
/// most about an interval of pages left to copy, and it truncates the WAL when the file
/// outgrows [`SqliteOptions::wal_limit_bytes`] (see [`crate::checkpoint`]). This threshold
/// (≈ 200 MiB at 4 KiB pages) is only the last resort when the checkpointer falls behind.
const WAL_AUTOCHECKPOINT_PAGES: &str = "50000";

/// A [`Store`] on one SQLite database file.
///
/// The file is opened in WAL mode with `synchronous = FULL` (a write is on disk when it
/// returns) and foreign keys enforced; migrations from `migrations/sqlite` are applied on
/// open. All writes go through a single group-commit writer task, so SQLite never sees
/// competing writers; reads run concurrently on pooled connections. A background task
/// checkpoints the WAL every second (never inside a commit) and keeps the WAL file within
/// its limit ([`SqliteOptions`]), and [`Store::close`] folds the whole WAL into the
/// database file.
pub struct SqliteStore {
    pool: SqlitePool,
    writer: Writer,
    /// `None` for an in-memory database (no WAL).
    checkpointer: Option<Checkpointer>,
    /// The database file as opened; `None` in memory. [`Store::ping`] fails once the path
    /// no longer names this file.
    file: Option<DbFile>,
}

/// The path and identity (device, inode) of an open database file. A file deleted or
/// replaced under a running server keeps working on the old inode, silently writing where
/// no restart will read: readiness must say so.
struct DbFile {
    path: std::path::PathBuf,
    identity: Option<(u64, u64)>,
}

impl DbFile {
    fn open(path: &Path) -> DbFile {
        DbFile {
            path: path.to_owned(),
            identity: Self::identity(path),
        }
    }

    #[cfg(unix)]
    fn identity(path: &Path) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }

    #[cfg(not(unix))]
    fn identity(path: &Path) -> Option<(u64, u64)> {
        std::fs::metadata(path).ok().map(|_| (0, 0))
    }

    fn check(&self) -> Result<()> {
        match Self::identity(&self.path) {
            None => Err(StoreError::Unavailable(format!(
                "database file {} is gone",
                self.path.display()
            ))),
            Some(now) if self.identity.is_some_and(|was| was != now) => {
                Err(StoreError::Unavailable(format!(
                    "database file {} was replaced by another file",
                    self.path.display()
                )))
            }
            Some(_) => Ok(()),
        }
    }
}

impl SqliteStore {
    /// The pool (the accounts' queries and sessions; their rare writes take SQLite's
    /// write lock beside the group-commit writer, waiting at most the busy timeout).
    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Opens (creating it and its tables if missing) the database file at `path`.
    /// The parent directory must exist.
    ///
    /// # Errors
    /// [`StoreError::Database`] if the file cannot be opened, [`StoreError::Migrate`] if the
    /// schema cannot be brought up to date.
    pub async fn open(path: &Path) -> Result<Self> {
        Self::open_with(path, SqliteOptions::default()).await
    }

    /// As [`Self::open`], with the WAL limit and checkpoint interval of `wal`.
    ///
    /// # Errors
    /// As [`Self::open`].
    pub async fn open_with(path: &Path, wal: SqliteOptions) -> Result<Self> {
        Self::connect_inner(SqliteConnectOptions::new().filename(path), false, wal).await
    }

    /// Opens the database named by a `sqlite:` URL (e.g. `sqlite:///var/lib/parchis.db`,
    /// `sqlite:data/parchis.db` or `sqlite::memory:`), creating the file if missing.
    ///
    /// # Errors
    /// [`StoreError::InvalidUrl`] if the URL does not parse; otherwise as [`Self::open`].
    pub async fn connect(url: &str) -> Result<Self> {
        Self::connect_url_with(url, SqliteOptions::default()).await
    }

    /// As [`Self::connect`], with the WAL limit and checkpoint interval of `wal`.
    ///
    /// # Errors
    /// As [`Self::connect`].
    pub async fn connect_url_with(url: &str, wal: SqliteOptions) -> Result<Self> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::InvalidUrl(format!("{}: {e}", crate::redact(url))))?;
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        Self::connect_inner(options, in_memory, wal).await
    }

    /// Opens a database with caller-built options. WAL mode, `synchronous = FULL`, foreign
    /// keys, `create_if_missing` and a 10 s busy timeout are always applied on top.
    ///
    /// # Errors
    /// As [`Self::open`].
    pub async fn connect_with(options: SqliteConnectOptions) -> Result<Self> {
        Self::connect_inner(options, false, SqliteOptions::default()).await
    }

    async fn connect_inner(
        options: SqliteConnectOptions,
        in_memory: bool,
        wal: SqliteOptions,
    ) -> Result<Self> {
        let options = options
            .create_if_missing(true)
            .foreign_keys(true)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(BUSY_TIMEOUT)
            .pragma("cache_size", CACHE_SIZE_PRAGMA)
            .pragma("wal_autocheckpoint", WAL_AUTOCHECKPOINT_PAGES)
            // Statement journals in memory: a group's statement of many rows touches more
            // pages than the 64 KiB SQLite keeps in memory before it spills the journal to
            // a temporary file (open, write, close and unlink at every group commit, seen
            // in a profile at 4,900 rooms).
            .pragma("temp_store", "MEMORY")
            // When SQLite starts the WAL over by itself, it cuts the file back to this.
            .pragma("journal_size_limit", wal.wal_limit_bytes.to_string());
        let path = options.get_filename().to_owned();
        let pool = if in_memory {
            // Each connection would otherwise risk its own empty database: keep exactly one,
            // forever.
            SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .test_before_acquire(false)
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_with(options)
                .await?
        } else {
            SqlitePoolOptions::new()
                .max_connections(MAX_CONNECTIONS)
                // An embedded database cannot drop a connection: no round trip to the
                // connection's thread to ping it before every transaction.
                .test_before_acquire(false)
                .connect_with(options.journal_mode(SqliteJournalMode::Wal))
                .await?
        };
        sqlx::migrate!("../../migrations/sqlite").run(&pool).await?;
        tracing::info!("sqlite store open");
        let writer = Writer::spawn::<SqliteBackend>(pool.clone());
        let checkpointer = (!in_memory)
            .then(|| Checkpointer::spawn(pool.clone(), writer.pauser(), wal_path(&path), wal));
        let file = (!in_memory).then(|| DbFile::open(&path));
        Ok(SqliteStore {
            pool,
            writer,
            checkpointer,
            file,
        })
    }

    async fn snapshots(&self, code: Option<&str>) -> Result<Vec<RoomSnapshot>> {
        let filter = if code.is_some() {
            "r.code = ?"
        } else {
            "r.status <> 'finished'"
        };
        let rooms_sql = format!(
            "SELECT {ROOM_COLUMNS} FROM rooms r WHERE {filter} ORDER BY r.created_at_ms, r.code"
        );
        let seats_sql = format!(
            "SELECT {SEAT_COLUMNS} FROM seats s JOIN rooms r ON r.code = s.room_code \
             WHERE {filter} ORDER BY s.joined_at_ms, s.colour"
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
            &format!("{} AND {LATEST_GAME}", filter.replace('?', "?1")),
        );

        // One read transaction: every query sees the same snapshot of the database.
        let mut tx = self.pool.begin().await?;
        let mut q_logs = sqlx::query_as::<_, LogRow<String>>(&logs_sql);
        let mut q_rooms = sqlx::query_as::<_, RoomRow>(&rooms_sql);
        let mut q_seats = sqlx::query_as::<_, SeatRow>(&seats_sql);
        let mut q_games = sqlx::query_as::<_, GameRow<String>>(&games_sql);
        let mut q_events = sqlx::query_as::<_, EventRow<String>>(&events_sql);
        if let Some(code) = code {
            q_rooms = q_rooms.bind(code);
            q_seats = q_seats.bind(code);
            q_games = q_games.bind(code);
            q_events = q_events.bind(code);
            q_logs = q_logs.bind(code);
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

struct SqliteBackend;

async fn insert_event(
    conn: &mut SqliteConnection,
    game_id: Uuid,
    game_id_text: &str,
    e: &EventRecord,
) -> Result<()> {
    sqlx::query("INSERT INTO game_events (game_id, seq, event, created_at_ms) VALUES (?, ?, ?, ?)")
        .bind(game_id_text)
        .bind(e.seq)
        .bind(e.event.to_string())
        .bind(e.created_at_ms)
        .execute(&mut *conn)
        .await
        .map_err(|err| {
            if is_unique_violation(&err) {
                StoreError::DuplicateSeq {
                    game_id,
                    seq: e.seq,
                }
            } else if is_foreign_key_violation(&err) {
                StoreError::GameNotFound(game_id)
            } else {
                err.into()
            }
        })?;
    Ok(())
}

/// Stores one piece of a game's packed log as a tail row, then folds the tail when it
/// holds [`SqliteBackend::FOLD_EVERY`] pieces (SQLite keeps no dead row versions: the
/// space of the rows a fold deletes is free at once, so its tail stays one row per
/// append; PostgreSQL's is one row per game, `crate::pg_writer`).
async fn append_piece(conn: &mut SqliteConnection, game_id: Uuid, piece: &LogPiece) -> Result<()> {
    sqlx::query("INSERT INTO game_log_tail (game_id, last_seq, bytes) VALUES (?, ?, ?)")
        .bind(game_id.to_string())
        .bind(piece.last_seq)
        .bind(&piece.bytes)
        .execute(&mut *conn)
        .await
        .map_err(|err| {
            if is_unique_violation(&err) {
                StoreError::DuplicateSeq {
                    game_id,
                    seq: piece.last_seq,
                }
            } else if is_foreign_key_violation(&err) {
                StoreError::GameNotFound(game_id)
            } else {
                err.into()
            }
        })?;
    fold_log(conn, game_id, SqliteBackend::FOLD_EVERY).await?;
    Ok(())
}

/// Folds a game's tail rows into `games.log` (appended in `last_seq` order, `log_seq` set,
/// the rows deleted) if there are at least `min_pieces` of them. Returns whether it
/// folded. The bytes are joined here rather than by SQL: SQLite's `||` makes text of
/// blobs.
async fn fold_log(conn: &mut SqliteConnection, game_id: Uuid, min_pieces: i64) -> Result<bool> {
    let id = game_id.to_string();
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM game_log_tail WHERE game_id = ?")
        .bind(&id)
        .fetch_one(&mut *conn)
        .await?;
    if count == 0 || count < min_pieces {
        return Ok(false);
    }
    let (log,): (Option<Vec<u8>>,) = sqlx::query_as("SELECT log FROM games WHERE id = ?")
        .bind(&id)
        .fetch_one(&mut *conn)
        .await?;
    let tail: Vec<(i64, Vec<u8>)> = sqlx::query_as(
        "SELECT last_seq, bytes FROM game_log_tail WHERE game_id = ? ORDER BY last_seq",
    )
    .bind(&id)
    .fetch_all(&mut *conn)
    .await?;
    let mut log = log.unwrap_or_default();
    let mut log_seq = None;
    for (last_seq, bytes) in tail {
        log.extend_from_slice(&bytes);
        log_seq = Some(last_seq);
    }
    sqlx::query("UPDATE games SET log = ?, log_seq = ? WHERE id = ?")
        .bind(log)
        .bind(log_seq)
        .bind(&id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM game_log_tail WHERE game_id = ?")
        .bind(&id)
        .execute(&mut *conn)
        .await?;
    Ok(true)
}

#[async_trait]
impl Backend for SqliteBackend {
    type Db = Sqlite;

    // Over 80 lines: one match arm per write operation, each one statement: the backend's SQL dialect in one place.
    async fn apply(conn: &mut SqliteConnection, op: &WriteOp) -> Result<bool> {
        match op {
            // Never submitted: `write_room` refuses a fence first.
            WriteOp::CheckFence(_) => Err(StoreError::Unsupported(NEEDS_POSTGRES)),
            WriteOp::CreateRoom(r) => {
                sqlx::query(
                    "INSERT INTO rooms (code, settings, status, created_at_ms, started_at_ms, \
                     finished_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
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
                    "UPDATE rooms SET status = ?, started_at_ms = ?, finished_at_ms = ?, \
                     updated_at_ms = ? WHERE code = ?",
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
                     joined_at_ms, bot, account_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?) \
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
                .bind(s.account_id.map(|id| id.to_string()))
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
                let done = sqlx::query("DELETE FROM seats WHERE room_code = ? AND colour = ?")
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
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                )
                .bind(g.id.to_string())
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
                    deadlines::sqlite_set(conn, g.id, g.deadline_ms).await?;
                }
                Ok(true)
            }
            WriteOp::AppendEvents {
                game_id, events, ..
            } => {
                let id = game_id.to_string();
                for e in events {
                    insert_event(conn, *game_id, &id, e).await?;
                }
                Ok(true)
            }
            WriteOp::AppendLog { game_id, piece, .. } => {
                append_piece(conn, *game_id, piece).await?;
                Ok(true)
            }
            WriteOp::SetDeadline {
                game_id,
                deadline_ms,
            } => {
                deadlines::sqlite_set(conn, *game_id, *deadline_ms).await?;
                Ok(true)
            }
            WriteOp::FinishGame {
                game_id,
                result,
                reason,
                finished_at_ms,
            } => {
                let id = game_id.to_string();
                // The end folds the whole tail (SQLite updates rows in place: two
                // statements cost no dead row version here). A finished game, refused
                // below, has no tail left: its end folded it.
                fold_log(conn, *game_id, 1).await?;
                let done = sqlx::query(
                    "UPDATE games SET finished_at_ms = ?, result = ?, reason = ? \
                     WHERE id = ? AND finished_at_ms IS NULL",
                )
                .bind(*finished_at_ms)
                .bind(result.to_string())
                .bind(reason)
                .bind(&id)
                .execute(&mut *conn)
                .await?;
                if done.rows_affected() == 0 {
                    let exists = sqlx::query_scalar::<_, i64>("SELECT 1 FROM games WHERE id = ?")
                        .bind(&id)
                        .fetch_optional(&mut *conn)
                        .await?
                        .is_some();
                    return Err(if exists {
                        StoreError::GameFinished(*game_id)
                    } else {
                        StoreError::GameNotFound(*game_id)
                    });
                }
                deadlines::sqlite_clear(conn, *game_id).await?;
                Ok(true)
            }
            WriteOp::RateGame {
                game_id,
                at_ms,
                rated,
            } => crate::sqlite_ratings::rate_game(conn, *game_id, *at_ms, rated).await,
        }
    }

    async fn append_all(
        conn: &mut SqliteConnection,
        appends: &[(Uuid, &[EventRecord])],
    ) -> Result<()> {
        // Every event of the group in ONE statement: the rows travel as one JSON array
        // `[[game_id, seq, event, created_at_ms], …]` that SQLite unpacks with `json_each`
        // (the SQLite counterpart of PostgreSQL's UNNEST). One statement instead of one
        // per event saves a round trip to sqlx's SQLite worker thread per event.
        let ids: Vec<String> = appends.iter().map(|(id, _)| id.to_string()).collect();
        let rows: Vec<(&str, i64, &Value, i64)> = appends
            .iter()
            .zip(&ids)
            .flat_map(|((_, events), id)| {
                events
                    .iter()
                    .map(move |e| (id.as_str(), e.seq, &e.event, e.created_at_ms))
            })
            .collect();
        if rows.is_empty() {
            return Ok(());
        }
        let batch = serde_json::to_string(&rows)
            .map_err(|e| StoreError::Corrupt(format!("cannot encode an event batch: {e}")))?;
        sqlx::query(
            "INSERT INTO game_events (game_id, seq, event, created_at_ms) \
             SELECT value ->> 0, value ->> 1, value -> 2, value ->> 3 FROM json_each(?)",
        )
        .bind(batch)
        .execute(&mut *conn)
        .await?;
        Ok(())
    }

    async fn last_seqs(conn: &mut SqliteConnection, games: &[Uuid]) -> Result<Vec<StoredEnd>> {
        // One statement for the whole group: the ids travel as one JSON array.
        let ids: Vec<String> = games.iter().map(Uuid::to_string).collect();
        let list = serde_json::to_string(&ids)
            .map_err(|e| StoreError::Corrupt(format!("cannot encode game ids: {e}")))?;
        // The greatest seq stored in either format: the packed log's tail, its folded
        // part, or (a game stored before issue 28) its event rows; and the tail's length.
        // Each game: one seek into `games`, two into its tail rows, and its event rows
        // only for a game with neither.
        let rows: Vec<(i64, Option<i64>, bool, i64)> = sqlx::query_as(
            "SELECT key, COALESCE(last, log_seq, \
             (SELECT MAX(seq) FROM game_events WHERE game_id = value)), \
             n > 0 OR log_seq IS NOT NULL, n \
             FROM (SELECT j.key AS key, j.value AS value, g.log_seq AS log_seq, \
             (SELECT MAX(last_seq) FROM game_log_tail WHERE game_id = j.value) AS last, \
             (SELECT COUNT(*) FROM game_log_tail WHERE game_id = j.value) AS n \
             FROM json_each(?) j LEFT JOIN games g ON g.id = j.value) \
             ORDER BY key",
        )
        .bind(list)
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(_, last, packed, tail)| ((last, packed), tail))
            .collect())
    }

    async fn append_pieces(conn: &mut SqliteConnection, tails: &[TailAppend]) -> Result<()> {
        // Every game's row in ONE statement: `[[game_id, last_seq, hex bytes], …]`
        // unpacked by `json_each` and `unhex` (JSON has no bytes), as `append_all` does
        // for event rows: one round trip to sqlx's SQLite worker thread per group instead
        // of one per piece. `OR FAIL`: a refused row stops the statement without undoing
        // its earlier rows (the writer then rolls the whole transaction back anyway).
        // SQLite still keeps a statement journal for it (a copy of every page it
        // touches, 4 % of the server's CPU at 4,900 rooms): the immediate foreign key to
        // `games` marks a statement of many rows as one that may abort, whatever the
        // conflict clause. `temp_store = MEMORY` keeps that journal off the disk.
        // (`PRAGMA defer_foreign_keys` would not do: switching it off again forgets the
        // violations counted meanwhile, and each switch expires every prepared
        // statement of the connection.)
        let rows: Vec<(String, i64, String)> = tails
            .iter()
            .map(|t| (t.game_id.to_string(), t.last_seq, hex::encode(&t.bytes)))
            .collect();
        if rows.is_empty() {
            return Ok(());
        }
        let batch = serde_json::to_string(&rows)
            .map_err(|e| StoreError::Corrupt(format!("cannot encode a piece batch: {e}")))?;
        sqlx::query(
            "INSERT OR FAIL INTO game_log_tail (game_id, last_seq, bytes) \
             SELECT value ->> 0, value ->> 1, unhex(value ->> 2) FROM json_each(?)",
        )
        .bind(batch)
        .execute(&mut *conn)
        .await?;
        for tail in tails.iter().filter(|t| t.fold) {
            fold_log(conn, tail.game_id, Self::FOLD_EVERY).await?;
        }
        Ok(())
    }

    async fn lock_leases(
        _conn: &mut SqliteConnection,
        _rooms: &[String],
    ) -> Result<Vec<(String, String, i64)>> {
        Err(StoreError::Unsupported(NEEDS_POSTGRES))
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn accounts(&self) -> Option<&dyn crate::AccountStore> {
        Some(self)
    }

    fn tournaments(&self) -> Option<&dyn crate::TournamentStore> {
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

    /// Unfenced only: SQLite has no leases (cluster mode needs PostgreSQL).
    async fn write_room(
        &self,
        room_code: &str,
        fence: Option<&Fence>,
        write: RoomWrite,
    ) -> Result<()> {
        if fence.is_some() {
            return Err(StoreError::Unsupported(NEEDS_POSTGRES));
        }
        self.writer.write_room(room_code, None, write).await
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
        Ok(self.get_game_log(id).await?.map(|g| (g.game, g.events)))
    }

    async fn get_game_log(&self, id: Uuid) -> Result<Option<StoredGame>> {
        let id_text = id.to_string();
        let mut tx = self.pool.begin().await?;
        let game = sqlx::query_as::<_, GameRow<String>>(&format!(
            "SELECT {GAME_COLUMNS} FROM games g WHERE g.id = ?"
        ))
        .bind(&id_text)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(game) = game else {
            return Ok(None);
        };
        let logs = sqlx::query_as::<_, LogRow<String>>(&rows::log_sql("", "g.id = ?1"))
            .bind(&id_text)
            .fetch_all(&mut *tx)
            .await?;
        let log = rows::packed_logs(logs)?.remove(&id);
        let events = if log.is_some() {
            Vec::new()
        } else {
            sqlx::query_as::<_, EventRow<String>>(&format!(
                "SELECT {EVENT_COLUMNS} FROM game_events e WHERE e.game_id = ? ORDER BY e.seq"
            ))
            .bind(&id_text)
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
        sqlx::query_as::<_, GameRow<String>>(&format!(
            "SELECT {GAME_COLUMNS} FROM games g WHERE g.room_code = ? ORDER BY g.created_at_ms, g.id"
        ))
        .bind(room_code)
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(rows::game)
        .collect()
    }

    async fn find_games(&self, query: &GameQuery) -> Result<Vec<GameRecord>> {
        let mut sql = sqlx::QueryBuilder::<Sqlite>::new(format!(
            "SELECT {GAME_COLUMNS} FROM games g WHERE 1 = 1"
        ));
        if let Some(room) = &query.room_code {
            sql.push(" AND g.room_code = ").push_bind(room.clone());
        }
        if query.public_only {
            // As `room_is_public`: only a JSON `false` makes a room private.
            sql.push(
                " AND EXISTS (SELECT 1 FROM rooms r WHERE r.code = g.room_code \
                 AND COALESCE(json_type(r.settings, '$.public'), '') <> 'false')",
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
                .push_bind(id.to_string())
                .push("))");
        }
        sql.push(" ORDER BY g.created_at_ms DESC, g.id DESC LIMIT ")
            .push_bind(i64::from(query.limit));
        sql.build_query_as::<GameRow<String>>()
            .fetch_all(&self.pool)
            .await?
            .into_iter()
            .map(rows::game)
            .collect()
    }

    async fn ratings_of(&self, account_id: Uuid) -> Result<Vec<RatingRecord>> {
        sqlite_ratings::ratings_of(&self.pool, account_id).await
    }

    async fn rating_history(
        &self,
        account_id: Uuid,
        pool: Option<&str>,
        limit: u32,
    ) -> Result<Vec<RatingHistoryRecord>> {
        sqlite_ratings::rating_history(&self.pool, account_id, pool, limit).await
    }

    async fn reset_ratings(&self, account_id: Uuid) -> Result<u64> {
        sqlite_ratings::reset_ratings(&self.pool, account_id).await
    }

    async fn leaderboard(
        &self,
        pool: &str,
        limit: u32,
        min_games: i64,
    ) -> Result<Vec<RatingRecord>> {
        sqlite_ratings::leaderboard(&self.pool, pool, limit, min_games).await
    }

    async fn ping(&self) -> Result<()> {
        self.writer.check_open()?;
        if let Some(file) = &self.file {
            file.check()?;
        }
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
        if let Some(c) = self
            .checkpointer
            .as_ref()
            .filter(|_| !self.pool.is_closed())
        {
            c.stop().await;
            // Everything is written: fold the whole WAL into the database file. `busy` = 1
            // means a reader still used the WAL and it could not all be copied (nothing is
            // lost: the next open reads the WAL).
            match sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(TRUNCATE)")
                .fetch_one(&self.pool)
                .await
            {
                Ok((0, _, _)) => {}
                Ok((_, wal, done)) => tracing::warn!(
                    wal_frames = wal,
                    checkpointed = done,
                    "sqlite final checkpoint incomplete: a reader was still active"
                ),
                Err(e) => tracing::warn!(error = %e, "sqlite final checkpoint failed"),
            }
        }
        self.pool.close().await;
    }
}
