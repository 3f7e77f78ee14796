//! The host of a server on its own ([`SingleNode`]): rooms are stored without a lease and
//! are reachable as soon as they are registered. A room that stops to be rebuilt from its
//! stored log is rebuilt here, in place ([`crate::rebuild`]); the connections of a room
//! that stops are told to reconnect.

use crate::end::{Rehomed, RoomEnd};
use crate::observed::Telemetry;
use crate::rooms::{Host, Rooms, RoomsConfig};
use crate::RoomHandle;
use futures_util::future::BoxFuture;
use parchis_protocol::close_code;
use parchis_store::{Fence, RoomRecord, Store, StoreError};
use std::sync::Arc;
use uuid::Uuid;

/// The host of a server on its own.
#[derive(Clone, Copy, Debug, Default)]
pub struct SingleNode;

impl SingleNode {
    /// Rooms of a server on its own over `store`, reporting to `parchis-telemetry`
    /// ([`Telemetry`]).
    pub fn rooms(config: RoomsConfig, store: Arc<dyn Store>) -> Rooms {
        Rooms::new(config, store, Arc::new(SingleNode), Arc::new(Telemetry))
    }

    /// What a room without a lease does as it ends: rebuilt in place from its stored log
    /// ([`RoomEnd::Rebuild`]), its connections then told to resume; otherwise they are
    /// told to reconnect. The cluster's host does the same for a room it holds no lease
    /// of.
    pub async fn unfenced_end(rooms: &Rooms, code: &str, end: RoomEnd, conns: Vec<Rehomed>) {
        if matches!(end, RoomEnd::Rebuild) {
            crate::rebuild::rebuild_here(rooms, code).await;
            // After the rebuild: their resume finds the rebuilt room.
            for c in conns {
                c.link.kick.kick(
                    close_code::SERVICE_RESTART,
                    "the room was rebuilt from its log: reconnect and resume",
                );
            }
            return;
        }
        for c in conns {
            c.link
                .kick
                .kick(close_code::SERVICE_RESTART, "the room stopped: reconnect");
        }
    }
}

impl Host for SingleNode {
    fn store_new<'a>(
        &'a self,
        rooms: &'a Rooms,
        record: &'a RoomRecord,
    ) -> BoxFuture<'a, Result<Option<Fence>, StoreError>> {
        Box::pin(async move { rooms.store().create_room(record).await.map(|()| None) })
    }

    fn created(&self, _rooms: &Rooms, _fence: &Fence) {}

    fn never_ran<'a>(&'a self, _rooms: &'a Rooms, _fence: &'a Fence) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    fn started<'a>(
        &'a self,
        _rooms: &'a Rooms,
        _handle: &'a RoomHandle,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }

    fn ended<'a>(
        &'a self,
        rooms: &'a Rooms,
        code: &'a str,
        _fence: Option<Fence>,
        end: RoomEnd,
        conns: Vec<Rehomed>,
    ) -> BoxFuture<'a, ()> {
        // A single node holds no lease: `fence` is always `None` here.
        Box::pin(SingleNode::unfenced_end(rooms, code, end, conns))
    }

    fn write_fenced(
        &self,
        _fence: &Fence,
        _game: Option<Uuid>,
        _epoch: i64,
        _kind: &str,
        _current: &Option<(String, i64)>,
    ) {
    }
}
