//! The owner's `P.room.<CODE>` service (`docs/CLUSTER.md`, "Routing"): while room `CODE`
//! runs on this node it answers attaches (join, watch, resume, reattach) from edge nodes
//! by creating a remote link ([`super::remote_link`]) and handing the room command to the
//! actor (the answer, and the link's `end` and `kick`, name the lease epoch this node
//! holds for the room, so an edge that followed a later owner ignores a stale one's);
//! commands and detaches of an attached edge connection go to the actor under the
//! owner's connection id for that link; `view` answers the room's public state;
//! `director` and `close` carry a tournament director's commands from the node directing
//! the tournament, `close_lobby` the quick-pairing matcher's close of a lobby whose claim
//! wait ran out. The service ends when the room's actor ends.

use super::remote_link::{remote_link, EdgeAddr};
use crate::links::metrics as m;
use crate::links::wire::{
    self, read_request, AttachAnswer, AttachHow, CommandAnswer, DirectorReply, Moved, RoomOp,
    WIRE_VERSION,
};
use crate::state::NodeState;
use crate::{Cluster, NodeId};
use futures_util::StreamExt;
use parchis_room::{ConnId, ConnLink, Member, Refusal, RoomCmd, RoomHandle};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tracing::{debug, info, warn, Instrument};

/// An edge connection attached here: the owner's id for its remote link and what it is.
#[derive(Clone, Copy, Debug)]
struct Remote {
    id: ConnId,
    member: Member,
    /// The edge's generation of the link.
    gen: u64,
}

type Remotes = Arc<Mutex<HashMap<(String, u64), Remote>>>;

fn lock(r: &Remotes) -> std::sync::MutexGuard<'_, HashMap<(String, u64), Remote>> {
    r.lock().unwrap_or_else(|e| e.into_inner())
}

/// Answers the requests of `sub` (`P.room.<CODE>`, subscribed by [`super::serve_room`])
/// until the room's actor ends, then unsubscribes.
pub(super) async fn serve(
    state: NodeState,
    handle: RoomHandle,
    mut sub: async_nats::Subscriber,
    token: u64,
) {
    let Some(cluster) = state.cluster().cloned() else {
        return;
    };
    let code = handle.code().to_owned();
    let remotes: Remotes = Arc::default();
    let mut gone = cluster.routing.gone_edges.subscribe();
    loop {
        tokio::select! {
            biased;
            () = handle.sender().closed() => break,
            Ok(()) = gone.changed() => {
                let nodes = gone.borrow_and_update().clone();
                forget_edges(&handle, &remotes, &nodes).await;
            }
            msg = sub.next() => match msg {
                Some(msg) => on_request(&state, &cluster, &handle, &remotes, msg).await,
                None => break,
            },
        }
    }
    let _ = sub.unsubscribe().await;
    cluster.routing.end_serving(&code, token);
    info!(room = %code, node = %cluster.node(), "stopped serving the room's subject");
}

/// Detaches the remote links of the edge connections on `nodes` (edge nodes gone from
/// NATS without detaching them, [`super::GoneEdges`]), as if their sockets had closed:
/// a spectator stops counting, a seat shows disconnected and its grace period runs.
async fn forget_edges(
    handle: &RoomHandle,
    remotes: &Remotes,
    nodes: &std::collections::HashSet<String>,
) {
    let links: Vec<ConnId> = {
        let mut remotes = lock(remotes);
        let keys: Vec<(String, u64)> = remotes
            .keys()
            .filter(|(edge, _)| nodes.contains(edge))
            .cloned()
            .collect();
        keys.iter()
            .filter_map(|k| remotes.remove(k))
            .map(|r| r.id)
            .collect()
    };
    if links.is_empty() {
        return;
    }
    info!(room = %handle.code(), links = links.len(), edges = ?nodes, "edge nodes gone: their relayed connections detached");
    for conn in links {
        let _ = handle.sender().send(RoomCmd::Detach { conn }).await;
    }
}

