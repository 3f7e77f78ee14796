//! The cluster as the rooms' [`Host`]: a new room is stored with its first lease, served
//! on its NATS subject before it runs, renewed while it runs, and when it ends its lease
//! is retired, released or forgotten and its connections move on
//! ([`room_ended`]). A fenced write is logged and counted. A tournament director's
//! command, close or view of a room running on another node is asked of that node over
//! NATS (`P.room.<CODE>`, ops `director`, `close`, `view`), and so is the quick-pairing
//! matcher's lobby close (`close_lobby`). New ratings are announced to every node
//! ([`crate::rerated`]).

use crate::ownership::{lease, observe};
use crate::routing;
use crate::routing::ask::{self, Unreachable};
use crate::routing::wire::{DirectorReply, RoomOp};
use crate::state::{LinkConfig, NodeState};
use crate::Cluster;
use futures_util::future::BoxFuture;
use parchis_admission::Admission;
use parchis_engine::Colour;
use parchis_protocol::{ErrorCode, RoomView};
use parchis_room::{Host, Refusal, Rehomed, RoomEnd, RoomHandle, Rooms, SingleNode};
use parchis_room_core::reserved::{DirectorAnswer, DirectorCmd};
use parchis_store::{Fence, RoomRecord, RoomStatus, StoreError};
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
            let ttl = self.cluster.ttl_ms();
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
                Some(fence) => room_ended(&self.node(rooms), fence, end, conns).await,
                // A room this node holds no lease of (restored at start before cluster
                // mode owned it): as on a single node.
                None => SingleNode::unfenced_end(rooms, code, end, conns).await,
            }
        })
    }

    fn ratings_changed<'a>(&'a self, _rooms: &'a Rooms, accounts: &'a [Uuid]) -> BoxFuture<'a, ()> {
        Box::pin(crate::rerated::publish(&self.cluster, accounts))
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

    fn direct_elsewhere<'a>(
        &'a self,
        rooms: &'a Rooms,
        code: &'a str,
        cmd: DirectorCmd,
    ) -> BoxFuture<'a, Result<DirectorAnswer, Refusal>> {
        Box::pin(async move {
            let op = RoomOp::Director {
                director: cmd.into(),
            };
            match ask::ask(&self.node(rooms), code, None, op).await {
                Ok(body) => match serde_json::from_slice::<DirectorReply>(&body) {
                    Ok(DirectorReply::Directed { game_id, paused }) => {
                        Ok(DirectorAnswer { game_id, paused })
                    }
                    Ok(DirectorReply::Refused { code, message }) => {
                        Err(Refusal::new(code, message))
                    }
                    Ok(
                        DirectorReply::Gone
                        | DirectorReply::Closed
                        | DirectorReply::LobbyClosed { .. },
                    ) => Err(Refusal::code(ErrorCode::RoomUnavailable)),
                    Err(e) => Err(Refusal::new(
                        ErrorCode::RoomUnavailable,
                        format!("unreadable answer of the room's node: {e}"),
                    )),
                },
                Err(Unreachable::NoResponders) => Err(Refusal::code(ErrorCode::UnknownRoom)),
                Err(Unreachable::Failed) => Err(Refusal::code(ErrorCode::RoomUnavailable)),
            }
        })
    }

    fn close_elsewhere<'a>(
        &'a self,
        rooms: &'a Rooms,
        code: &'a str,
    ) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(async move {
            let unavailable = || Refusal::code(ErrorCode::RoomUnavailable);
            match ask::ask(&self.node(rooms), code, None, RoomOp::Close).await {
                Ok(body) => match serde_json::from_slice::<DirectorReply>(&body) {
                    Ok(DirectorReply::Closed) => Ok(()),
                    _ => Err(unavailable()),
                },
                // Nobody runs it: closed when it is stored finished (or not at all); an
                // unfinished one waits for a takeover and is closed then.
                Err(Unreachable::NoResponders) => match rooms.store().get_room(code).await {
                    Ok(None) => Ok(()),
                    Ok(Some(snap)) if snap.room.status == RoomStatus::Finished => Ok(()),
                    Ok(Some(_)) | Err(_) => Err(unavailable()),
                },
                Err(Unreachable::Failed) => Err(unavailable()),
            }
        })
    }

    fn close_lobby_elsewhere<'a>(
        &'a self,
        rooms: &'a Rooms,
        code: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Colour>, Refusal>> {
        Box::pin(async move {
            let unknown = |why: String| Refusal::new(ErrorCode::RoomUnavailable, why);
            match ask::ask(&self.node(rooms), code, None, RoomOp::CloseLobby).await {
                Ok(body) => match serde_json::from_slice::<DirectorReply>(&body) {
                    Ok(DirectorReply::LobbyClosed { claimed }) => Ok(claimed),
                    Ok(DirectorReply::Refused { code, message }) => {
                        Err(Refusal::new(code, message))
                    }
                    Ok(answer) => Err(unknown(format!(
                        "the room's node answered {answer:?} to the lobby's close"
                    ))),
                    // A node of before `close_lobby` answers `bad`: not closed there, but
                    // said as "not known" (asked again next round).
                    Err(e) => Err(unknown(format!(
                        "unreadable answer of the room's node: {e}"
                    ))),
                },
                Err(Unreachable::NoResponders) => Err(Refusal::code(ErrorCode::UnknownRoom)),
                Err(Unreachable::Failed) => Err(unknown(
                    "the room's node did not answer the lobby's close in time".into(),
                )),
            }
        })
    }

    fn view_elsewhere<'a>(
        &'a self,
        rooms: &'a Rooms,
        code: &'a str,
    ) -> BoxFuture<'a, Option<RoomView>> {
        Box::pin(async move { routing::view(&self.node(rooms), code).await })
    }
}

