//! The [`Store`] trait shared by every backend.

use async_trait::async_trait;
use serde_json::Value;
use uuid::Uuid;

use crate::error::{Result, StoreError};
use crate::writer::WritePressure;
use parchis_records::{
    EventRecord, GameEnd, GameQuery, GameRecord, GameStart, RoomRecord, RoomSnapshot,
    RoomStatusUpdate, SeatRecord, StoredGame,
};
use parchis_records::{Fence, Lease, NodeInfo, NodeRecord, RoomWrite};
use parchis_records::{RatingHistoryRecord, RatingRecord};

/// The two lease statements a node must never miss (docs/CLUSTER.md, "Lease thread"):
/// the renewal and the heartbeat, on connections opened by
/// [`Store::open_lease_keeper`] and driven by the runtime that opened them, so that no
/// amount of work on another runtime (the server's main one) delays them. Same
/// statements, same meaning as [`Store::renew_leases`] and [`Store::heartbeat_node`].
#[async_trait]
pub trait LeaseKeeper: Send + Sync {
    /// As [`Store::renew_leases`].
    ///
    /// # Errors
    /// As [`Store::renew_leases`].
    async fn renew_leases(&self, node: &str, ttl_ms: i64, held: &[Fence]) -> Result<Vec<Fence>>;

    /// As [`Store::heartbeat_node`].
    ///
    /// # Errors
    /// As [`Store::heartbeat_node`].
    async fn heartbeat_node(&self, node: &NodeRecord) -> Result<()>;

    /// The database's wall clock now, unix milliseconds (`clock_timestamp()` on
    /// PostgreSQL), for a node to compare with its own; `Ok(None)` from a keeper whose
    /// store has no clock of its own (the memory store, a fallback through the store).
    ///
    /// # Errors
    /// The database's.
    async fn clock_ms(&self) -> Result<Option<i64>> {
        Ok(None)
    }
}

/// A store's own [`Store::renew_leases`] and [`Store::heartbeat_node`] as a
/// [`LeaseKeeper`]: for a backend without connections to bind (the memory store), and the
/// fallback when a keeper's connections cannot be opened.
pub struct ViaStore(pub std::sync::Arc<dyn Store>);

#[async_trait]
impl LeaseKeeper for ViaStore {
    async fn renew_leases(&self, node: &str, ttl_ms: i64, held: &[Fence]) -> Result<Vec<Fence>> {
        self.0.renew_leases(node, ttl_ms, held).await
    }

