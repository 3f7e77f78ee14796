//! The [`Store`] trait shared by every backend.

use async_trait::async_trait;
use serde_json::Value;
use uuid::Uuid;

use crate::error::Result;
use crate::types::{
    EventRecord, GameEnd, GameQuery, GameRecord, GameStart, RoomRecord, RoomSnapshot,
    RoomStatusUpdate, SeatRecord,
};

/// Durable storage of rooms, seats, games and game events.
///
/// Object-safe: the server holds an `Arc<dyn Store>` (see [`open_store`](crate::open_store)).
///
/// # Guarantees shared by every backend
/// * A write that returned `Ok` is durable (committed, and fsynced on SQL backends).
/// * Each write is atomic: on `Err` nothing of it was written.
/// * On SQL backends writes from all callers go through one writer task that commits
///   everything pending in one transaction ("group commit"); an offending write fails alone.
///   Once submitted, a write completes even if the caller's future is dropped.
/// * Reads see every write that returned before the read started.
/// * Listings are ordered: seats by `(joined_at_ms, colour)`, games by `(created_at_ms, id)`,
///   events by `seq`, rooms by `(created_at_ms, code)`.
#[async_trait]
pub trait Store: Send + Sync {
    /// Inserts a new room.
    ///
    /// # Errors
    /// [`StoreError::RoomExists`](crate::StoreError::RoomExists) if the code is taken.
    async fn create_room(&self, room: &RoomRecord) -> Result<()>;

    /// Sets a room's status and its `started_at_ms`, `finished_at_ms` and `updated_at_ms`
    /// exactly as given in `update`.
    ///
    /// # Errors
    /// [`StoreError::RoomNotFound`](crate::StoreError::RoomNotFound).
    async fn update_room_status(&self, code: &str, update: RoomStatusUpdate) -> Result<()>;

    /// Inserts a seat, or replaces the seat with the same `(room_code, colour)`.
    ///
    /// # Errors
    /// [`StoreError::RoomNotFound`](crate::StoreError::RoomNotFound).
    async fn upsert_seat(&self, seat: &SeatRecord) -> Result<()>;

    /// Removes the seat `(room_code, colour)`. Returns whether a seat was removed (`false` when
    /// there was none, which is not an error).
    async fn delete_seat(&self, room_code: &str, colour: &str) -> Result<bool>;

    /// Inserts a new game. Its `finished_at_ms`, `result`, `reason` and `deadline_ms` are
    /// stored as given (normally all `None`).
    ///
    /// # Errors
    /// [`StoreError::GameExists`](crate::StoreError::GameExists) if the id is taken,
    /// [`StoreError::RoomNotFound`](crate::StoreError::RoomNotFound) if its room is missing.
    async fn create_game(&self, game: &GameRecord) -> Result<()>;

    /// Appends events to a game's log, all or nothing. Durable when it returns `Ok`.
    /// An empty batch is a no-op. Events may be given in any order; they are read back by
    /// ascending `seq`. The batch is taken by value: it travels to the writer task without
    /// a copy.
    ///
    /// # Errors
    /// [`StoreError::DuplicateSeq`](crate::StoreError::DuplicateSeq) if any `seq` is already
    /// stored for the game or repeated in `events` (then nothing of the batch is written);
    /// [`StoreError::GameNotFound`](crate::StoreError::GameNotFound).
    async fn append_events(&self, game_id: Uuid, events: Vec<EventRecord>) -> Result<()>;

    /// Appends events that must directly follow the game's last stored event: the last
    /// stored `seq` must be `after_seq` and `events` must be `after_seq + 1, after_seq + 2,
    /// …` in this order. All or nothing; durable when it returns `Ok`. An empty batch is a
    /// no-op. This is the room's write: its log position travels with every append, so a
    /// step applied twice or a second writer is refused instead of forking the log.
    ///
    /// # Errors
    /// [`StoreError::SeqMismatch`](crate::StoreError::SeqMismatch) when the batch does not
    /// follow (nothing written); [`StoreError::GameNotFound`](crate::StoreError::GameNotFound).
    async fn append_after(
        &self,
        game_id: Uuid,
        after_seq: i64,
        events: Vec<EventRecord>,
    ) -> Result<()>;

