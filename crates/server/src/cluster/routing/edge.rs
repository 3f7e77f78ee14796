//! The edge side (`docs/CLUSTER.md`, "Routing: relayed connections"): local sockets whose
//! room runs on another node. One subscription per node on `P.edge.<me>` hands each
//! frame to its socket's queue after the [`Relay`] checks (generation, `Parchis-N`,
//! duplicates); a gap, the owner forgetting the link, a `moved` notice or a rehome makes
//! the connection reattach (`attach {reattach, last_seq}`) to whoever owns the room now,
//! retried for up to [`REATTACH_WINDOW`], then the socket is closed with 1012 and the
//! client resumes by itself.

use super::metrics as m;
use super::relay::{welcome_info, Relay, Verdict};
use super::wire::{
    self, AttachAnswer, AttachHow, CommandAnswer, KickBody, Kind, Role, RoomOp, RoomRequest, Tag,
    WireCmd, WIRE_VERSION,
};
use crate::room::{ConnId, ConnLink, Reattach, Refusal, SeatCmd};
use crate::state::AppState;
use async_nats::RequestErrorKind;
use parchis_protocol::{close_code, ErrorCode};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::Notify;
use tracing::{debug, info};

/// How long a relayed connection waits for its room's new owner before it is closed with
/// 1012 (`docs/CLUSTER.md`: failover takes at most 5 s).
pub const REATTACH_WINDOW: Duration = Duration::from_secs(10);
/// Between two reattach attempts (a `moved` notice tries at once).
const REATTACH_RETRY: Duration = Duration::from_millis(250);
/// How often a command waiting for a reattach looks again.
const SETTLE_POLL: Duration = Duration::from_millis(10);
/// The longest wait for an owner's answer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// One relayed connection.
struct EdgeConn {
    link: ConnLink,
    room: String,
    relay: Relay,
    /// What it is in the room, once known (from its `welcome`, or the rehome).
    reattach: Option<Reattach>,
    reattaching: bool,
    /// It sent `leave`: the owner's `end` closes the relay quietly.
    leaving: bool,
    /// Wakes a waiting reattach (a `moved` notice, another gap).
    wake: Arc<Notify>,
    /// The room's owner as the last `moved` notice named it.
    owner: Option<String>,
}

/// This node's relayed connections, by local connection id.
#[derive(Default)]
pub struct Edge {
    conns: Mutex<HashMap<ConnId, EdgeConn>>,
}

/// Why a room's owner could not be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreachable {
    /// Nobody serves the room's subject.
    NoResponders,
    /// Somebody does but did not answer in time, or NATS failed.
    Failed,
}

