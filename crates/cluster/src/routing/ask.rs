//! Requests to a room's owner on `P.room.<CODE>` (`docs/CLUSTER.md`, "Routing"), each
//! bounded: a command's forwarding is answered by the owner as soon as the room's queue
//! takes it, so it waits at most [`COMMAND_TIMEOUT`] (an owner that holds the subject but
//! answers nothing, e.g. paused, is not waited for longer); an attach (answered once the
//! room has handled it), a view or a tournament director's command or close, or the
//! quick-pairing matcher's lobby close (answered once the room stored what it changed) waits up to [`REQUEST_TIMEOUT`]. A subject nobody
//! serves answers at once: NATS reports no responders. Also the one request that wants no
//! answer: [`detach`] (a publish).

use crate::links::wire::{self, RoomOp, RoomRequest, WIRE_VERSION};
use crate::state::NodeState;
use async_nats::RequestErrorKind;
use parchis_room::ConnId;
use std::time::Duration;
use tracing::debug;

/// The longest wait for an owner's answer to an attach or a view (the room handles it
/// first: a join stores its seat).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest wait for an owner's answer to a command's forwarding or a probe (its
/// queue taking it: milliseconds), well within the client's patience: the edge then
/// answers `room_unavailable`.
pub const COMMAND_TIMEOUT: Duration = Duration::from_millis(1500);
/// A forwarded command's deadline, from the moment it is sent (`RoomOp::Command`'s
/// `deadline_ms`): an owner that gets it later does not apply it. Shorter than
/// [`COMMAND_TIMEOUT`] by a margin for the nodes' clock readings (each corrected by its
/// skew to the database's, measured over a round trip), so a command the owner takes
/// is taken before the edge stops waiting for it.
pub const COMMAND_DEADLINE: Duration = Duration::from_millis(1250);

/// Why a room's owner could not be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreachable {
    /// Nobody serves the room's subject (or this node has no NATS connection: nothing
    /// was sent).
    NoResponders,
    /// Somebody does but did not answer in time, or NATS failed.
    Failed,
}

/// How long `op` may wait for its answer.
pub fn bound(op: &RoomOp) -> Duration {
    match op {
        RoomOp::Command { .. } | RoomOp::Probe | RoomOp::Detach { .. } => COMMAND_TIMEOUT,
        RoomOp::Attach { .. }
        | RoomOp::View
        | RoomOp::Director { .. }
        | RoomOp::Close
        | RoomOp::CloseLobby => REQUEST_TIMEOUT,
    }
}

/// Sends `op` to room `code`'s owner (`owner`: the node a `moved` notice named) and
/// returns its answer's body.
///
/// # Errors
/// [`Unreachable`] when nobody serves the room or nobody answered within [`bound`].
pub async fn ask(
    state: &NodeState,
    code: &str,
    owner: Option<String>,
    op: RoomOp,
) -> Result<bytes::Bytes, Unreachable> {
    let Some(cluster) = state.cluster() else {
        return Err(Unreachable::NoResponders);
    };
    if !cluster.bus.is_connected() {
        // Not sent: async-nats would hold it until NATS is back and deliver it then,
        // late (a resume taking a seat back from the client's newer connection).
        return Err(Unreachable::NoResponders);
    }
    let timeout = bound(&op);
    let body = wire::to_bytes(&RoomRequest {
        v: WIRE_VERSION,
        owner,
        op,
    });
    let request = async_nats::Request::new()
        .payload(body)
        .timeout(Some(timeout));
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
pub async fn served(state: &NodeState, code: &str) -> bool {
    state.cluster().is_some() && ask(state, code, None, RoomOp::Probe).await.is_ok()
}

/// Tells room `code`'s owner that relayed connection `conn` closed (best effort):
/// `gen`, the link to detach (`None`: its current one, if it is still relayed here).
pub async fn detach(state: &NodeState, code: &str, conn: ConnId, gen: Option<u64>) {
    let Some(cluster) = state.cluster() else {
        return;
    };
    let gen = gen.or_else(|| cluster.routing.edge.gen_of(conn));
    let body = wire::to_bytes(&RoomRequest {
        v: wire::WIRE_VERSION,
        owner: None,
        op: RoomOp::Detach {
            edge: cluster.node().to_string(),
            conn,
            gen,
        },
    });
    let _ = cluster
        .bus
        .client()
        .publish(cluster.bus.room_subject(code), body)
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use parchis_room::SeatCmd;

    #[test]
    fn commands_wait_far_less_than_attaches() {
        let cmd = RoomOp::Command {
            edge: "b".into(),
            conn: 1,
            gen: Some(1),
            req: 2,
            seq: 3,
            cmd: SeatCmd::Roll.into(),
            deadline_ms: None,
        };
        assert_eq!(bound(&cmd), COMMAND_TIMEOUT);
        assert_eq!(bound(&RoomOp::Probe), COMMAND_TIMEOUT);
        assert_eq!(bound(&RoomOp::View), REQUEST_TIMEOUT);
        assert_eq!(bound(&RoomOp::Close), REQUEST_TIMEOUT);
        assert!(COMMAND_TIMEOUT * 3 <= REQUEST_TIMEOUT + Duration::from_millis(500));
        assert!(COMMAND_DEADLINE + Duration::from_millis(200) <= COMMAND_TIMEOUT);
    }
}