/// Publishes `P.moved` for room `code`, now served here at lease `epoch`.
pub(super) async fn publish_moved(cluster: Arc<Cluster>, code: String, epoch: i64) {
    let client = cluster.bus.client();
    let _ = client.flush().await;
    let notice = Moved {
        v: WIRE_VERSION,
        room: code.clone(),
        node: cluster.node().to_string(),
        epoch,
    };
    match client
        .publish(cluster.bus.moved_subject(), wire::to_bytes(&notice))
        .await
    {
        Ok(()) => info!(room = %code, epoch, "published moved"),
        Err(e) => warn!(room = %code, error = %e, "could not publish moved"),
    }
}

async fn respond(client: &async_nats::Client, msg: &async_nats::Message, body: bytes::Bytes) {
    if let Some(reply) = &msg.reply {
        let _ = client.publish(reply.clone(), body).await;
    }
}

async fn on_request(
    state: &NodeState,
    cluster: &Arc<Cluster>,
    handle: &RoomHandle,
    remotes: &Remotes,
    msg: async_nats::Message,
) {
    let client = cluster.bus.client();
    let request = match read_request(&msg.payload) {
        Ok(r) => r,
        Err(e) => {
            debug!(room = %handle.code(), error = %e, "unreadable room request");
            let bad = AttachAnswer::Bad {
                message: e.to_string(),
            };
            respond(client, &msg, wire::to_bytes(&bad)).await;
            return;
        }
    };
    if request
        .owner
        .as_deref()
        .is_some_and(|o| o != cluster.node().as_str())
    {
        // The asker knows this node lost the room: the new owner answers.
        debug!(room = %handle.code(), owner = ?request.owner, "request for the room's new owner: silent");
        return;
    }
    match request.op {
        RoomOp::Attach {
            edge,
            conn,
            gen,
            how,
        } => {
            metrics::counter!(m::ROOM_REQUESTS, "op" => "attach").increment(1);
            let Ok(edge_node) = NodeId::new(&edge) else {
                let bad = AttachAnswer::Bad {
                    message: format!("edge {edge:?} is not a node id"),
                };
                respond(client, &msg, wire::to_bytes(&bad)).await;
                return;
            };
            attach(
                state, cluster, handle, remotes, msg, edge_node, conn, gen, how,
            )
            .await;
        }
        RoomOp::Command {
            edge,
            conn,
            gen,
            req,
            seq,
            cmd,
            deadline_ms,
        } => {
            m::room_command();
            let late = deadline_ms.is_some_and(|d| cluster.ownership.db_now_ms() > d);
            let answer = if late {
                info!(room = %handle.code(), edge = %edge, edge_conn = conn, req, deadline_ms, "relayed command came after its deadline: not applied");
                CommandAnswer::Expired
            } else {
                command(handle, remotes, (edge, conn), gen, req, seq, cmd).await
            };
            respond(client, &msg, wire::to_bytes(&answer)).await;
        }
        RoomOp::Detach { edge, conn, gen } => {
            metrics::counter!(m::ROOM_REQUESTS, "op" => "detach").increment(1);
            detach(handle, remotes, (edge, conn), gen).await;
            respond(client, &msg, wire::to_bytes(&CommandAnswer::Taken)).await;
        }
        RoomOp::Probe => {
            metrics::counter!(m::ROOM_REQUESTS, "op" => "probe").increment(1);
            respond(client, &msg, wire::to_bytes(&CommandAnswer::Taken)).await;
        }
        RoomOp::View => {
            metrics::counter!(m::ROOM_REQUESTS, "op" => "view").increment(1);
            let body = view(handle).await;
            respond(client, &msg, body).await;
        }
        RoomOp::Director { director } => {
            metrics::counter!(m::ROOM_REQUESTS, "op" => "director").increment(1);
            let cmd = |reply| RoomCmd::Director {
                cmd: director.into(),
                reply,
            };
            let what = "director's command";
            ask_room(client, handle, msg, cmd, DirectorReply::of, what).await;
        }
        RoomOp::Close => {
            metrics::counter!(m::ROOM_REQUESTS, "op" => "close").increment(1);
            let cmd = |reply| RoomCmd::Close { reply };
            let answer = |_| DirectorReply::Closed;
            let what = "room close for its tournament's director";
            ask_room(client, handle, msg, cmd, answer, what).await;
        }
        RoomOp::CloseLobby => {
            metrics::counter!(m::ROOM_REQUESTS, "op" => "close_lobby").increment(1);
            let cmd = |reply| RoomCmd::CloseLobby { reply };
            let answer = |closed: Result<_, Refusal>| match closed {
                Ok(claimed) => DirectorReply::LobbyClosed { claimed },
                Err(r) => DirectorReply::Refused {
                    code: r.code,
                    message: r.message,
                },
            };
            let what = "quick pairing's lobby close";
            ask_room(client, handle, msg, cmd, answer, what).await;
        }
    }
}

