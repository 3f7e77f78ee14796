//! In-memory backend for tests: same contract as the SQL stores, nothing durable.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use serde_json::Value;
use uuid::Uuid;

use crate::error::{Result, StoreError};
use crate::types::{
    EventRecord, GameEnd, GameQuery, GameRecord, GameStart, RoomRecord, RoomSnapshot, RoomStatus,
    RoomStatusUpdate, SeatRecord,
};
use crate::writer::{check_batch, check_follows, Follows};
use crate::Store;

/// A [`Store`] kept in process memory, for tests of code that uses a store.
///
/// It enforces the same constraints and returns the same errors and orderings as the SQL
/// backends (the shared test suite checks this), but loses everything when dropped. Every
/// call takes a `std::sync::Mutex` briefly and never awaits while holding it.
#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    closed: bool,
    rooms: HashMap<String, RoomRecord>,
    /// Keyed by `(room_code, colour)`.
    seats: BTreeMap<(String, String), SeatRecord>,
    games: HashMap<Uuid, GameRecord>,
    /// Per game, keyed by `seq`.
    events: HashMap<Uuid, BTreeMap<i64, EventRecord>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> Result<MutexGuard<'_, Inner>> {
        // A panic while holding the lock cannot leave a half-applied write: every write
        // checks everything before changing anything.
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if inner.closed {
            return Err(StoreError::Closed);
        }
        Ok(inner)
    }
}

impl Inner {
    fn last_seq(&self, game_id: Uuid) -> Option<i64> {
        self.events
            .get(&game_id)
            .and_then(|log| log.keys().next_back().copied())
    }

    fn set_status(&mut self, code: &str, update: RoomStatusUpdate) -> Result<()> {
        let room = self
            .rooms
            .get_mut(code)
            .ok_or_else(|| StoreError::RoomNotFound(code.to_owned()))?;
        room.status = update.status;
        room.started_at_ms = update.started_at_ms;
        room.finished_at_ms = update.finished_at_ms;
        room.updated_at_ms = update.updated_at_ms;
        Ok(())
    }

    fn game_mut(&mut self, id: Uuid) -> Result<&mut GameRecord> {
        self.games.get_mut(&id).ok_or(StoreError::GameNotFound(id))
    }

    fn snapshot(&self, room: &RoomRecord) -> RoomSnapshot {
        let mut seats: Vec<SeatRecord> = self
            .seats
            .values()
            .filter(|s| s.room_code == room.code)
            .cloned()
            .collect();
        seats.sort_by(|a, b| (a.joined_at_ms, &a.colour).cmp(&(b.joined_at_ms, &b.colour)));
        let game = self
            .games
            .values()
            .filter(|g| g.room_code == room.code)
            .max_by_key(|g| (g.created_at_ms, g.id))
            .cloned();
        let events = game
            .as_ref()
            .and_then(|g| self.events.get(&g.id))
            .map(|log| log.values().cloned().collect())
            .unwrap_or_default();
        RoomSnapshot {
            room: room.clone(),
            seats,
            game,
            events,
        }
    }
}

#[async_trait]
impl Store for MemoryStore {
    async fn create_room(&self, room: &RoomRecord) -> Result<()> {
        let mut inner = self.lock()?;
        if inner.rooms.contains_key(&room.code) {
            return Err(StoreError::RoomExists(room.code.clone()));
        }
        inner.rooms.insert(room.code.clone(), room.clone());
        Ok(())
    }

    async fn update_room_status(&self, code: &str, update: RoomStatusUpdate) -> Result<()> {
        self.lock()?.set_status(code, update)
    }

    async fn upsert_seat(&self, seat: &SeatRecord) -> Result<()> {
        let mut inner = self.lock()?;
        if !inner.rooms.contains_key(&seat.room_code) {
            return Err(StoreError::RoomNotFound(seat.room_code.clone()));
        }
        inner
            .seats
            .insert((seat.room_code.clone(), seat.colour.clone()), seat.clone());
        Ok(())
    }

    async fn delete_seat(&self, room_code: &str, colour: &str) -> Result<bool> {
        let mut inner = self.lock()?;
        Ok(inner
            .seats
            .remove(&(room_code.to_owned(), colour.to_owned()))
            .is_some())
    }

    async fn create_game(&self, game: &GameRecord) -> Result<()> {
        let mut inner = self.lock()?;
        if inner.games.contains_key(&game.id) {
            return Err(StoreError::GameExists(game.id));
        }
        if !inner.rooms.contains_key(&game.room_code) {
            return Err(StoreError::RoomNotFound(game.room_code.clone()));
        }
        inner.games.insert(game.id, game.clone());
        Ok(())
    }

