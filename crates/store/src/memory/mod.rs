//! In-memory backend for tests: same contract as the SQL stores (leases and node heartbeats
//! as on PostgreSQL, on the store's own monotonic clock: [`lease`]), nothing durable.

mod accounts;
mod inner;
mod lease;
mod ratings;
mod tournaments;
mod writes;

use inner::Inner;

use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use serde_json::Value;
use uuid::Uuid;

use crate::error::{Result, StoreError};
use crate::writer::{check_fence, Follows};
use crate::Store;
use parchis_records::{
    EventRecord, GameEnd, GameQuery, GameRecord, GameStart, PackedLog, RoomRecord, RoomSnapshot,
    RoomStatus, RoomStatusUpdate, SeatRecord, StoredGame,
};
use parchis_records::{Fence, Lease, NodeInfo, NodeRecord, RoomWrite};
use parchis_records::{RatingHistoryRecord, RatingRecord};

/// A [`Store`] kept in process memory, for tests of code that uses a store.
///
/// It enforces the same constraints and returns the same errors and orderings as the SQL
/// backends (the shared test suite checks this), but loses everything when dropped. Every
/// call takes a `std::sync::Mutex` briefly and never awaits while holding it.
///
/// Leases expire by the store's own clock: milliseconds of `tokio::time::Instant` since the
/// store was made (so a test with paused tokio time moves lease expiry with it).
pub struct MemoryStore {
    inner: Mutex<Inner>,
    origin: tokio::time::Instant,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore {
            inner: Mutex::default(),
            origin: tokio::time::Instant::now(),
        }
    }
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

    /// Now, in ms of the store's clock.
    fn now(&self) -> i64 {
        i64::try_from(self.origin.elapsed().as_millis()).unwrap_or(i64::MAX)
    }

    /// Locks, then applies `f` to the state and the clock's `now`.
    fn with<T>(&self, f: impl FnOnce(&mut Inner, i64) -> Result<T>) -> Result<T> {
        let now = self.now();
        f(&mut *self.lock()?, now)
    }
}

impl Inner {
    /// The greatest seq stored for the game in either format (its packed log's, else its
    /// event rows').
    fn last_seq(&self, game_id: Uuid) -> Option<i64> {
        if let Some(log) = self.logs.get(&game_id) {
            return log.last_seq();
        }
        self.events
            .get(&game_id)
            .and_then(|log| log.keys().next_back().copied())
    }

    /// The game's packed log as read back (folded part, then the tail in order).
    fn packed(&self, game_id: Uuid) -> Option<PackedLog> {
        let log = self.logs.get(&game_id)?;
        let mut bytes = log.folded.clone();
        for piece in log.tail.values() {
            bytes.extend_from_slice(piece);
        }
        Some(PackedLog {
            bytes,
            last_seq: log.last_seq()?,
        })
    }

    /// The game's stored log, in whichever format it has.
    fn stored_game(&self, game: &GameRecord) -> StoredGame {
        let log = self.packed(game.id);
        let events = match log {
            Some(_) => Vec::new(),
            None => self
                .events
                .get(&game.id)
                .map(|log| log.values().cloned().collect())
                .unwrap_or_default(),
        };
        StoredGame {
            game: game.clone(),
            events,
            log,
        }
    }

    fn set_status(&mut self, code: &str, update: RoomStatusUpdate) -> Result<()> {
        let room = self
            .rooms
            .get_mut(code)
            .ok_or_else(|| StoreError::RoomNotFound(code.to_owned()))?;
        let old = self.undo.is_some().then(|| room.clone());
        room.status = update.status;
        room.started_at_ms = update.started_at_ms;
        room.finished_at_ms = update.finished_at_ms;
        room.updated_at_ms = update.updated_at_ms;
        if let Some(old) = old {
            self.note(inner::Undo::Room(code.to_owned(), old));
        }
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
        let (events, log) = match game.as_ref().map(|g| self.stored_game(g)) {
            Some(stored) => (stored.events, stored.log),
            None => (Vec::new(), None),
        };
        RoomSnapshot {
            room: room.clone(),
            seats,
            game,
            events,
            log,
        }
    }
}

#[async_trait]
impl Store for MemoryStore {
    fn accounts(&self) -> Option<&dyn crate::AccountStore> {
        Some(self)
    }

