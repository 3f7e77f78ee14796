//! The gateway's shared state: configuration, admission control, the open connections
//! (for the admin API) and this node ([`NodeState`]: its rooms and, in cluster mode, its
//! cluster membership). Each layer below gets only its narrow part: rooms a [`Rooms`],
//! cluster code a [`NodeState`].

use crate::config::ServerConfig;
use parchis_admission::{effective_max_connections, Admission};
use parchis_cluster::{Cluster, ClusterHost, LinkConfig, NodeState};
use parchis_room::observed::Telemetry;
use parchis_room::{Host, Kick, RoomHandle, Rooms, SingleNode};
use parchis_store::Store;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Cheap-to-clone handle on everything the handlers share.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    config: ServerConfig,
    admission: Arc<Admission>,
    node: NodeState,
    /// The tournaments' directors (issue 27).
    directors: parchis_director::Directors,
    /// Open WebSocket connections: id → kick switch (for the admin API).
    connections: Mutex<HashMap<u64, Kick>>,
    /// This node's quick-pairing tickets.
    pairing: crate::pairing_tickets::Pairing,
}

impl AppState {
    /// New state over `store`.
    /// [`crate::config::Limits::max_connections`] is clamped below the open-file limit.
    pub fn new(config: ServerConfig, store: Arc<dyn Store>) -> AppState {
        AppState::with_cluster(config, store, None)
    }

    /// New state over `store`, in cluster mode when `cluster` is given (`docs/CLUSTER.md`):
    /// the rooms' host is then the cluster ([`ClusterHost`]), else [`SingleNode`].
    pub fn with_cluster(
        config: ServerConfig,
        store: Arc<dyn Store>,
        cluster: Option<Arc<Cluster>>,
    ) -> AppState {
        parchis_telemetry::recorder::install();
        let mut limits = config.limits.clone();
        limits.max_connections =
            effective_max_connections(limits.max_connections, limits.reserved_fds);
        let admission = Arc::new(Admission::new(limits));
        let links = LinkConfig {
            outbound_queue: config.outbound_queue,
            outbound_queue_bytes: config.outbound_queue_bytes,
        };
        let host: Arc<dyn Host> = match &cluster {
            Some(c) => Arc::new(ClusterHost::new(c.clone(), admission.clone(), links)),
            None => Arc::new(SingleNode),
        };
        let rooms = Rooms::new(config.rooms_config(), store, host, Arc::new(Telemetry));
        // Cluster mode: a tournament is directed where its lease is held (docs/TOURNAMENTS.md).
        let leasing = cluster.as_ref().map(|c| parchis_director::Leasing {
            node: c.node().as_str().to_owned(),
            ttl: c.config.lease_ttl,
        });
        // Cluster mode: every published view is relayed to the other nodes' subscribers.
        let relay = cluster.as_ref().map(|c| {
            Arc::new(crate::tournament_views::NatsRelay::new(c.bus.clone()))
                as Arc<dyn parchis_director::ViewRelay>
        });
        let directors = parchis_director::Directors::clustered(rooms.clone(), leasing, relay);
        let node = NodeState::new(rooms, cluster, admission.clone(), links);
        let pairing = crate::pairing_tickets::Pairing::new(
            i64::try_from(config.pairing_claim_wait.as_millis()).unwrap_or(i64::MAX),
        );
        AppState {
            inner: Arc::new(Inner {
                admission,
                config,
                node,
                directors,
                connections: Mutex::new(HashMap::new()),
                pairing,
            }),
        }
    }

    /// This node's quick-pairing tickets ([`crate::pairing`]).
    pub fn pairing(&self) -> &crate::pairing_tickets::Pairing {
        &self.inner.pairing
    }

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// Admission control: connection slots, per-address rates and room ownership.
    pub fn admission(&self) -> &Admission {
        &self.inner.admission
    }

    /// This node: its rooms and cluster membership, as the cluster code takes it.
    pub fn node(&self) -> &NodeState {
        &self.inner.node
    }

    /// The tournaments' directors running here (issue 27).
    pub fn directors(&self) -> &parchis_director::Directors {
        &self.inner.directors
    }

    /// The rooms running here, as the room code takes them.
    pub fn rooms(&self) -> &Rooms {
        self.inner.node.rooms()
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        self.rooms().store()
    }

    /// Cluster mode's state; `None` on a single node.
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.inner.node.cluster()
    }

    /// Cancelled when the server shuts down.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.rooms().shutdown_token()
    }

    /// Tracks room actors and connection tasks, so shutdown can wait for them.
    pub fn tracker(&self) -> &TaskTracker {
        self.rooms().tracker()
    }

    /// A process-unique number (connection ids, per-room seed offsets).
    pub fn next_id(&self) -> u64 {
        self.rooms().next_id()
    }

    /// The handle of room `code`.
    pub fn room(&self, code: &str) -> Option<RoomHandle> {
        self.rooms().room(code)
    }

    /// How many rooms are registered (running here).
    pub fn room_count(&self) -> usize {
        self.rooms().room_count()
    }

    /// Whether the server holds [`ServerConfig::max_rooms`] rooms.
    pub fn is_full(&self) -> bool {
        self.rooms().is_full()
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
        self.rooms().all_rooms()
    }
}