/// A room command asked for by another node (a tournament director's command or close,
/// the quick-pairing matcher's lobby close): queued here, in order with the room's other
/// commands, and answered off the service loop once the room stored what it changed.
/// `cmd` builds the command around its reply channel, `answer` turns the room's reply
/// into the wire's; a room whose actor is gone, or drops the reply, answers
/// [`DirectorReply::Gone`]. `what` names the command in the log line.
async fn ask_room<T: Send + 'static>(
    client: &async_nats::Client,
    handle: &RoomHandle,
    msg: async_nats::Message,
    cmd: impl FnOnce(oneshot::Sender<T>) -> RoomCmd,
    answer: impl FnOnce(T) -> DirectorReply + Send + 'static,
    what: &'static str,
) {
    let (reply, answered) = oneshot::channel();
    if handle.sender().send(cmd(reply)).await.is_err() {
        respond(client, &msg, wire::to_bytes(&DirectorReply::Gone)).await;
        return;
    }
    let client = client.clone();
    let room = handle.code().to_owned();
    tokio::spawn(async move {
        let body = answered.await.map_or(DirectorReply::Gone, answer);
        info!(%room, answer = ?body, "{what} answered");
        respond(&client, &msg, wire::to_bytes(&body)).await;
    });
}

/// A seat's command from edge connection `key`, only on the link the edge waits for the
/// reply on (not one a reattach replaced or is replacing: the edge answered the command
/// itself).
async fn command(
    handle: &RoomHandle,
    remotes: &Remotes,
    key: (String, u64),
    gen: Option<u64>,
    req: u64,
    seq: u64,
    cmd: wire::WireCmd,
) -> CommandAnswer {
    let remote = lock(remotes)
        .get(&key)
        .copied()
        .filter(|r| gen.is_none_or(|g| g == r.gen));
    match remote {
        None => CommandAnswer::NotAttached,
        Some(r) => {
            let command = RoomCmd::Command {
                conn: r.id,
                member: r.member,
                req,
                seq,
                cmd: cmd.into(),
                received: tokio::time::Instant::now(),
            };
            match handle.sender().send(command).await {
                Ok(()) => CommandAnswer::Taken,
                Err(_) => CommandAnswer::Gone,
            }
        }
    }
}

/// Detaches edge connection `key`'s link, if it has one (`gen`: only if it is that
/// attach's link).
async fn detach(handle: &RoomHandle, remotes: &Remotes, key: (String, u64), gen: Option<u64>) {
    let remote = {
        let mut remotes = lock(remotes);
        match remotes.get(&key) {
            Some(r) if gen.is_none_or(|g| g == r.gen) => remotes.remove(&key),
            _ => None,
        }
    };
    if let Some(r) = remote {
        let _ = handle.sender().send(RoomCmd::Detach { conn: r.id }).await;
    }
}

/// The room's view for an operator, or `Gone` if its actor has stopped.
async fn view(handle: &RoomHandle) -> bytes::Bytes {
    let (reply, answer) = oneshot::channel();
    match handle.sender().send(RoomCmd::View { reply }).await {
        Ok(()) => match answer.await {
            Ok(view) => wire::to_bytes(&view),
            Err(_) => wire::to_bytes(&CommandAnswer::Gone),
        },
        Err(_) => wire::to_bytes(&CommandAnswer::Gone),
    }
}

