//! A [`MemoryStore`] whose readiness query (`ping`) waits until the test opens its gate,
//! so `/readyz` requests can be held in flight, and whose room creations (`create_room`)
//! can be held at a gate of their own ([`GatedStore::holding_creations`]), and whose next
//! seat deletes can be made to fail ([`GatedStore::failing_seat_deletes`]); every other
//! call goes straight through.

use async_trait::async_trait;
use parchis_store::{
    EventRecord, GameEnd, GameQuery, GameRecord, GameStart, MemoryStore, Result, RoomRecord,
    RoomSnapshot, RoomStatusUpdate, SeatRecord, Store,
};
use serde_json::Value;
use tokio::sync::watch;
use uuid::Uuid;

/// One gate: the calls that come to it wait until it is open, and are counted.
pub struct Gate {
    /// `true` once calls may go on.
    open: watch::Sender<bool>,
    /// Calls that came to the gate so far (gone on or not).
    arrived: watch::Sender<usize>,
}

impl Gate {
    fn new(open: bool) -> Gate {
        Gate {
            open: watch::Sender::new(open),
            arrived: watch::Sender::new(0),
        }
    }

    /// Resolves once `n` calls came to the gate.
    pub async fn arrived_at_least(&self, n: usize) {
        let mut arrived = self.arrived.subscribe();
        arrived
            .wait_for(|a| *a >= n)
            .await
            .expect("the store lives");
    }

    /// Calls that came to the gate so far.
    pub fn arrived(&self) -> usize {
        *self.arrived.borrow()
    }

    /// Lets every call (waiting or later) go on.
    pub fn open(&self) {
        self.open.send_replace(true);
    }

    /// Counts a call and waits until the gate is open.
    async fn pass(&self) {
        self.arrived.send_modify(|a| *a += 1);
        let mut open = self.open.subscribe();
        let _ = open.wait_for(|o| *o).await;
    }
}

/// See the module docs.
pub struct GatedStore {
    inner: MemoryStore,
    /// The gate of `ping` (shut at first).
    pub pings: Gate,
    /// The gate of `create_room` (open at first unless [`GatedStore::holding_creations`]).
    pub creations: Gate,
    /// The next this many seat deletes fail as a database out of reach (nothing applied).
    pub failing_seat_deletes: std::sync::atomic::AtomicUsize,
}

impl Default for GatedStore {
    fn default() -> Self {
        GatedStore {
            inner: MemoryStore::new(),
            pings: Gate::new(false),
            creations: Gate::new(true),
            failing_seat_deletes: std::sync::atomic::AtomicUsize::new(0),
        }
    }
}

impl GatedStore {
    /// A store whose room creations wait at their gate (shut) too.
    pub fn holding_creations() -> GatedStore {
        GatedStore {
            creations: Gate::new(false),
            ..GatedStore::default()
        }
    }
}

#[async_trait]
impl Store for GatedStore {
    async fn create_room(&self, room: &RoomRecord) -> Result<()> {
        self.creations.pass().await;
        self.inner.create_room(room).await
    }
    async fn update_room_status(&self, code: &str, u: RoomStatusUpdate) -> Result<()> {
        self.inner.update_room_status(code, u).await
    }
    async fn upsert_seat(&self, seat: &SeatRecord) -> Result<()> {
        self.inner.upsert_seat(seat).await
    }
    async fn delete_seat(&self, code: &str, colour: &str) -> Result<bool> {
        use std::sync::atomic::Ordering;
        let failing = self.failing_seat_deletes.load(Ordering::SeqCst);
        if failing > 0 {
            self.failing_seat_deletes
                .store(failing - 1, Ordering::SeqCst);
            return Err(parchis_store::StoreError::from(sqlx::Error::Io(
                std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "injected"),
            )));
        }
        self.inner.delete_seat(code, colour).await
    }
    async fn create_game(&self, game: &GameRecord) -> Result<()> {
        self.inner.create_game(game).await
    }
    async fn append_events(&self, game_id: Uuid, events: Vec<EventRecord>) -> Result<()> {
        self.inner.append_events(game_id, events).await
    }
    async fn append_after(
        &self,
        game_id: Uuid,
        after: i64,
        events: Vec<EventRecord>,
    ) -> Result<()> {
        self.inner.append_after(game_id, after, events).await
    }
    async fn start_game(&self, start: GameStart) -> Result<()> {
        self.inner.start_game(start).await
    }
    async fn end_game(&self, end: GameEnd) -> Result<()> {
        self.inner.end_game(end).await
    }
    async fn set_deadline(&self, game_id: Uuid, deadline_ms: Option<i64>) -> Result<()> {
        self.inner.set_deadline(game_id, deadline_ms).await
    }
    async fn finish_game(
        &self,
        game_id: Uuid,
        result: &Value,
        reason: &str,
        finished_at_ms: i64,
    ) -> Result<()> {
        self.inner
            .finish_game(game_id, result, reason, finished_at_ms)
            .await
    }
    async fn get_room(&self, code: &str) -> Result<Option<RoomSnapshot>> {
        self.inner.get_room(code).await
    }
    async fn load_unfinished(&self) -> Result<Vec<RoomSnapshot>> {
        self.inner.load_unfinished().await
    }
    async fn get_game(&self, id: Uuid) -> Result<Option<(GameRecord, Vec<EventRecord>)>> {
        self.inner.get_game(id).await
    }
    async fn get_game_log(&self, id: Uuid) -> Result<Option<parchis_store::StoredGame>> {
        self.inner.get_game_log(id).await
    }
    async fn list_games(&self, room_code: &str) -> Result<Vec<GameRecord>> {
        self.inner.list_games(room_code).await
    }
    async fn find_games(&self, query: &GameQuery) -> Result<Vec<GameRecord>> {
        self.inner.find_games(query).await
    }
    async fn ping(&self) -> Result<()> {
        self.pings.pass().await;
        self.inner.ping().await
    }
    async fn close(&self) {
        self.inner.close().await
    }
}