impl Edge {
    fn lock(&self) -> MutexGuard<'_, HashMap<ConnId, EdgeConn>> {
        self.conns.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers `link` as relayed for `room` under a fresh generation (before its
    /// attach is sent, so the frames that answer it are not lost). Returns the generation.
    pub fn register(
        &self,
        link: ConnLink,
        room: &str,
        gen: u64,
        last_seq: u64,
        reattach: Option<Reattach>,
    ) {
        let conn = link.id;
        self.lock().insert(
            conn,
            EdgeConn {
                link,
                room: room.to_owned(),
                relay: Relay::new(gen, last_seq),
                reattach,
                reattaching: false,
                leaving: false,
                wake: Arc::new(Notify::new()),
                owner: None,
            },
        );
    }

    /// Forgets connection `conn` (closed, refused); `gen`: only if still that attach.
    pub fn forget(&self, conn: ConnId, gen: Option<u64>) {
        let mut conns = self.lock();
        if gen.is_none_or(|g| conns.get(&conn).is_some_and(|e| e.relay.gen() == g)) {
            conns.remove(&conn);
        }
    }

    /// Connection `conn` sent `leave`.
    pub fn leaving(&self, conn: ConnId) {
        if let Some(e) = self.lock().get_mut(&conn) {
            e.leaving = true;
        }
    }

    /// Whether relayed connection `conn` is reattaching.
    pub fn is_reattaching(&self, conn: ConnId) -> bool {
        self.lock().get(&conn).is_some_and(|e| e.reattaching)
    }

    /// Waits (at most [`REATTACH_WINDOW`]) until connection `conn` is not reattaching.
    pub async fn settled(&self, conn: ConnId) {
        let until = tokio::time::Instant::now() + REATTACH_WINDOW;
        while self.is_reattaching(conn) && tokio::time::Instant::now() < until {
            tokio::time::sleep(SETTLE_POLL).await;
        }
    }

    /// The room of relayed connection `conn`.
    pub fn room_of(&self, conn: ConnId) -> Option<String> {
        self.lock().get(&conn).map(|e| e.room.clone())
    }

    /// The relayed connections of `room`, now owned by `owner`.
    fn moved(&self, room: &str, owner: &str) -> Vec<ConnId> {
        self.lock()
            .iter_mut()
            .filter(|(_, e)| e.room == room)
            .map(|(c, e)| {
                e.owner = Some(owner.to_owned());
                *c
            })
            .collect()
    }

    /// Who owns the room of connection `conn`, as a `moved` notice said.
    fn owner_of(&self, conn: ConnId) -> Option<String> {
        self.lock().get(&conn).and_then(|e| e.owner.clone())
    }
}

fn header_u64(h: &async_nats::HeaderMap, name: &str) -> Option<u64> {
    h.get(name)?.as_str().parse().ok()
}

/// Handles one `P.edge.<me>` message.
pub(super) fn on_edge_message(state: &AppState, msg: async_nats::Message) {
    let Some(cluster) = state.cluster() else {
        return;
    };
    let Some(h) = msg.headers.as_ref() else {
        return;
    };
    let (Some(conn), Some(gen), Some(n), Some(kind)) = (
        header_u64(h, wire::HDR_CONN),
        header_u64(h, wire::HDR_GEN),
        header_u64(h, wire::HDR_N),
        h.get(wire::HDR_KIND).and_then(|k| Kind::parse(k.as_str())),
    ) else {
        debug!("edge message without its headers: dropped");
        return;
    };
    let tag = match (header_u64(h, wire::HDR_SEQ), header_u64(h, wire::HDR_TURN)) {
        (Some(seq), _) => Tag::Event(seq),
        (None, Some(seq)) => Tag::Turn(seq),
        _ => Tag::Other,
    };
    let edge = &cluster.routing.edge;
    let mut conns = edge.lock();
    let Some(e) = conns.get_mut(&conn) else {
        return;
    };
    let verdict = e.relay.on_message(gen, n, kind, tag);
    let relayed =
        |v: &'static str| metrics::counter!(m::FRAMES_RELAYED, "verdict" => v).increment(1);
    match verdict {
        Verdict::Deliver => {
            let Ok(text) = std::str::from_utf8(&msg.payload) else {
                return;
            };
            if let Some(w) = welcome_info(text) {
                if w.snapshot && e.reattach.is_none() {
                    // The attach's own welcome: its snapshot is where the client stands
                    // (a resume's `last_seq` may be beyond a rebuilt lobby's seq).
                    e.relay.reset_to(w.seq);
                } else if w.snapshot {
                    e.relay.snapshot_at(w.seq);
                }
                e.reattach = Some(w.reattach);
            }
            relayed("delivered");
            e.link.send(Arc::from(text));
        }
        Verdict::Duplicate => relayed("duplicate"),
        Verdict::Stale => relayed("stale"),
        Verdict::Kick => {
            let kick: KickBody = serde_json::from_slice(&msg.payload).unwrap_or(KickBody {
                code: close_code::SERVICE_RESTART,
                reason: "the room closed this connection".into(),
            });
            info!(node = %cluster.node(), room = %e.room, conn, code = kick.code, "owner kicked a relayed connection");
            e.link.kick.kick(kick.code, &kick.reason);
            conns.remove(&conn);
        }
        Verdict::End if e.leaving => {
            conns.remove(&conn);
        }
        Verdict::End => {
            drop(conns);
            start_reattach(state, conn, "end");
        }
        Verdict::Gap => {
            metrics::counter!(m::EDGE_GAPS).increment(1);
            info!(node = %cluster.node(), room = %e.room, conn, n, "gap in a relayed stream: reattaching");
            drop(conns);
            start_reattach(state, conn, "gap");
        }
    }
}

/// Reattaches every relayed connection of `room` (a `moved` notice).
pub(super) fn on_moved(state: &AppState, room: &str, owner: &str) {
    let Some(cluster) = state.cluster() else {
        return;
    };
    for conn in cluster.routing.edge.moved(room, owner) {
        start_reattach(state, conn, "moved");
    }
}

/// Sends `op` to room `code`'s owner (`owner`: the node a `moved` notice named) and
/// returns its answer's body.
///
/// # Errors
/// [`Unreachable`] when nobody serves the room or nobody answered.
pub(super) async fn ask(
    state: &AppState,
    code: &str,
    owner: Option<String>,
    op: RoomOp,
) -> Result<axum::body::Bytes, Unreachable> {
    let Some(cluster) = state.cluster() else {
        return Err(Unreachable::NoResponders);
    };
    let body = wire::to_bytes(&RoomRequest {
        v: WIRE_VERSION,
        owner,
        op,
    });
    let request = async_nats::Request::new()
        .payload(body)
        .timeout(Some(REQUEST_TIMEOUT));
    match cluster
        .bus
        .client()
        .send_request(cluster.bus.room_subject(code), request)
        .await
    {
        Ok(msg) => Ok(msg.payload),
        Err(e) if e.kind() == RequestErrorKind::NoResponders => Err(Unreachable::NoResponders),
        Err(e) => {
            debug!(room = code, error = %e, "room request failed");
            Err(Unreachable::Failed)
        }
    }
}

/// Whether some node serves room `code` (cluster mode; `false` on a single node).
pub async fn served(state: &AppState, code: &str) -> bool {
    state.cluster().is_some() && ask(state, code, None, RoomOp::Probe).await.is_ok()
}

/// Attaches local connection `link` to room `code` on its owner (a `join`, `watch` or
/// `resume`): registered first, forgotten again unless attached.
///
/// # Errors
/// The owner's refusal (`Ok(Err)`), or [`Unreachable`].
pub async fn attach(
    state: &AppState,
    code: &str,
    link: &ConnLink,
    how: AttachHow,
) -> Result<Result<(), Refusal>, Unreachable> {
    let Some(cluster) = state.cluster() else {
        return Err(Unreachable::NoResponders);
    };
    let conn = link.id;
    let gen = state.next_id();
    let edge = &cluster.routing.edge;
    // A resume's client has every event up to its `last_seq`: a reattach before the
    // missed events arrive (a `moved` notice right after the attach) starts from there, not
    // from 0 (which the history no longer holds: the socket would be closed with 1012).
    let has = match &how {
        AttachHow::Resume { last_seq, .. } => *last_seq,
        _ => 0,
    };
    edge.register(link.clone(), code, gen, has, None);
    let op = RoomOp::Attach {
        edge: cluster.node().to_string(),
        conn,
        gen,
        how,
    };
    let answer = ask(state, code, None, op).await.and_then(|body| {
        serde_json::from_slice::<AttachAnswer>(&body).map_err(|_| Unreachable::Failed)
    });
    let outcome = match &answer {
        Ok(AttachAnswer::Attached { .. }) => "attached",
        Ok(AttachAnswer::Refused { .. }) => "refused",
        Ok(_) | Err(Unreachable::Failed) => "failed",
        Err(Unreachable::NoResponders) => "no_owner",
    };
    metrics::counter!(m::REMOTE_ATTACHES, "outcome" => outcome).increment(1);
    match answer {
        Ok(AttachAnswer::Attached { .. }) => {
            info!(node = %cluster.node(), room = code, conn, "relayed connection attached");
            Ok(Ok(()))
        }
        Ok(AttachAnswer::Refused {
            code: c,
            message,
            rule,
        }) => {
            edge.forget(conn, Some(gen));
            Ok(Err(Refusal {
                code: c,
                message,
                rule,
            }))
        }
        Ok(_) | Err(Unreachable::Failed) => {
            edge.forget(conn, Some(gen));
            Err(Unreachable::Failed)
        }
        Err(Unreachable::NoResponders) => {
            edge.forget(conn, Some(gen));
            Err(Unreachable::NoResponders)
        }
    }
}

/// Forwards a command of relayed connection `conn` in room `code`.
///
/// # Errors
/// A retryable `room_unavailable` refusal when the owner cannot take it (nothing was
/// applied).
pub async fn command(
    state: &AppState,
    code: &str,
    conn: ConnId,
    req: u64,
    seq: u64,
    cmd: SeatCmd,
) -> Result<(), Refusal> {
    let Some(cluster) = state.cluster() else {
        return Err(Refusal::code(ErrorCode::RoomUnavailable));
    };
    let leave = cmd == SeatCmd::Leave;
    if leave {
        cluster.routing.edge.leaving(conn);
    }
    let op = RoomOp::Command {
        edge: cluster.node().to_string(),
        conn,
        req,
        seq,
        cmd: WireCmd::from(cmd),
    };
    // A command waits for a reattach under way, and is sent again once if the owner
    // did not know the connection (its reattach started meanwhile).
    let mut tries = 0;
    let (answer, taken) = loop {
        tries += 1;
        cluster.routing.edge.settled(conn).await;
        let owner = cluster.routing.edge.owner_of(conn);
        let answer = ask(state, code, owner, op.clone()).await;
        let taken = answer
            .as_ref()
            .ok()
            .and_then(|b| serde_json::from_slice::<CommandAnswer>(b).ok());
        if tries > 1
            || taken != Some(CommandAnswer::NotAttached)
            || !cluster.routing.edge.is_reattaching(conn)
        {
            break (answer, taken);
        }
    };
    let outcome = match (&answer, taken) {
        (_, Some(CommandAnswer::Taken)) => "taken",
        (_, Some(CommandAnswer::NotAttached)) => "not_attached",
        _ => "unreachable",
    };
    metrics::counter!(m::COMMANDS_FORWARDED, "outcome" => outcome).increment(1);
    match taken {
        Some(CommandAnswer::Taken) => {
            if leave {
                detach(state, code, conn).await;
            }
            Ok(())
        }
        _ => {
            if matches!(answer, Err(Unreachable::NoResponders)) {
                crate::cluster::ownership::wake_sweeper(state);
            }
            Err(Refusal::code(ErrorCode::RoomUnavailable))
        }
    }
}

/// Tells room `code`'s owner that relayed connection `conn` closed (best effort).
pub async fn detach(state: &AppState, code: &str, conn: ConnId) {
    let Some(cluster) = state.cluster() else {
        return;
    };
    let body = wire::to_bytes(&RoomRequest {
        v: WIRE_VERSION,
        owner: None,
        op: RoomOp::Detach {
            edge: cluster.node().to_string(),
            conn,
        },
    });
    let _ = cluster
        .bus
        .client()
        .publish(cluster.bus.room_subject(code), body)
        .await;
}

/// Starts (or wakes) the reattach of relayed connection `conn`.
pub(super) fn start_reattach(state: &AppState, conn: ConnId, cause: &'static str) {
    let Some(cluster) = state.cluster() else {
        return;
    };
    {
        let mut conns = cluster.routing.edge.lock();
        let Some(e) = conns.get_mut(&conn) else {
            return;
        };
        if e.reattaching {
            e.wake.notify_one();
            return;
        }
        e.reattaching = true;
    }
    let state = state.clone();
    tokio::spawn(async move { reattach_loop(state, conn, cause).await });
}

enum Step {
    Done,
    Retry,
    Refused { link: ConnLink, message: String },
    Gone { attached: bool },
}

/// What a reattach answer means for connection `conn` (attempt `gen`).
fn judge(edge: &Edge, conn: ConnId, gen: u64, answer: Option<AttachAnswer>) -> Step {
    let mut conns = edge.lock();
    let Some(e) = conns.get_mut(&conn) else {
        let attached = matches!(answer, Some(AttachAnswer::Attached { .. }));
        return Step::Gone { attached };
    };
    match answer {
        Some(AttachAnswer::Attached { role }) if e.relay.gen() == gen => {
            if role == Role::Spectator {
                e.reattach = Some(Reattach::Spectator);
            }
            if e.relay.is_broken() {
                Step::Retry
            } else {
                e.reattaching = false;
                Step::Done
            }
        }
        Some(AttachAnswer::Refused { message, .. }) => Step::Refused {
            link: e.link.clone(),
            message,
        },
        _ => Step::Retry,
    }
}

async fn reattach_loop(state: AppState, conn: ConnId, cause: &'static str) {
    let Some(cluster) = state.cluster().cloned() else {
        return;
    };
    let edge = &cluster.routing.edge;
    let until = tokio::time::Instant::now() + REATTACH_WINDOW;
    loop {
        let prepared = {
            let mut conns = edge.lock();
            let Some(e) = conns.get_mut(&conn) else {
                return;
            };
            let gen = e.relay.restart();
            e.reattach
                .map(|r| {
                    let at = (e.room.clone(), e.owner.clone());
                    (at, r, e.relay.last_seq(), gen, e.wake.clone())
                })
                .ok_or_else(|| e.link.clone())
        };
        let ((room, owner), reattach, last_seq, gen, wake) = match prepared {
            Ok(p) => p,
            Err(link) => {
                // Lost before its welcome said what it is: the client resumes itself.
                give_up(&state, conn, &link, cause, "its first frames were lost");
                return;
            }
        };
        let op = RoomOp::Attach {
            edge: cluster.node().to_string(),
            conn,
            gen,
            how: AttachHow::Reattach { reattach, last_seq },
        };
        let answer = ask(&state, &room, owner, op)
            .await
            .ok()
            .and_then(|b| serde_json::from_slice::<AttachAnswer>(&b).ok());
        let step = judge(edge, conn, gen, answer);
        if let Step::Gone { attached } = step {
            // The socket closed meanwhile: its detach may have reached the owner before
            // this attach did.
            if attached {
                detach(&state, &room, conn).await;
            }
            return;
        }
        if let Step::Refused { link, message } = step {
            give_up(&state, conn, &link, cause, &message);
            return;
        }
        if matches!(step, Step::Done) {
            info!(node = %cluster.node(), room = %room, conn, last_seq, cause, "relayed connection reattached");
        }
        match step {
            Step::Done => {
                metrics::counter!(m::REATTACHES, "cause" => cause, "outcome" => "ok").increment(1);
                return;
            }
            Step::Retry if tokio::time::Instant::now() >= until => {
                let link = edge.lock().get(&conn).map(|e| e.link.clone());
                if let Some(link) = link {
                    give_up(
                        &state,
                        conn,
                        &link,
                        cause,
                        "no node took the room over in time",
                    );
                }
                return;
            }
            _ => {
                crate::cluster::ownership::wake_sweeper(&state);
                tokio::select! {
                    () = tokio::time::sleep(REATTACH_RETRY) => {}
                    () = wake.notified() => {}
                }
            }
        }
    }
}

fn give_up(state: &AppState, conn: ConnId, link: &ConnLink, cause: &'static str, why: &str) {
    metrics::counter!(m::REATTACHES, "cause" => cause, "outcome" => "gave_up").increment(1);
    if let Some(cluster) = state.cluster() {
        let room = cluster.routing.edge.room_of(conn).unwrap_or_default();
        info!(node = %cluster.node(), room = %room, conn, cause, why, "relayed connection could not follow its room: closing (1012)");
        cluster.routing.edge.forget(conn, None);
    }
    link.kick.kick(
        close_code::SERVICE_RESTART,
        "the room moved: reconnect and resume",
    );
}