/// What becomes of the lease and the local connections of a room whose actor ended here
/// (it is already deregistered): see [`RoomEnd`]. `conns` are its local connections
/// (empty unless the room was lost, fenced or handed off).
pub async fn room_ended(state: &NodeState, fence: Fence, end: RoomEnd, conns: Vec<Rehomed>) {
    let code = fence.room_code.clone();
    match end {
        RoomEnd::Disposed => lease::retire(state, &fence).await,
        RoomEnd::Shutdown => lease::release(state, &fence).await,
        RoomEnd::Lost(why) => {
            if let Some(own) = state.ownership() {
                own.forget(&fence);
            }
            observe::room_stopped(&fence, why, conns.len());
            routing::rehome(state, &code, conns);
        }
        RoomEnd::Fenced => {
            if let Some(own) = state.ownership() {
                own.forget(&fence);
            }
            observe::room_stopped(&fence, "write fenced", conns.len());
            routing::rehome(state, &code, conns);
        }
        RoomEnd::Rebuild => {
            lease::release(state, &fence).await;
            observe::room_stopped(&fence, "rebuilt from its log", conns.len());
            // Nobody waits for a sweep: adopted here at once, as a drain's target would.
            // Refused (the database is out of reach again), the released lease waits for
            // a sweeper, here or on another node.
            match crate::ownership::node::adopt_again(state, &code).await {
                crate::ownership::node::NodeReply::Adopted { epoch } => {
                    tracing::info!(room = %code, epoch, "room rebuilt from its log")
                }
                answer => tracing::warn!(
                    room = %code, answer = ?answer,
                    "room not rebuilt here: its lease stays released for a sweeper"
                ),
            }
            routing::rehome(state, &code, conns);
        }
        RoomEnd::Handoff(reply) => {
            lease::release(state, &fence).await;
            // Nobody waits any more (the drain timed out): move them all the same.
            if let Err(conns) = reply.send(conns) {
                routing::rehome(state, &code, conns);
            }
        }
    }
}
