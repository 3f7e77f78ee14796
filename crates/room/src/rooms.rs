//! The narrow context rooms run in: the store, the registry of room handles, the rooms'
//! settings, the shutdown token and task tracker, process-unique ids, the observer of
//! their operational events and their [`Host`] (the interface is here, beside the context
//! that carries it; its single-node implementation is `single_node.rs`). Cheap to clone; the gateway and the
//! cluster keep one each and hand it to the rooms they start.

use crate::end::{Rehomed, RoomEnd};
use crate::{Refusal, RoomHandle};
use futures_util::future::BoxFuture;
use parchis_protocol::ErrorCode;
use parchis_room_core::dice::DiceConfig;
use parchis_room_core::reserved::{DirectorAnswer, DirectorCmd};
use parchis_room_core::{Observer, RoomLimits};
use parchis_store::{Fence, RoomRecord, Store, StoreError};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use uuid::Uuid;

/// "Whoever hosts the rooms": called when a room is stored, when it starts, when it
/// ends and when the store's fence refuses one of its writes, and nowhere else (never per
/// frame). `SingleNode` is the host of a server on its own; the cluster crate implements
/// it with leases, fencing, routing and failover, and the room never imports the cluster
/// (like an Akka sharded entity or an Orleans grain, written as if it were alone).
pub trait Host: Send + Sync + 'static {
    /// Stores the new room `record`. A cluster stores it with its first lease in one
    /// transaction (so that no sweeper claims it before its creator owns it) and returns
    /// the lease's fence, which every write of the room then carries; a single node
    /// returns `None`.
    ///
    /// # Errors
    /// The store's; `StoreError::RoomExists` when the code is taken.
    fn store_new<'a>(
        &'a self,
        rooms: &'a Rooms,
        record: &'a RoomRecord,
    ) -> BoxFuture<'a, Result<Option<Fence>, StoreError>>;

    /// A room created here with `fence` runs: from now on its lease is renewed.
    fn created(&self, rooms: &Rooms, fence: &Fence);

    /// A room stored with `fence` by [`Host::store_new`] will never run (the server is
    /// full, or it could not be served): its lease is retired, so no sweeper brings back
    /// a lobby nobody got the code of.
    fn never_ran<'a>(&'a self, rooms: &'a Rooms, fence: &'a Fence) -> BoxFuture<'a, ()>;

    /// The room of `handle` is registered and about to run: make it reachable (a cluster
    /// serves its subject and has NATS confirm the subscription before this returns).
    ///
    /// # Errors
    /// Why it cannot be reached; the room then does not run.
    fn started<'a>(
        &'a self,
        rooms: &'a Rooms,
        handle: &'a RoomHandle,
    ) -> BoxFuture<'a, Result<(), String>>;

    /// The room `code` ended here for `end`; `fence` is the lease its writes carried (`None` on a
    /// single node, or for a room restored at start without a lease); `conns` are its
    /// local connections when they must move on (lease lost, fenced, rebuild, hand-off).
    fn ended<'a>(
        &'a self,
        rooms: &'a Rooms,
        code: &'a str,
        fence: Option<Fence>,
        end: RoomEnd,
        conns: Vec<Rehomed>,
    ) -> BoxFuture<'a, ()>;

    /// A write of kind `kind` of room `room` (game `game`) was refused by the room's fence
    /// `fence` (lease epoch `epoch`); `current` is the lease's owner and epoch now. The
    /// room stops ([`RoomEnd::Fenced`]).
    fn write_fenced(
        &self,
        fence: &Fence,
        game: Option<Uuid>,
        epoch: i64,
        kind: &str,
        current: &Option<(String, i64)>,
    );

    /// Room `code` does not run here: the tournament director's command `cmd` goes to
    /// the node that runs it (a cluster routes it over NATS, as an edge forwards a seat's
    /// command) and its answer comes back. A single node has no other node:
    /// `unknown_room`.
    ///
    /// # Errors
    /// The room's refusal; `unknown_room` when no node runs it; `room_unavailable` when
    /// its node did not answer in time (the command is idempotent: the director asks
    /// again).
    fn direct_elsewhere<'a>(
        &'a self,
        _rooms: &'a Rooms,
        _code: &'a str,
        _cmd: DirectorCmd,
    ) -> BoxFuture<'a, Result<DirectorAnswer, Refusal>> {
        Box::pin(async { Err(Refusal::code(ErrorCode::UnknownRoom)) })
    }

    /// Room `code` does not run here: closes it where it runs (a tournament's
    /// `CloseRoom`). `Ok(())` once it is closed, or when it runs nowhere and is not
    /// waiting to be taken over (stored finished, or not stored).
    ///
    /// # Errors
    /// `room_unavailable` when its node did not answer, or it runs nowhere yet but is
    /// stored unfinished (a takeover will bring it back: the director asks again).
    fn close_elsewhere<'a>(
        &'a self,
        _rooms: &'a Rooms,
        _code: &'a str,
    ) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(async { Ok(()) })
    }

    /// Room `code` does not run here: closes the lobby of the quick pairing's room whose
    /// claim wait ran out where it runs (a cluster asks its node over NATS) and answers
    /// the colours whose seats had been claimed, as [`Rooms::close_lobby`] does for a
    /// room running here. A single node has no other node: `unknown_room`.
    ///
    /// # Errors
    /// The room's refusal (`game_started`: nothing changed); `unknown_room` when no node
    /// runs it (the caller reads the store); `room_unavailable` when its node did not
    /// answer (in time, or readably): whether the lobby closed is not known, the caller
    /// asks again (a closed room then runs nowhere).
    fn close_lobby_elsewhere<'a>(
        &'a self,
        _rooms: &'a Rooms,
        _code: &'a str,
    ) -> BoxFuture<'a, Result<Vec<parchis_engine::Colour>, Refusal>> {
        Box::pin(async { Err(Refusal::code(ErrorCode::UnknownRoom)) })
    }

    /// The ratings of `accounts` changed (a rated game's end or an administrator's reset
    /// was stored here; issue 26) and this node's rooms were told
    /// ([`Rooms::rerate_accounts`]): a cluster tells every other node, whose rooms where
    /// they sit show the new ratings. A single node has no other node.
    fn ratings_changed<'a>(
        &'a self,
        _rooms: &'a Rooms,
        _accounts: &'a [Uuid],
    ) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// Room `code` does not run here: its public view from the node that runs it
    /// (`None`: nobody answered).
    fn view_elsewhere<'a>(
        &'a self,
        _rooms: &'a Rooms,
        _code: &'a str,
    ) -> BoxFuture<'a, Option<parchis_protocol::RoomView>> {
        Box::pin(async { None })
    }
}

