//! Shared server state: configuration, store, the registry of room handles, shutdown.

use crate::admission::{effective_max_connections, Admission};
use crate::cluster::Cluster;
use crate::config::ServerConfig;
use crate::room::{Kick, RoomHandle};
use parchis_store::Store;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Cheap-to-clone handle on everything the handlers and actors share.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    config: ServerConfig,
    admission: Admission,
    store: Arc<dyn Store>,
    /// Cluster mode's NATS connection and node identity; `None` on a single node.
    cluster: Option<Arc<Cluster>>,
    /// Room code → handle. A std mutex, never held across `.await`.
    rooms: Mutex<HashMap<String, RoomHandle>>,
    /// Open WebSocket connections: id → kick switch (for the admin API).
    connections: Mutex<HashMap<u64, Kick>>,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    next_id: AtomicU64,
}

impl AppState {
    /// New state over `store`.
    /// [`crate::config::Limits::max_connections`] is clamped below the open-file limit.
    pub fn new(config: ServerConfig, store: Arc<dyn Store>) -> AppState {
        AppState::with_cluster(config, store, None)
    }

    /// New state over `store`, in cluster mode when `cluster` is given (`docs/CLUSTER.md`).
    pub fn with_cluster(
        config: ServerConfig,
        store: Arc<dyn Store>,
        cluster: Option<Arc<Cluster>>,
    ) -> AppState {
        crate::metrics::install();
        let mut limits = config.limits.clone();
        limits.max_connections =
            effective_max_connections(limits.max_connections, limits.reserved_fds);
        AppState {
            inner: Arc::new(Inner {
                admission: Admission::new(limits),
                config,
                store,
                cluster,
                rooms: Mutex::new(HashMap::new()),
                connections: Mutex::new(HashMap::new()),
                shutdown: CancellationToken::new(),
                tracker: TaskTracker::new(),
                next_id: AtomicU64::new(1),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// Admission control: connection slots, per-address rates and room ownership.
    pub fn admission(&self) -> &Admission {
        &self.inner.admission
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    /// Cluster mode's state; `None` on a single node.
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.inner.cluster.as_ref()
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

    fn rooms(&self) -> MutexGuard<'_, HashMap<String, RoomHandle>> {
        // A poisoned registry only means a panic elsewhere; the map itself is still valid.
        self.inner.rooms.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The handle of room `code`.
    pub fn room(&self, code: &str) -> Option<RoomHandle> {
        self.rooms().get(code).cloned()
    }

    /// How many rooms are registered (running here).
    pub fn room_count(&self) -> usize {
        self.rooms().len()
    }

    /// Whether the server holds [`ServerConfig::max_rooms`] rooms.
    pub fn is_full(&self) -> bool {
        self.rooms().len() >= self.inner.config.max_rooms
    }

    /// Registers a room; `false` if the code is taken or the server is full.
    pub fn register(&self, handle: RoomHandle) -> bool {
        let mut rooms = self.rooms();
        if rooms.len() >= self.inner.config.max_rooms || rooms.contains_key(handle.code()) {
            return false;
        }
        rooms.insert(handle.code().to_owned(), handle);
        true
    }

    /// Removes a room from the registry.
    pub fn deregister(&self, code: &str) {
        self.rooms().remove(code);
    }

    fn connections(&self) -> MutexGuard<'_, HashMap<u64, Kick>> {
        self.inner
            .connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Records an open connection and its kick switch.
    pub fn connection_opened(&self, conn: u64, kick: Kick) {
        self.connections().insert(conn, kick);
    }

    /// Forgets a closed connection.
    pub fn connection_closed(&self, conn: u64) {
        self.connections().remove(&conn);
    }

    /// The kick switch of open connection `conn`.
    pub fn connection(&self, conn: u64) -> Option<Kick> {
        self.connections().get(&conn).cloned()
    }

    /// Every registered handle.
    pub fn all_rooms(&self) -> Vec<RoomHandle> {
        self.rooms().values().cloned().collect()
    }
}
