//! The cluster as the rooms' [`Host`]: a new room is stored with its first lease, served
//! on its NATS subject before it runs, renewed while it runs, and when it ends its lease
//! is retired, released or forgotten and its connections move on
//! ([`lease::room_ended`]). A fenced write is logged and counted.

use crate::ownership::{lease, observe, ttl_ms};
use crate::routing;
use crate::state::{LinkConfig, NodeState};
use crate::Cluster;
use futures_util::future::BoxFuture;
use parchis_admission::Admission;
use parchis_room::{Host, Rehomed, RoomEnd, RoomHandle, Rooms, SingleNode};
use parchis_store::{Fence, RoomRecord, StoreError};
use std::sync::Arc;
use uuid::Uuid;

/// The host of a cluster node's rooms.
pub struct ClusterHost {
    cluster: Arc<Cluster>,
    admission: Arc<Admission>,
    links: LinkConfig,
}

impl ClusterHost {
    /// The host of the rooms of the node in `cluster`.
    pub fn new(cluster: Arc<Cluster>, admission: Arc<Admission>, links: LinkConfig) -> ClusterHost {
        ClusterHost {
            cluster,
            admission,
            links,
        }
    }

    fn node(&self, rooms: &Rooms) -> NodeState {
        NodeState::new(
            rooms.clone(),
            Some(self.cluster.clone()),
            self.admission.clone(),
            self.links,
        )
    }
}

impl Host for ClusterHost {
    fn store_new<'a>(
        &'a self,
        rooms: &'a Rooms,
        record: &'a RoomRecord,
    ) -> BoxFuture<'a, Result<Option<Fence>, StoreError>> {
        Box::pin(async move {
            let ttl = ttl_ms(&self.cluster);
            let node = self.cluster.node().as_str();
            let stored = rooms.store().create_room_leased(record, node, ttl).await;
            if stored.is_ok() {
                // Looked up before it existed (a guess): found from now on.
                self.cluster.routing.unknown.forget(&record.code);
            }
            stored.map(Some)
        })
    }

    fn created(&self, _rooms: &Rooms, fence: &Fence) {
        // Renewed from now on. (A claimed or adopted room is held by the takeover from its
        // acquisition on, and not again here: it may have been lost while it was
        // restored.)
        self.cluster.ownership.hold(fence.clone());
    }

    fn never_ran<'a>(&'a self, rooms: &'a Rooms, fence: &'a Fence) -> BoxFuture<'a, ()> {
        Box::pin(async move { lease::retire(&self.node(rooms), fence).await })
    }

    fn started<'a>(
        &'a self,
        rooms: &'a Rooms,
        handle: &'a RoomHandle,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            routing::serve_room(&self.node(rooms), handle)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn ended<'a>(
        &'a self,
        rooms: &'a Rooms,
        code: &'a str,
        fence: Option<Fence>,
        end: RoomEnd,
        conns: Vec<Rehomed>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            match fence {
                Some(fence) => lease::room_ended(&self.node(rooms), fence, end, conns).await,
                // A room this node holds no lease of (restored at start before cluster
                // mode owned it): as on a single node.
                None => SingleNode::unfenced_end(rooms, code, end, conns).await,
            }
        })
    }

    fn write_fenced(
        &self,
        fence: &Fence,
        game: Option<Uuid>,
        epoch: i64,
        kind: &str,
        current: &Option<(String, i64)>,
    ) {
        observe::write_fenced(&fence.node, &fence.room_code, game, epoch, kind, current);
    }
}