    /// Starts a game in ONE transaction ([`GameStart`]): inserts the game, sets the room's
    /// status, upserts the given seats and appends the first events. On `Err` nothing of it
    /// was written.
    ///
    /// # Errors
    /// As [`create_game`](Store::create_game), [`update_room_status`](Store::update_room_status)
    /// and [`upsert_seat`](Store::upsert_seat);
    /// [`StoreError::SeqMismatch`](crate::StoreError::SeqMismatch) if the events are empty or
    /// their `seq`s are not consecutive.
    async fn start_game(&self, start: GameStart) -> Result<()>;

    /// Ends a game in ONE transaction ([`GameEnd`]): appends the final events (checked as by
    /// [`append_after`](Store::append_after)), stores the result as
    /// [`finish_game`](Store::finish_game) does, and sets the room's status. On `Err`
    /// nothing of it was written.
    ///
    /// # Errors
    /// As [`append_after`](Store::append_after), [`finish_game`](Store::finish_game) and
    /// [`update_room_status`](Store::update_room_status).
    async fn end_game(&self, end: GameEnd) -> Result<()>;

    /// Sets (or with `None` clears) the game's absolute turn-clock deadline (unix ms).
    ///
    /// # Errors
    /// [`StoreError::GameNotFound`](crate::StoreError::GameNotFound).
    async fn set_deadline(&self, game_id: Uuid, deadline_ms: Option<i64>) -> Result<()>;

    /// Marks a game finished: stores `result`, `reason` and `finished_at_ms` and clears its
    /// deadline. The room's status is not touched (see
    /// [`update_room_status`](Store::update_room_status)).
    ///
    /// # Errors
    /// [`StoreError::GameFinished`](crate::StoreError::GameFinished) if it already finished
    /// (the first result is kept); [`StoreError::GameNotFound`](crate::StoreError::GameNotFound).
    async fn finish_game(
        &self,
        game_id: Uuid,
        result: &Value,
        reason: &str,
        finished_at_ms: i64,
    ) -> Result<()>;

    /// Loads one room (whatever its status) with its seats, its most recent game and that
    /// game's events, read from one consistent snapshot. `None` if the room does not exist.
    async fn get_room(&self, code: &str) -> Result<Option<RoomSnapshot>>;

    /// Loads every room whose status is not [`Finished`](crate::RoomStatus::Finished), as for
    /// [`get_room`](Store::get_room), ordered by `(created_at_ms, code)`. Used to recover
    /// after a restart.
    async fn load_unfinished(&self) -> Result<Vec<RoomSnapshot>>;

    /// Loads one game and all its events in `seq` order; `None` if it does not exist.
    async fn get_game(&self, id: Uuid) -> Result<Option<(GameRecord, Vec<EventRecord>)>>;

    /// Lists the games of a room, oldest first (empty if the room has none or does not exist).
    async fn list_games(&self, room_code: &str) -> Result<Vec<GameRecord>>;

    /// Lists the games that pass `query`'s filters, newest first (`created_at_ms`, then
    /// `id`, descending), at most `query.limit`, starting after `query.before`. Paging by
    /// that key is stable: games created later never shift an older page.
    async fn find_games(&self, query: &GameQuery) -> Result<Vec<GameRecord>>;

    /// Readiness probe: a cheap query that proves the store can serve reads and writes
    /// (`SELECT 1 FROM rooms LIMIT 1` on SQL backends; on SQLite the database file must also
    /// still be the one opened, not deleted or replaced). Used by `GET /readyz`.
    ///
    /// # Errors
    /// [`StoreError::Closed`](crate::StoreError::Closed) after [`close`](Store::close) or if
    /// the writer task died; [`StoreError::Unavailable`](crate::StoreError::Unavailable) when
    /// the SQLite file is gone; [`StoreError::Database`](crate::StoreError::Database) when the
    /// database does not answer (dropped, refusing connections, unreachable).
    async fn ping(&self) -> Result<()>;

    /// Stops accepting writes, waits until every write already submitted is committed, and
    /// closes the database connections. Later calls fail with
    /// [`StoreError::Closed`](crate::StoreError::Closed). Calling it twice is harmless.
    async fn close(&self);
}
