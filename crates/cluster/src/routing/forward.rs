//! A relayed client's side of the room (`docs/CLUSTER.md`, "Routing: relayed
//! connections"): its `join`, `watch` or `resume` ([`attach`]), its commands
//! ([`command`]) and its socket closing ([`detach`]), forwarded to the room's owner on
//! `P.room.<CODE>`.

use super::ask::{ask, Unreachable};
use crate::links::metrics as m;
use crate::links::wire::{
    self, AttachAnswer, AttachHow, CommandAnswer, RoomOp, RoomRequest, WireCmd,
};
use crate::state::NodeState;
use parchis_protocol::ErrorCode;
use parchis_room::{ConnId, ConnLink, Refusal, SeatCmd};
use std::time::Duration;
use tracing::info;

/// The longest a command waits for its connection's reattach under way before it is
/// answered `room_unavailable` (a reattach to a live owner takes milliseconds; one
/// waiting for a takeover may take seconds, and the client is told at once instead).
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

/// Forwards command `req` of relayed connection `conn` in room `code`. From the moment
/// it is registered its one reply is the owner's `ok`/`error` on the link, or the edge's
/// `room_unavailable` (here, or when the link is given up: [`crate::links::edge`]).
///
/// # Errors
/// A retryable `room_unavailable` refusal for the caller to send when the owner did not
/// take the command (nothing was applied) and nobody answered it yet.
pub async fn command(
    state: &NodeState,
    code: &str,
    conn: ConnId,
    req: u64,
    seq: u64,
    cmd: SeatCmd,
) -> Result<(), Refusal> {
    let unavailable = || Refusal::code(ErrorCode::RoomUnavailable);
    let Some(cluster) = state.cluster() else {
        return Err(unavailable());
    };
    let edge = &cluster.routing.edge;
    let leave = cmd == SeatCmd::Leave;
    if leave {
        edge.leaving(conn);
    }
    if !edge.sent(conn, req) {
        return Err(unavailable());
    }
    // A command waits (briefly) for a reattach under way: it goes on the new link.
    let answer = match edge.settled(conn, SETTLE_BOUND).await {
        false => None,
        true => match edge.route(conn, req) {
            // Answered meanwhile (its link was given up).
            None => return Ok(()),
            Some((gen, owner)) => {
                let op = RoomOp::Command {
                    edge: cluster.node().to_string(),
                    conn,
                    gen: Some(gen),
                    req,
                    seq,
                    cmd: WireCmd::from(cmd),
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
        (None, _) => "reattaching",
        _ => "unreachable",
    };
    m::forwarded(outcome);
    if taken == Some(CommandAnswer::Taken) {
        if leave {
            detach(state, code, conn).await;
        }
        return Ok(());
    }
    if matches!(answer, Some(Err(Unreachable::NoResponders))) {
        state.wake_sweeper();
    }
    if edge.claim(conn, req) {
        Err(unavailable())
    } else {
        Ok(())
    }
}

/// Tells room `code`'s owner that relayed connection `conn` closed (best effort).
pub async fn detach(state: &NodeState, code: &str, conn: ConnId) {
    let Some(cluster) = state.cluster() else {
        return;
    };
    let body = wire::to_bytes(&RoomRequest {
        v: wire::WIRE_VERSION,
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
