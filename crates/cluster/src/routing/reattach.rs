//! A relayed connection follows its room (`docs/CLUSTER.md`, "Routing: relayed
//! connections"): after a gap, the owner's `end`, a `moved` notice or a rehome it
//! reattaches (`attach {reattach, last_seq}`) to whoever owns the room now, retried for
//! up to [`REATTACH_WINDOW`]; then (or when the owner refuses it) the socket is closed
//! with 1012 and the client resumes by itself. A connection whose attach's `welcome` has
//! not been relayed yet waits for it first ([`follow`]). A reattach refused because
//! the seat is held by the client's newer connection closes the socket with 4000.

use super::ask::ask;
use super::ask::detach;
use crate::links::edge::{Edge, EdgeConn};
use crate::links::metrics as m;
use crate::links::relay::{follow, Follow};
use crate::links::wire::{AttachAnswer, AttachHow, Role, RoomOp};
use crate::state::NodeState;
use crate::Cluster;
use parchis_protocol::{close_code, ErrorCode};
use parchis_room::{ConnId, ConnLink, Reattach};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tracing::info;

/// How long a relayed connection waits for its room's new owner before it is closed with
/// 1012 (`docs/CLUSTER.md`: failover takes at most 5 s).
pub const REATTACH_WINDOW: Duration = Duration::from_secs(10);
/// Between two reattach attempts (a `moved` notice tries at once).
const REATTACH_RETRY: Duration = Duration::from_millis(250);

/// Starts (or wakes) the reattach of relayed connection `conn`.
pub(super) fn start_reattach(state: &NodeState, conn: ConnId, cause: &'static str) {
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
    Refused {
        link: ConnLink,
        code: ErrorCode,
        message: String,
    },
    Gone {
        attached: bool,
    },
}

/// What a reattach answer means for connection `conn` (attempt `gen`).
fn judge(edge: &Edge, conn: ConnId, gen: u64, answer: Option<AttachAnswer>) -> Step {
    let mut conns = edge.lock();
    let Some(e) = conns.get_mut(&conn) else {
        let attached = matches!(answer, Some(AttachAnswer::Attached { .. }));
        return Step::Gone { attached };
    };
    match answer {
        Some(AttachAnswer::Attached { role, epoch, node }) if e.relay.gen() == gen => {
            if !e.follow_owner(epoch, node) {
                // A stale owner took it (it lost the room and does not know yet): attach
                // again, to the owner of the epoch followed (its link of this generation
                // is ignored from the next attempt on).
                info!(room = %e.room, conn, epoch, followed = e.epoch, "reattach answered by a stale owner: ignored");
                metrics::counter!(m::REATTACHES, "cause" => "stale_owner", "outcome" => "retry")
                    .increment(1);
                return Step::Retry;
            }
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
        Some(AttachAnswer::Refused { code, message, .. }) => Step::Refused {
            link: e.link.clone(),
            code,
            message,
        },
        _ => Step::Retry,
    }
}

/// One attempt's request, once the connection can be continued.
struct Attempt {
    room: String,
    owner: Option<String>,
    reattach: Reattach,
    last_seq: u64,
    gen: u64,
    wake: Arc<Notify>,
}

/// What the connection does now ([`follow`]); a new link's generation starts here, and
/// the commands that waited on the old one are answered.
fn prepare(e: &mut EdgeConn) -> Result<Attempt, Option<ConnLink>> {
    match follow(e.reattach.is_some(), e.relay.is_broken()) {
        Follow::GiveUp => Err(Some(e.link.clone())),
        Follow::AwaitWelcome => Err(None),
        Follow::Reattach => {
            let (gen, orphans) = e.relay.restart();
            e.answer_unknown(&orphans, "link_lost");
            Ok(Attempt {
                room: e.room.clone(),
                owner: e.owner.clone(),
                reattach: e.reattach.unwrap_or(Reattach::Spectator),
                last_seq: e.relay.last_seq(),
                gen,
                wake: e.wake.clone(),
            })
        }
    }
}

async fn reattach_loop(state: NodeState, conn: ConnId, cause: &'static str) {
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
            prepare(e).map_err(|link| (link, e.wake.clone()))
        };
        let a = match prepared {
            Ok(a) => a,
            Err((Some(link), _)) => {
                // Broken before its welcome said what it is: the client resumes itself.
                give_up(&state, conn, &link, cause, "its first frames were lost");
                return;
            }
            Err((None, wake)) => {
                // Its welcome is still on the way on the current link.
                if tokio::time::Instant::now() >= until {
                    if let Some(link) = edge.lock().get(&conn).map(|e| e.link.clone()) {
                        give_up(&state, conn, &link, cause, "its welcome never came");
                    }
                    return;
                }
                tokio::select! {
                    () = tokio::time::sleep(REATTACH_RETRY) => {}
                    () = wake.notified() => {}
                }
                continue;
            }
        };
        if let ControlFlow::Break(()) = attempt(&state, &cluster, conn, cause, until, a).await {
            return;
        }
    }
}