    async fn heartbeat_node(&self, node: &NodeRecord) -> Result<()> {
        self.0.heartbeat_node(node).await
    }
}

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
///
/// # Cluster mode (docs/CLUSTER.md)
/// The lease and node methods ([`acquire_lease`](Store::acquire_lease) …
/// [`forget_node`](Store::forget_node)) and fenced [`write_room`](Store::write_room)s need
/// PostgreSQL (or the memory store, for tests); every other backend answers them with
/// [`StoreError::Unsupported`]. Lease expiry is decided by the database's clock (the memory
/// store's own monotonic clock, `tokio::time::Instant`, so tests with paused time can move
/// it); callers never compare their own clock with a lease.
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
    /// [`finish_game`](Store::finish_game) does, sets the room's status and, for a rated
    /// game ([`GameEnd::rated`]), reads its players' ratings in the pool, updates them
    /// (Weng-Lin, `parchis-ratings`) and writes one history row per player. On `Err`
    /// nothing of it was written.
    ///
    /// # Errors
    /// As [`append_after`](Store::append_after), [`finish_game`](Store::finish_game) and
    /// [`update_room_status`](Store::update_room_status);
    /// [`StoreError::InvalidWrite`] for a rated result that cannot be rated (an account
    /// twice, a pool that is not a rule set's canonical name, partners with different
    /// places, fewer than 2 or more than 4 units, a place out of range).
    async fn end_game(&self, end: GameEnd) -> Result<()>;

    /// Sets (or with `None` clears) the game's absolute turn-clock deadline (unix ms).
    ///
    /// # Errors
    /// [`StoreError::GameNotFound`](crate::StoreError::GameNotFound).
    async fn set_deadline(&self, game_id: Uuid, deadline_ms: Option<i64>) -> Result<()>;

    /// Marks a game finished: stores `result`, `reason` and `finished_at_ms`, clears its
    /// deadline (its `game_deadlines` row deleted) and folds its packed log's tail rows
    /// into `games.log` (issue 28; reads see the same log before and after). The room's status is not touched (see
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

    /// The room's one write entry point: applies `write` to room `room_code`'s rows, all
    /// or nothing, as the matching separate method does
    /// ([`RoomWrite`] names it for each variant; an empty append is a no-op).
    ///
    /// With `fence`, the write runs in the same transaction as a check of the room's lease
    /// (`SELECT owner, epoch FROM room_leases WHERE room_code = $1 FOR KEY SHARE`; every
    /// takeover locks the row `FOR UPDATE` first, so it waits for this write's commit, while
    /// a renewal, which only moves `expires_at`, does not): unless the lease's owner and
    /// epoch are exactly the fence's, nothing is written (docs/CLUSTER.md, "Fencing").
    ///
    /// # Errors
    /// [`StoreError::Fenced`] when the fence does not match (the writer lost the room);
    /// [`StoreError::InvalidWrite`] when the write's records or the fence name another room;
    /// [`StoreError::Unsupported`] for a fence on a backend without leases (SQLite);
    /// otherwise those of the matching method.
    ///
    /// The provided body (for stores without leases, e.g. test wrappers) calls the
    /// matching separate method and refuses every fence; every backend of this crate
    /// overrides it.
    async fn write_room(
        &self,
        room_code: &str,
        fence: Option<&Fence>,
        write: RoomWrite,
    ) -> Result<()> {
        if fence.is_some() {
            return Err(StoreError::Unsupported(NEEDS_POSTGRES));
        }
        write
            .check_room(room_code, None)
            .map_err(StoreError::InvalidWrite)?;
        let writes = match write {
            RoomWrite::Batch(writes) => writes,
            write => vec![write],
        };
        for write in writes {
            write_one(self, room_code, write).await?;
        }
        Ok(())
    }

    /// Creates a room and its first lease (epoch 1) for `node` in ONE transaction, so no
    /// sweeper can claim the new room before its creator owns it (cluster mode's
    /// [`create_room`](Store::create_room)).
    ///
    /// # Errors
    /// [`StoreError::RoomExists`] if the code is taken (nothing written);
    /// [`StoreError::Unsupported`] without cluster support.
    async fn create_room_leased(
        &self,
        room: &RoomRecord,
        node: &str,
        ttl_ms: i64,
    ) -> Result<Fence> {
        let _ = (room, node, ttl_ms);
        Err(StoreError::Unsupported(NEEDS_POSTGRES))
    }

    /// Acquires room `room_code`'s lease for `node` for `ttl_ms` if the room has no lease
    /// or its lease expired (`expires_at < now()`, database clock) and is not retired:
    /// sets the owner, `epoch + 1` (1 for a room's first lease) and `expires_at = now() +
    /// ttl`. Returns the new fence, or `None` when the lease is held (even by `node`
    /// itself) or retired.
    ///
    /// # Errors
    /// [`StoreError::RoomNotFound`]; [`StoreError::Unsupported`] without cluster support.
    async fn acquire_lease(
        &self,
        room_code: &str,
        node: &str,
        ttl_ms: i64,
    ) -> Result<Option<Fence>> {
        let _ = (room_code, node, ttl_ms);
        Err(StoreError::Unsupported(NEEDS_POSTGRES))
    }

    /// The sweeper's claim: atomically acquires (as [`acquire_lease`](Store::acquire_lease))
    /// up to `limit` rooms whose status is not `finished` and whose lease expired and is not
    /// retired, or that have no lease at all (expired ones first, longest expired first).
    /// Claimers on several nodes split the work (`FOR UPDATE SKIP LOCKED`); a room is never
    /// claimed twice at one epoch.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] without cluster support.
    async fn claim_expired(&self, node: &str, ttl_ms: i64, limit: u32) -> Result<Vec<Fence>> {
        let _ = (node, ttl_ms, limit);
        Err(StoreError::Unsupported(NEEDS_POSTGRES))
    }

    /// How long, in ms (database clock), the lease that expired longest ago among those
    /// [`claim_expired`](Store::claim_expired) would take has been expired: not retired,
    /// its room not `finished`. `None` when no lease is expired. (Rooms without any lease
    /// are not counted.) A shedding node's sweeper reads it to see rooms the other nodes
    /// left waiting (`docs/CLUSTER.md`, "Load shedding").
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] without cluster support.
    async fn longest_expired_ms(&self) -> Result<Option<i64>> {
        Err(StoreError::Unsupported(NEEDS_POSTGRES))
    }

    /// Renews, in one statement, every lease in `held` still owned by `node` at the held
    /// epoch (even one already expired that nobody took since: still `node`'s) and not
    /// retired: `expires_at = now() + ttl`. Returns the fences kept, in `room_code` order;
    /// a fence of `held` missing from the answer is lost (its room must stop at once).
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] without cluster support.
    async fn renew_leases(&self, node: &str, ttl_ms: i64, held: &[Fence]) -> Result<Vec<Fence>> {
        let _ = (node, ttl_ms, held);
        Err(StoreError::Unsupported(NEEDS_POSTGRES))
    }

    /// Opens a [`LeaseKeeper`] of connections of its own, bound to the tokio runtime this
    /// is awaited on (the server's lease thread). `None`: this backend has no connections
    /// to bind (the memory store), and [`renew_leases`](Store::renew_leases) and
    /// [`heartbeat_node`](Store::heartbeat_node) serve from any runtime.
    ///
    /// # Errors
    /// The connections could not be opened.
    async fn open_lease_keeper(&self) -> Result<Option<Box<dyn LeaseKeeper>>> {
        Ok(None)
    }

    /// Drain hand-off: if `fence` is still the lease, makes it expired at once (`expires_at
    /// = now()`, a millisecond back), so another node can acquire it without waiting.
    /// Returns whether it matched.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] without cluster support.
    async fn release_lease(&self, fence: &Fence) -> Result<bool> {
        let _ = fence;
        Err(StoreError::Unsupported(NEEDS_POSTGRES))
    }

    /// The room is finished or disposed: if `fence` is still the lease, retires it (and
    /// lets it expire): it is never acquired or claimed again. Returns whether it matched.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] without cluster support.
    async fn retire_lease(&self, fence: &Fence) -> Result<bool> {
        let _ = fence;
        Err(StoreError::Unsupported(NEEDS_POSTGRES))
    }

    /// Room `room_code`'s lease, `None` if it never had one.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] without cluster support.
    async fn lease(&self, room_code: &str) -> Result<Option<Lease>> {
        let _ = room_code;
        Err(StoreError::Unsupported(NEEDS_POSTGRES))
    }

    /// A node's heartbeat: inserts or updates its `cluster_nodes` row with `seen_at =
    /// now()` (its `started_at` is kept from its first heartbeat).
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] without cluster support.
    async fn heartbeat_node(&self, node: &NodeRecord) -> Result<()> {
        let _ = node;
        Err(StoreError::Unsupported(NEEDS_POSTGRES))
    }

    /// The nodes whose last heartbeat is at most `max_age_ms` old (database clock),
    /// ordered by `rooms` then `node_id` (bytewise): the least loaded first.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] without cluster support.
    async fn live_nodes(&self, max_age_ms: i64) -> Result<Vec<NodeInfo>> {
        let _ = max_age_ms;
        Err(StoreError::Unsupported(NEEDS_POSTGRES))
    }

    /// Removes a node's heartbeat row (a node leaving the cluster); no error if none.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] without cluster support.
    async fn forget_node(&self, node_id: &str) -> Result<()> {
        let _ = node_id;
        Err(StoreError::Unsupported(NEEDS_POSTGRES))
    }

    /// Loads one room (whatever its status) with its seats, its most recent game and that
    /// game's events, read from one consistent snapshot. `None` if the room does not exist.
    async fn get_room(&self, code: &str) -> Result<Option<RoomSnapshot>>;

    /// Waits until no transaction that wrote room `code` is still running, so that a
    /// [`get_room`](Store::get_room) after it sees the outcome of a write whose `COMMIT`
    /// got no answer ([`StoreError::CommitUnknown`]): that transaction may still be
    /// committing (its connection lost, the server still flushing its WAL or waiting for
    /// a synchronous standby), and a read made before it ends would not see it.
    ///
    /// PostgreSQL takes the room's games' log tail rows, the games' rows and the room's
    /// row `FOR UPDATE` (an append, a start, an end and a new seat lock one of them:
    /// through an event's, a tail row's, a game's or a seat's foreign key, or by updating
    /// a game's tail row, the game or the room), waiting at most 2 s (`lock_timeout`),
    /// and releases them at once.
    /// The default does nothing: the other stores apply a write in this process, and a
    /// failed `COMMIT` there has ended its transaction.
    ///
    /// # Errors
    /// The database's, a lock wait of more than 2 s included (SQLSTATE `55P03`): the
    /// caller cannot tell yet, and asks again later.
    async fn wait_room_writes(&self, code: &str) -> Result<()> {
        let _ = code;
        Ok(())
    }

    /// Loads every room whose status is not [`Finished`](crate::RoomStatus::Finished), as for
    /// [`get_room`](Store::get_room), ordered by `(created_at_ms, code)`. Used to recover
    /// after a restart.
    async fn load_unfinished(&self) -> Result<Vec<RoomSnapshot>>;

    /// Loads one game and its events stored as JSON rows (`game_events`), in `seq` order;
    /// `None` if it does not exist. A game stored as a packed log (issue 28) has no such
    /// rows: readers of a game's log use [`get_game_log`](Store::get_game_log).
    async fn get_game(&self, id: Uuid) -> Result<Option<(GameRecord, Vec<EventRecord>)>>;

    /// Loads one game and its log in whichever format it was stored: its packed log
    /// (`games.log` followed by its tail rows, issue 28) if it has one, else its JSON event
    /// rows in `seq` order; read from one consistent snapshot. `None` if it does not
    /// exist.
    async fn get_game_log(&self, id: Uuid) -> Result<Option<StoredGame>>;

    /// Lists the games of a room, oldest first (empty if the room has none or does not exist).
    async fn list_games(&self, room_code: &str) -> Result<Vec<GameRecord>>;

    /// Lists the games that pass `query`'s filters, newest first (`created_at_ms`, then
    /// `id`, descending), at most `query.limit`, starting after `query.before`. Paging by
    /// that key is stable: games created later never shift an older page.
    async fn find_games(&self, query: &GameQuery) -> Result<Vec<GameRecord>>;

    /// An account's ratings (issue 26), one per pool it has played rated games in,
    /// ordered by pool name (bytewise). Empty for an unknown account.
    ///
    /// # Errors
    /// The database's; [`StoreError::Unsupported`] from a store without ratings (the
    /// provided body, for test wrappers).
    async fn ratings_of(&self, account_id: Uuid) -> Result<Vec<RatingRecord>> {
        let _ = account_id;
        Err(StoreError::Unsupported(NO_RATINGS))
    }

    /// An account's rating history (one row per rated game), newest first (`at_ms`, then
    /// game id, descending), in `pool` only when given, at most `limit` rows (the caller
    /// bounds it).
    ///
    /// # Errors
    /// As [`ratings_of`](Store::ratings_of).
    async fn rating_history(
        &self,
        account_id: Uuid,
        pool: Option<&str>,
        limit: u32,
    ) -> Result<Vec<RatingHistoryRecord>> {
        let _ = (account_id, pool, limit);
        Err(StoreError::Unsupported(NO_RATINGS))
    }

    /// An administrator resets an account's ratings (issue 26): its rating and rating
    /// history rows are deleted in every pool, in one transaction; its next rated game
    /// starts from the initial rating. Returns the rating rows deleted (0: nothing to
    /// reset, also for an unknown account).
    ///
    /// # Errors
    /// As [`ratings_of`](Store::ratings_of).
    async fn reset_ratings(&self, account_id: Uuid) -> Result<u64> {
        let _ = account_id;
        Err(StoreError::Unsupported(NO_RATINGS))
    }

    /// A pool's leaderboard: the ratings with at least `min_games` games, best first by
    /// the conservative rating μ − 3σ, then more games, then account id; at most `limit`
    /// (the caller bounds it).
    ///
    /// # Errors
    /// As [`ratings_of`](Store::ratings_of).
    async fn leaderboard(
        &self,
        pool: &str,
        limit: u32,
        min_games: i64,
    ) -> Result<Vec<RatingRecord>> {
        let _ = (pool, limit, min_games);
        Err(StoreError::Unsupported(NO_RATINGS))
    }

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

    /// How loaded the store's writer is right now (queued write requests, how long the
    /// current or last group commit took), read without waiting: cluster mode's load
    /// shedding watches it. Stores without a writer task answer "idle" (the default).
    fn write_pressure(&self) -> WritePressure {
        WritePressure::default()
    }

    /// The accounts of this store (issue 26), `None` when it keeps none (a test wrapper
    /// that does not pass them on): the server then answers the account routes 503.
    fn accounts(&self) -> Option<&dyn crate::AccountStore> {
        None
    }

    /// The tournaments of this store (issue 27), `None` when it keeps none (a test wrapper
    /// that does not pass them on): the server then answers the tournament routes 503.
    fn tournaments(&self) -> Option<&dyn crate::TournamentStore> {
        None
    }

    /// Quick pairing's pool in the database (cluster mode, issue 26), `None` when the
    /// server keeps its pool in memory (SQLite, memory: a single node).
    fn pairing(&self) -> Option<&dyn crate::PairingStore> {
        None
    }

    /// Stops accepting writes, waits until every write already submitted is committed, and
    /// closes the database connections. Later calls fail with
    /// [`StoreError::Closed`](crate::StoreError::Closed). Calling it twice is harmless.
    async fn close(&self);
}

