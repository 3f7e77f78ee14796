//! A relayed client's side of the room (`docs/CLUSTER.md`, "Routing: relayed
//! connections"): its `join`, `watch` or `resume` ([`attach`]), its commands
//! ([`command`]) and its socket closing ([`detach`]), forwarded to the room's owner on
//! `P.room.<CODE>`.

pub use super::ask::detach;
use super::ask::{ask, Unreachable, COMMAND_DEADLINE};
use crate::links::metrics as m;
use crate::links::wire::{AttachAnswer, AttachHow, CommandAnswer, RoomOp, WireCmd};
use crate::state::NodeState;
use parchis_protocol::ErrorCode;
use parchis_room::{ConnId, ConnLink, Refusal, SeatCmd};
use std::time::Duration;
use tracing::info;

/// The longest a command waits for its connection's reattach under way before it is
/// answered `room_unavailable` (never sent; a reattach to a live owner takes
/// milliseconds; one waiting for a takeover may take seconds, and the client is told at
/// once instead).
const SETTLE_BOUND: Duration = Duration::from_secs(1);

/// Attaches local connection `link` to room `code` on its owner (a `join`, `watch` or
/// `resume`): registered first, forgotten again unless attached.
///
/// # Errors
/// The owner's refusal (`Ok(Err)`), or [`Unreachable`].
pub async fn attach(
    state: &NodeState,
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
        Ok(AttachAnswer::Attached { epoch, node, .. }) => {
            let followed = edge
                .lock()
                .get_mut(&conn)
                .filter(|e| e.relay.gen() == gen)
                .is_some_and(|e| e.follow_owner(epoch, node));
            if !followed {
                // Answered by an owner older than one a `moved` notice named meanwhile
                // (or the connection is gone): the client tries again.
                info!(node = %cluster.node(), room = code, conn, epoch, "relayed attach answered by a stale owner: refused as unavailable");
                edge.forget(conn, Some(gen));
                return Err(Unreachable::Failed);
            }
            info!(node = %cluster.node(), room = code, conn, epoch, "relayed connection attached");
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

/// What became of a forwarded command, as far as the edge knows.
#[derive(Debug, PartialEq, Eq)]
pub enum Forwarded {
    /// The owner took it: its reply comes on the link (or the edge's own
    /// `outcome_unknown` if the link is given up first).
    Taken,
    /// It was answered already (its link was given up while it waited).
    Answered,
    /// The caller answers it with this refusal now.
    Refused(Refusal),
}

/// Forwards command `req` of relayed connection `conn` in room `code`. From the moment
/// it is registered its one reply is the owner's `ok`/`error` on the link, or the edge's
/// own: `room_unavailable` when the edge knows the owner did not take it (nobody serves
/// the room, the owner has no link for this connection, the room is not running there,
/// the command came after its deadline, a reattach under way did not settle), else
/// `outcome_unknown` (no answer within [`super::ask::COMMAND_TIMEOUT`]: it may have been
/// taken; after its deadline it is not, [`super::ask::COMMAND_DEADLINE`]).
pub async fn command(
    state: &NodeState,
    code: &str,
    conn: ConnId,
    req: u64,
    seq: u64,
    cmd: SeatCmd,
) -> Forwarded {
    let unavailable = || Forwarded::Refused(Refusal::code(ErrorCode::RoomUnavailable));
    let Some(cluster) = state.cluster() else {
        return unavailable();
    };
    let edge = &cluster.routing.edge;
    if !edge.sent(conn, req) {
        return unavailable();
    }
    // A command waits (briefly) for a reattach under way: it goes on the new link.
    let answer = match edge.settled(conn, SETTLE_BOUND).await {
        false => None,
        true => match edge.route(conn, req) {
            // Answered meanwhile (its link was given up).
            None => return Forwarded::Answered,
            Some((gen, owner)) => {
                let deadline = cluster.ownership.db_now_ms()
                    + i64::try_from(COMMAND_DEADLINE.as_millis()).unwrap_or(i64::MAX);
                let op = RoomOp::Command {
                    edge: cluster.node().to_string(),
                    conn,
                    gen: Some(gen),
                    req,
                    seq,
                    cmd: WireCmd::from(cmd),
                    deadline_ms: Some(deadline),
                };
                Some(ask(state, code, owner, op).await)
            }
        },
    };
    let taken = answer
        .as_ref()
        .and_then(|a| a.as_ref().ok())
        .and_then(|b| serde_json::from_slice::<CommandAnswer>(b).ok());
    let outcome = match (&answer, taken) {
        (_, Some(CommandAnswer::Taken)) => "taken",
        (_, Some(CommandAnswer::NotAttached)) => "not_attached",
        (_, Some(CommandAnswer::Expired)) => "expired",
        (_, Some(CommandAnswer::Gone)) => "gone",
        (None, _) => "reattaching",
        (Some(Err(Unreachable::NoResponders)), _) => "no_owner",
        _ => "unreachable",
    };
    m::forwarded(outcome);
    if taken == Some(CommandAnswer::Taken) {
        return Forwarded::Taken;
    }
    match answer {
        Some(Err(Unreachable::NoResponders)) => state.wake_sweeper(),
        Some(_) if taken == Some(CommandAnswer::NotAttached) => {
            // The owner has no link for this connection (it found this node gone and
            // detached it, e.g. while NATS was cut): it follows the room again.
            super::reattach::start_reattach(state, conn, "not_attached");
        }
        _ => {}
    }
    // Answered by the owner (not taken) or never sent: nothing was applied. Sent and not
    // answered (a timeout, a NATS failure, an answer this node cannot read): unknown.
    let known = taken.is_some() || !matches!(answer, Some(Err(Unreachable::Failed)) | Some(Ok(_)));
    if !edge.claim(conn, req) {
        return Forwarded::Answered;
    }
    if known {
        unavailable()
    } else {
        info!(node = %cluster.node(), room = code, conn, req, "relayed command not answered by its owner in time: outcome unknown");
        Forwarded::Refused(Refusal::code(ErrorCode::OutcomeUnknown))
    }
}

/// Forwards `leave` (command `req`, based on `seq`) of relayed connection `conn` and
/// waits for its outcome: `Ok(true)` once its `ok` was delivered (the seat is freed and
/// stored: the session leaves the room); `Ok(false)` when it was refused or answered
/// `outcome_unknown` (the client has its reply: the session stays joined, as on the
/// owner's node); `Err` with the refusal the caller sends.
///
/// # Errors
/// The refusal to send when the owner did not take it ([`command`]).
pub async fn leave(
    state: &NodeState,
    code: &str,
    conn: ConnId,
    req: u64,
    seq: u64,
) -> Result<bool, Refusal> {
    let Some(cluster) = state.cluster() else {
        return Err(Refusal::code(ErrorCode::RoomUnavailable));
    };
    let Some(outcome) = cluster.routing.edge.leaving(conn, req) else {
        return Err(Refusal::code(ErrorCode::RoomUnavailable));
    };
    match command(state, code, conn, req, seq, SeatCmd::Leave).await {
        Forwarded::Refused(r) => Err(r),
        // Its reply (the owner's, or the edge's own) settles the outcome; the edge
        // answers a command left without a reply after `REPLY_WINDOW`.
        Forwarded::Taken | Forwarded::Answered => {
            let bound = crate::links::edge::REPLY_WINDOW + crate::links::edge::REPLY_SWEEP * 2;
            Ok(matches!(
                tokio::time::timeout(bound, outcome).await,
                Ok(Ok(true))
            ))
        }
    }
}