/// What every room of the process is given.
#[derive(Clone, Debug)]
pub struct RoomsConfig {
    /// Commands queued per room before senders wait.
    pub room_queue: usize,
    /// Events kept per room for resuming clients (within half a connection's outbound
    /// queue: a reload resumes from seq 0).
    pub history_len: usize,
    /// Live rooms at most (beyond: `server_full`).
    pub max_rooms: usize,
    /// Where the rooms' server seeds come from.
    pub dice: DiceConfig,
    /// Idle lobbies, presence frames, unwatched bots.
    pub limits: RoomLimits,
}

impl Default for RoomsConfig {
    /// The server's defaults: 64 queued commands, 1024 events of history, 10,000 rooms,
    /// fair dice.
    fn default() -> Self {
        RoomsConfig {
            room_queue: 64,
            history_len: 1024,
            max_rooms: 10_000,
            dice: DiceConfig::default(),
            limits: RoomLimits::default(),
        }
    }
}

/// The rooms of this process and what they run with.
#[derive(Clone)]
pub struct Rooms {
    inner: Arc<Inner>,
}

struct Inner {
    config: RoomsConfig,
    store: Arc<dyn Store>,
    host: Arc<dyn Host>,
    observer: Arc<dyn Observer>,
    /// Room code → handle. A std mutex, never held across `.await`.
    registry: Mutex<HashMap<String, RoomHandle>>,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    next_id: AtomicU64,
}

impl Rooms {
    /// Rooms over `store`, hosted by `host`, reporting to `observer`.
    pub fn new(
        config: RoomsConfig,
        store: Arc<dyn Store>,
        host: Arc<dyn Host>,
        observer: Arc<dyn Observer>,
    ) -> Rooms {
        Rooms {
            inner: Arc::new(Inner {
                config,
                store,
                host,
                observer,
                registry: Mutex::new(HashMap::new()),
                shutdown: CancellationToken::new(),
                tracker: TaskTracker::new(),
                next_id: AtomicU64::new(1),
            }),
        }
    }

    /// The rooms' settings.
    pub fn config(&self) -> &RoomsConfig {
        &self.inner.config
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    /// The host.
    pub fn host(&self) -> &Arc<dyn Host> {
        &self.inner.host
    }

    /// Where the rooms' logs and metrics go.
    pub fn observer(&self) -> &Arc<dyn Observer> {
        &self.inner.observer
    }

    /// Cancelled when the server shuts down.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.inner.shutdown.clone()
    }

    /// Tracks room actors and connection tasks, so shutdown can wait for them.
    pub fn tracker(&self) -> &TaskTracker {
        &self.inner.tracker
    }

    /// A process-unique number (connection ids, per-room seed offsets).
    pub fn next_id(&self) -> u64 {
        self.inner.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn registry(&self) -> MutexGuard<'_, HashMap<String, RoomHandle>> {
        // A poisoned registry only means a panic elsewhere; the map itself is still valid.
        self.inner
            .registry
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The handle of room `code`.
    pub fn room(&self, code: &str) -> Option<RoomHandle> {
        self.registry().get(code).cloned()
    }

    /// How many rooms are registered (running here).
    pub fn room_count(&self) -> usize {
        self.registry().len()
    }

    /// Whether [`RoomsConfig::max_rooms`] rooms run here.
    pub fn is_full(&self) -> bool {
        self.registry().len() >= self.inner.config.max_rooms
    }

    /// Registers a room; `false` if the code is taken or the server is full.
    pub fn register(&self, handle: RoomHandle) -> bool {
        let mut rooms = self.registry();
        if rooms.len() >= self.inner.config.max_rooms || rooms.contains_key(handle.code()) {
            return false;
        }
        rooms.insert(handle.code().to_owned(), handle);
        true
    }

    /// Removes a room from the registry.
    pub fn deregister(&self, code: &str) {
        self.registry().remove(code);
    }

    /// Every registered handle.
    pub fn all_rooms(&self) -> Vec<RoomHandle> {
        self.registry().values().cloned().collect()
    }
}