/// The [`StoreError::Unsupported`] message of the rating reads of a store without them.
pub(crate) const NO_RATINGS: &str = "this store keeps no ratings";

/// The [`StoreError::Unsupported`] message of the lease and node methods on SQLite.
pub(crate) const NEEDS_POSTGRES: &str = "cluster mode needs PostgreSQL";

/// One write of [`Store::write_room`]'s provided body (a batch is applied write by
/// write there: that body is for test wrappers, never a backend of this crate).
///
/// # Errors
/// Those of the matching separate method; [`StoreError::InvalidWrite`] for a batch.
async fn write_one<S: Store + ?Sized>(store: &S, room_code: &str, write: RoomWrite) -> Result<()> {
    match write {
        RoomWrite::UpsertSeat(seat) => store.upsert_seat(&seat).await,
        RoomWrite::DeleteSeat { colour } => store.delete_seat(room_code, &colour).await.map(drop),
        RoomWrite::Append {
            game_id,
            after_seq,
            events,
        } => store.append_after(game_id, after_seq, events).await,
        RoomWrite::AppendLog { .. } => Err(StoreError::Unsupported(
            "a packed log piece needs a backend of parchis-store",
        )),
        RoomWrite::Start(start) => store.start_game(*start).await,
        RoomWrite::End(end) => store.end_game(*end).await,
        RoomWrite::SetDeadline {
            game_id,
            deadline_ms,
        } => store.set_deadline(game_id, deadline_ms).await,
        RoomWrite::RoomStatus(update) => store.update_room_status(room_code, update).await,
        RoomWrite::Batch(_) => Err(StoreError::InvalidWrite("a batch inside a batch".into())),
    }
}