/// Attaches edge connection `(edge, conn)`: a link of that edge connection attached
/// before is replaced (by the reattach itself, quietly) or detached first (a second join
/// after `leave`), so it never counts twice. The room command is queued here, in order with the connection's later
/// commands; its answer is awaited off the service loop.
#[allow(clippy::too_many_arguments)]
async fn attach(
    state: &NodeState,
    cluster: &Arc<Cluster>,
    handle: &RoomHandle,
    remotes: &Remotes,
    msg: async_nats::Message,
    edge: NodeId,
    conn: u64,
    gen: u64,
    how: AttachHow,
) {
    let client = cluster.bus.client().clone();
    // The lease this node holds for the room: every notice of the link names its epoch.
    // None held: the room was lost (its actor is stopping): not attached here.
    let Some(epoch) = cluster.ownership.fence_of(handle.code()).map(|f| f.epoch) else {
        debug!(room = %handle.code(), "attach to a room whose lease this node no longer holds");
        respond(&client, &msg, wire::to_bytes(&AttachAnswer::Gone)).await;
        return;
    };
    let key = (edge.to_string(), conn);
    let old = lock(remotes).remove(&key).map(|r| r.id);
    // A reattach replaces the old link in the same step (quietly); anything else
    // detaches it first.
    if let (Some(old), false) = (old, matches!(how, AttachHow::Reattach { .. })) {
        let _ = handle.sender().send(RoomCmd::Detach { conn: old }).await;
    }
    let addr = EdgeAddr { conn, gen, epoch };
    let node = cluster.node().to_string();
    let out = cluster
        .routing
        .publishers
        .sender(&client, &cluster.bus.edge_subject(&edge));
    let link = remote_link(state, out, handle.code(), addr);
    let id = link.id;
    let (reply, answer) = oneshot::channel::<Result<Member, Refusal>>();
    let cmd = attach_cmd(how, link, old, reply);
    if handle.sender().send(cmd).await.is_err() {
        respond(&client, &msg, wire::to_bytes(&AttachAnswer::Gone)).await;
        return;
    }
    let remotes = remotes.clone();
    let span = tracing::info_span!("attach", room = %handle.code(), edge = %edge, edge_conn = conn, conn = id);
    tokio::spawn(
        async move {
            let answer = match answer.await {
                Ok(Ok(member)) => {
                    lock(&remotes).insert(key, Remote { id, member, gen });
                    debug!(?member, "edge connection attached");
                    AttachAnswer::Attached {
                        role: member.into(),
                        epoch: Some(epoch),
                        node: Some(node),
                    }
                }
                Ok(Err(refusal)) => AttachAnswer::refused(refusal),
                Err(_) => AttachAnswer::Gone,
            };
            respond(&client, &msg, wire::to_bytes(&answer)).await;
        }
        .instrument(span),
    );
}

/// The room command that attaches `link` as `how` asks (`replaces`: the link a reattach
/// replaces).
fn attach_cmd(
    how: AttachHow,
    link: ConnLink,
    replaces: Option<ConnId>,
    reply: oneshot::Sender<Result<Member, Refusal>>,
) -> RoomCmd {
    match how {
        AttachHow::Join {
            req,
            name,
            colour,
            client_seed,
            account,
            ratings,
        } => RoomCmd::Join {
            link,
            req,
            name,
            colour,
            client_seed: client_seed.map(Into::into),
            account: account.map(|id| Box::new(parchis_room::JoinAccount { id, ratings })),
            reply,
        },
        AttachHow::Watch { req } => RoomCmd::Watch { link, req, reply },
        AttachHow::Claim {
            req,
            key,
            client_seed,
        } => RoomCmd::Claim {
            link,
            req,
            key,
            client_seed,
            reply,
        },
        AttachHow::Resume {
            req,
            token,
            last_seq,
            account,
        } => RoomCmd::Resume {
            link,
            req,
            token,
            last_seq,
            account,
            reply,
        },
        AttachHow::Reattach { reattach, last_seq } => RoomCmd::Reattach {
            link,
            reattach,
            last_seq,
            replaces,
            reply,
        },
    }
}