    fn tournaments(&self) -> Option<&dyn crate::TournamentStore> {
        Some(self)
    }

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
        self.lock()?.upsert_seat(seat.clone())
    }

    async fn delete_seat(&self, room_code: &str, colour: &str) -> Result<bool> {
        let colour = colour.to_owned();
        self.lock()?
            .write(room_code, RoomWrite::DeleteSeat { colour })
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
        self.lock()?.append(game_id, Follows::Any, events).map(drop)
    }

    async fn append_after(
        &self,
        game_id: Uuid,
        after_seq: i64,
        events: Vec<EventRecord>,
    ) -> Result<()> {
        let follows = Follows::After(after_seq);
        self.lock()?.append(game_id, follows, events).map(drop)
    }

    async fn start_game(&self, start: GameStart) -> Result<()> {
        self.lock()?.start_game(start)
    }

    async fn end_game(&self, end: GameEnd) -> Result<()> {
        self.lock()?.end_game(end)
    }

    async fn set_deadline(&self, game_id: Uuid, deadline_ms: Option<i64>) -> Result<()> {
        self.lock()?.game_mut(game_id)?.deadline_ms = deadline_ms;
        Ok(())
    }

    async fn write_room(
        &self,
        room_code: &str,
        fence: Option<&Fence>,
        write: RoomWrite,
    ) -> Result<()> {
        write
            .check_room(room_code, fence)
            .map_err(StoreError::InvalidWrite)?;
        let mut inner = self.lock()?;
        if let Some(fence) = fence {
            check_fence(fence, inner.fence_current(room_code).as_ref())?;
        }
        inner.write(room_code, write).map(drop)
    }

    async fn create_room_leased(
        &self,
        room: &RoomRecord,
        node: &str,
        ttl_ms: i64,
    ) -> Result<Fence> {
        self.with(|inner, now| inner.create_leased(room, node, ttl_ms, now))
    }

    async fn acquire_lease(
        &self,
        room_code: &str,
        node: &str,
        ttl_ms: i64,
    ) -> Result<Option<Fence>> {
        self.with(|inner, now| inner.acquire_room(room_code, node, ttl_ms, now))
    }

    async fn claim_expired(&self, node: &str, ttl_ms: i64, limit: u32) -> Result<Vec<Fence>> {
        self.with(|inner, now| Ok(inner.claim_expired(node, ttl_ms, limit, now)))
    }

    async fn longest_expired_ms(&self) -> Result<Option<i64>> {
        self.with(|inner, now| Ok(inner.longest_expired_ms(now)))
    }

    async fn renew_leases(&self, node: &str, ttl_ms: i64, held: &[Fence]) -> Result<Vec<Fence>> {
        self.with(|inner, now| Ok(inner.renew(node, ttl_ms, held, now)))
    }

    async fn release_lease(&self, fence: &Fence) -> Result<bool> {
        self.with(|inner, now| Ok(inner.release(fence, now)))
    }

    async fn retire_lease(&self, fence: &Fence) -> Result<bool> {
        self.with(|inner, now| Ok(inner.retire(fence, now)))
    }

    async fn lease(&self, room_code: &str) -> Result<Option<Lease>> {
        self.with(|inner, now| Ok(inner.lease(room_code, now)))
    }

    async fn heartbeat_node(&self, node: &NodeRecord) -> Result<()> {
        self.with(|inner, now| {
            inner.heartbeat(node, now);
            Ok(())
        })
    }

    async fn live_nodes(&self, max_age_ms: i64) -> Result<Vec<NodeInfo>> {
        self.with(|inner, now| Ok(inner.live_nodes(max_age_ms, now)))
    }

    async fn forget_node(&self, node_id: &str) -> Result<()> {
        self.lock()?.nodes.remove(node_id);
        Ok(())
    }

    async fn finish_game(
        &self,
        game_id: Uuid,
        result: &Value,
        reason: &str,
        finished_at_ms: i64,
    ) -> Result<()> {
        self.lock()?
            .finish(game_id, result.clone(), reason.to_owned(), finished_at_ms)
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
        Ok(self.get_game_log(id).await?.map(|g| (g.game, g.events)))
    }

    async fn get_game_log(&self, id: Uuid) -> Result<Option<StoredGame>> {
        let inner = self.lock()?;
        Ok(inner.games.get(&id).map(|g| inner.stored_game(g)))
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
            .filter(|g| {
                !query.public_only
                    || inner
                        .rooms
                        .get(&g.room_code)
                        .is_some_and(|r| parchis_records::room_is_public(&r.settings))
            })
            .cloned()
            .collect();
        games.sort_by_key(|g| std::cmp::Reverse((g.created_at_ms, g.id)));
        games.truncate(query.limit as usize);
        Ok(games)
    }

    async fn ratings_of(&self, account_id: Uuid) -> Result<Vec<RatingRecord>> {
        Ok(self.lock()?.ratings_of(account_id))
    }

    async fn rating_history(
        &self,
        account_id: Uuid,
        pool: Option<&str>,
        limit: u32,
    ) -> Result<Vec<RatingHistoryRecord>> {
        Ok(self.lock()?.rating_history(account_id, pool, limit))
    }

    async fn reset_ratings(&self, account_id: Uuid) -> Result<u64> {
        Ok(self.lock()?.reset_ratings(account_id))
    }

    async fn leaderboard(
        &self,
        pool: &str,
        limit: u32,
        min_games: i64,
    ) -> Result<Vec<RatingRecord>> {
        Ok(self.lock()?.leaderboard(pool, limit, min_games))
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

/// The accounts (issue 26): each method locks the store and runs on its tables
/// (`accounts.rs`).
#[async_trait]
impl crate::AccountStore for MemoryStore {
    async fn create_account(&self, a: &crate::NewAccount) -> Result<()> {
        self.lock()?.create_account(a)
    }
    async fn account(&self, id: Uuid) -> Result<Option<crate::AccountRecord>> {
        self.lock()?.account(id)
    }
    async fn account_by_key(&self, key: &str) -> Result<Option<crate::AccountRecord>> {
        self.lock()?.account_by_key(key)
    }
    async fn set_password(&self, id: Uuid, hash: &str, now_ms: i64) -> Result<bool> {
        self.lock()?.set_password(id, hash, now_ms)
    }
    async fn use_recovery_code(
        &self,
        id: Uuid,
        code_hash: &str,
        hash: &str,
        now_ms: i64,
    ) -> Result<bool> {
        self.lock()?.use_recovery_code(id, code_hash, hash, now_ms)
    }
    async fn recovery_codes_left(&self, id: Uuid) -> Result<u32> {
        self.lock()?.recovery_codes_left(id)
    }
    async fn delete_account(&self, id: Uuid, d: &crate::Deletion) -> Result<bool> {
        self.lock()?.delete_account(id, d)
    }
    async fn rename_account(
        &self,
        id: Uuid,
        username: &str,
        key: &str,
        now_ms: i64,
    ) -> Result<bool> {
        self.lock()?.rename_account(id, username, key, now_ms)
    }
    async fn set_banned(&self, id: Uuid, banned_at_ms: Option<i64>) -> Result<bool> {
        self.lock()?.set_banned(id, banned_at_ms)
    }
    async fn insert_token(&self, token_hash: &str, id: Uuid, now_ms: i64) -> Result<()> {
        self.lock()?.insert_token(token_hash, id, now_ms)
    }
    async fn token_account(
        &self,
        token_hash: &str,
        now_ms: i64,
        idle_ms: i64,
    ) -> Result<Option<crate::AccountRecord>> {
        self.lock()?.token_account(token_hash, now_ms, idle_ms)
    }
    async fn delete_token(&self, token_hash: &str) -> Result<()> {
        self.lock()?.delete_token(token_hash)
    }
    async fn block(&self, id: Uuid, blocked: Uuid, now_ms: i64) -> Result<()> {
        self.lock()?.block(id, blocked, now_ms)
    }
    async fn unblock(&self, id: Uuid, blocked: Uuid) -> Result<bool> {
        self.lock()?.unblock(id, blocked)
    }
    async fn blocked(&self, id: Uuid) -> Result<Vec<Uuid>> {
        self.lock()?.blocked(id)
    }
    async fn account_games(&self, id: Uuid, limit: u32) -> Result<Vec<GameRecord>> {
        self.lock()?.account_games(id, limit)
    }
    fn session_pool(&self) -> crate::SessionPool {
        crate::SessionPool::Memory
    }
}

/// The tournaments (issue 27): each method locks the store and runs on its logs
/// (`tournaments.rs`).
#[async_trait]
impl crate::TournamentStore for MemoryStore {
    async fn create_tournament(&self, id: Uuid, at: i64, first: &Value) -> Result<()> {
        self.lock()?.create_tournament(id, at, first)
    }
    async fn append_tournament(
        &self,
        id: Uuid,
        after: i64,
        entries: &[Value],
        fence: Option<&Fence>,
    ) -> Result<()> {
        self.lock()?.append_tournament(id, after, entries, fence)
    }
    async fn tournament_log(&self, id: Uuid) -> Result<Vec<Value>> {
        Ok(self.lock()?.tournament_log(id))
    }
    async fn tournament_ids(&self, limit: u32) -> Result<Vec<Uuid>> {
        Ok(self.lock()?.tournament_ids(limit))
    }
    async fn acquire_tournament_lease(
        &self,
        id: Uuid,
        node: &str,
        ttl_ms: i64,
    ) -> Result<Option<Fence>> {
        self.with(|inner, now| inner.acquire_tournament_lease(id, node, ttl_ms, now))
    }
    async fn tournament_lease_owner(&self, id: Uuid) -> Result<Option<String>> {
        self.with(|inner, now| Ok(inner.tournament_lease_owner(id, now)))
    }
    async fn finish_tournament(&self, id: Uuid, at_ms: i64) -> Result<()> {
        self.lock()?.finish_tournament(id, at_ms);
        Ok(())
    }
    async fn unfinished_tournament_ids(&self, limit: u32) -> Result<Vec<Uuid>> {
        Ok(self.lock()?.unfinished_tournament_ids(limit, None))
    }
    async fn claimable_tournament_ids(&self, limit: u32) -> Result<Vec<Uuid>> {
        self.with(|inner, now| Ok(inner.unfinished_tournament_ids(limit, Some(now))))
    }
    async fn release_tournament_lease(&self, id: Uuid, fence: &Fence) -> Result<()> {
        self.with(|inner, now| {
            inner.release_tournament_lease(id, fence, now);
            Ok(())
        })
    }
}