/// One reattach attempt: asks the room's owner to take the connection and acts on its
/// answer. `Continue`: try again, after the retry wait (or a wake) done here.
async fn attempt(
    state: &NodeState,
    cluster: &Cluster,
    conn: ConnId,
    cause: &'static str,
    until: tokio::time::Instant,
    a: Attempt,
) -> ControlFlow<()> {
    let edge = &cluster.routing.edge;
    let op = RoomOp::Attach {
        edge: cluster.node().to_string(),
        conn,
        gen: a.gen,
        how: AttachHow::Reattach {
            reattach: a.reattach,
            last_seq: a.last_seq,
        },
    };
    let answer = ask(state, &a.room, a.owner, op)
        .await
        .ok()
        .and_then(|b| serde_json::from_slice::<AttachAnswer>(&b).ok());
    match judge(edge, conn, a.gen, answer) {
        Step::Gone { attached } => {
            // The socket closed meanwhile: its detach may have reached the owner
            // before this attach did.
            if attached {
                detach(state, &a.room, conn, Some(a.gen)).await;
            }
            ControlFlow::Break(())
        }
        Step::Refused {
            link,
            code: ErrorCode::NotJoined,
            message,
        } => {
            superseded(state, conn, &link, cause, &message);
            ControlFlow::Break(())
        }
        Step::Refused { link, message, .. } => {
            give_up(state, conn, &link, cause, &message);
            ControlFlow::Break(())
        }
        Step::Done => {
            info!(node = %cluster.node(), room = %a.room, conn, last_seq = a.last_seq, cause, "relayed connection reattached");
            metrics::counter!(m::REATTACHES, "cause" => cause, "outcome" => "ok").increment(1);
            ControlFlow::Break(())
        }
        Step::Retry if tokio::time::Instant::now() >= until => {
            let link = edge.lock().get(&conn).map(|e| e.link.clone());
            if let Some(link) = link {
                give_up(
                    state,
                    conn,
                    &link,
                    cause,
                    "no node took the room over in time",
                );
            }
            ControlFlow::Break(())
        }
        Step::Retry => {
            state.wake_sweeper();
            tokio::select! {
                () = tokio::time::sleep(REATTACH_RETRY) => {}
                () = a.wake.notified() => {}
            }
            ControlFlow::Continue(())
        }
    }
}

/// Forgets `conn` and answers the commands it still waited for (the socket closes next).
fn forget(state: &NodeState, conn: ConnId, cause: &'static str) -> String {
    let Some(cluster) = state.cluster() else {
        return String::new();
    };
    let edge = &cluster.routing.edge;
    let room = {
        let mut conns = edge.lock();
        let room = conns.get(&conn).map(|e| e.room.clone()).unwrap_or_default();
        if let Some(mut e) = conns.remove(&conn) {
            let waiting = e.relay.abandon();
            e.answer_unknown(&waiting, "closed");
        }
        room
    };
    info!(node = %cluster.node(), room = %room, conn, cause, "relayed connection closed");
    room
}

fn give_up(state: &NodeState, conn: ConnId, link: &ConnLink, cause: &'static str, why: &str) {
    metrics::counter!(m::REATTACHES, "cause" => cause, "outcome" => "gave_up").increment(1);
    let room = forget(state, conn, cause);
    info!(room = %room, conn, cause, why, "relayed connection could not follow its room: closing (1012)");
    link.kick.kick(
        close_code::SERVICE_RESTART,
        "the room moved: reconnect and resume",
    );
}

/// The owner gave the seat to the client's newer connection (a resume): this one is
/// closed as a replaced session (4000, `closing` first), not told to resume.
fn superseded(state: &NodeState, conn: ConnId, link: &ConnLink, cause: &'static str, why: &str) {
    metrics::counter!(m::REATTACHES, "cause" => cause, "outcome" => "superseded").increment(1);
    let room = forget(state, conn, cause);
    info!(room = %room, conn, cause, why, "relayed connection lost its seat to a newer connection: closing (4000)");
    let reason = "another connection took over this seat";
    let closing = parchis_protocol::ServerMessage::Closing {
        code: close_code::SESSION_REPLACED,
        reason: reason.into(),
    };
    link.send(parchis_room::encode(&closing));
    link.kick.kick(close_code::SESSION_REPLACED, reason);
}