    async fn append_events(&self, game_id: Uuid, events: Vec<EventRecord>) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let mut inner = self.lock()?;
        if !inner.games.contains_key(&game_id) {
            return Err(StoreError::GameNotFound(game_id));
        }
        check_batch(game_id, &events)?;
        let log = inner.events.entry(game_id).or_default();
        if let Some(dup) = events.iter().find(|e| log.contains_key(&e.seq)) {
            return Err(StoreError::DuplicateSeq {
                game_id,
                seq: dup.seq,
            });
        }
        for e in events {
            log.insert(e.seq, e);
        }
        Ok(())
    }

    async fn append_after(
        &self,
        game_id: Uuid,
        after_seq: i64,
        events: Vec<EventRecord>,
    ) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let mut inner = self.lock()?;
        if !inner.games.contains_key(&game_id) {
            return Err(StoreError::GameNotFound(game_id));
        }
        check_batch(game_id, &events)?;
        let last = inner.last_seq(game_id);
        check_follows(game_id, Follows::After(after_seq), last, &events)?;
        let log = inner.events.entry(game_id).or_default();
        for e in events {
            log.insert(e.seq, e);
        }
        Ok(())
    }

    async fn start_game(&self, start: GameStart) -> Result<()> {
        let mut inner = self.lock()?;
        let game_id = start.game.id;
        // Everything is checked before anything changes: all or nothing.
        if inner.games.contains_key(&game_id) {
            return Err(StoreError::GameExists(game_id));
        }
        let code = &start.game.room_code;
        if let Some(s) = std::iter::once(code)
            .chain(start.seats.iter().map(|s| &s.room_code))
            .find(|c| !inner.rooms.contains_key(*c))
        {
            return Err(StoreError::RoomNotFound(s.clone()));
        }
        if start.events.is_empty() {
            return Err(StoreError::SeqMismatch {
                game_id,
                after: 0,
                last: None,
            });
        }
        check_batch(game_id, &start.events)?;
        check_follows(game_id, Follows::Fresh, None, &start.events)?;
        inner.set_status(code, start.room)?;
        inner.games.insert(game_id, start.game);
        for seat in start.seats {
            inner
                .seats
                .insert((seat.room_code.clone(), seat.colour.clone()), seat);
        }
        let log = inner.events.entry(game_id).or_default();
        for e in start.events {
            log.insert(e.seq, e);
        }
        Ok(())
    }

    async fn end_game(&self, end: GameEnd) -> Result<()> {
        let mut inner = self.lock()?;
        let game_id = end.game_id;
        let game = inner.game_mut(game_id)?;
        if game.finished_at_ms.is_some() {
            return Err(StoreError::GameFinished(game_id));
        }
        if !inner.rooms.contains_key(&end.room_code) {
            return Err(StoreError::RoomNotFound(end.room_code.clone()));
        }
        if !end.events.is_empty() {
            check_batch(game_id, &end.events)?;
            let last = inner.last_seq(game_id);
            check_follows(game_id, Follows::After(end.after_seq), last, &end.events)?;
        }
        inner.set_status(&end.room_code, end.room)?;
        let game = inner.game_mut(game_id)?;
        game.finished_at_ms = Some(end.finished_at_ms);
        game.result = Some(end.result);
        game.reason = Some(end.reason);
        game.deadline_ms = None;
        let log = inner.events.entry(game_id).or_default();
        for e in end.events {
            log.insert(e.seq, e);
        }
        Ok(())
    }

    async fn set_deadline(&self, game_id: Uuid, deadline_ms: Option<i64>) -> Result<()> {
        let mut inner = self.lock()?;
        inner.game_mut(game_id)?.deadline_ms = deadline_ms;
        Ok(())
    }

    async fn finish_game(
        &self,
        game_id: Uuid,
        result: &Value,
        reason: &str,
        finished_at_ms: i64,
    ) -> Result<()> {
        let mut inner = self.lock()?;
        let game = inner.game_mut(game_id)?;
        if game.finished_at_ms.is_some() {
            return Err(StoreError::GameFinished(game_id));
        }
        game.finished_at_ms = Some(finished_at_ms);
        game.result = Some(result.clone());
        game.reason = Some(reason.to_owned());
        game.deadline_ms = None;
        Ok(())
    }

    async fn get_room(&self, code: &str) -> Result<Option<RoomSnapshot>> {
        let inner = self.lock()?;
        Ok(inner.rooms.get(code).map(|room| inner.snapshot(room)))
    }

    async fn load_unfinished(&self) -> Result<Vec<RoomSnapshot>> {
        let inner = self.lock()?;
        let mut rooms: Vec<&RoomRecord> = inner
            .rooms
            .values()
            .filter(|r| r.status != RoomStatus::Finished)
            .collect();
        rooms.sort_by(|a, b| (a.created_at_ms, &a.code).cmp(&(b.created_at_ms, &b.code)));
        Ok(rooms.into_iter().map(|r| inner.snapshot(r)).collect())
    }

    async fn get_game(&self, id: Uuid) -> Result<Option<(GameRecord, Vec<EventRecord>)>> {
        let inner = self.lock()?;
        Ok(inner.games.get(&id).map(|g| {
            let events = inner
                .events
                .get(&id)
                .map(|log| log.values().cloned().collect())
                .unwrap_or_default();
            (g.clone(), events)
        }))
    }

    async fn list_games(&self, room_code: &str) -> Result<Vec<GameRecord>> {
        let inner = self.lock()?;
        let mut games: Vec<GameRecord> = inner
            .games
            .values()
            .filter(|g| g.room_code == room_code)
            .cloned()
            .collect();
        games.sort_by_key(|g| (g.created_at_ms, g.id));
        Ok(games)
    }

    async fn find_games(&self, query: &GameQuery) -> Result<Vec<GameRecord>> {
        let inner = self.lock()?;
        let mut games: Vec<GameRecord> = inner
            .games
            .values()
            .filter(|g| query.admits(g))
            .cloned()
            .collect();
        games.sort_by_key(|g| std::cmp::Reverse((g.created_at_ms, g.id)));
        games.truncate(query.limit as usize);
        Ok(games)
    }

    async fn ping(&self) -> Result<()> {
        self.lock().map(drop)
    }

    async fn close(&self) {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .closed = true;
    }
}
