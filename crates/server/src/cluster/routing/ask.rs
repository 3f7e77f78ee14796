//! Requests to a room's owner on `P.room.<CODE>` (`docs/CLUSTER.md`, "Routing"), each
//! waiting at most [`REQUEST_TIMEOUT`]. A subject nobody serves answers at once: NATS
//! reports no responders.

use super::wire::{self, RoomOp, RoomRequest, WIRE_VERSION};
use crate::state::AppState;
use async_nats::RequestErrorKind;
use std::time::Duration;
use tracing::debug;

/// The longest wait for an owner's answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a room's owner could not be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreachable {
    /// Nobody serves the room's subject.
    NoResponders,
    /// Somebody does but did not answer in time, or NATS failed.
    Failed,
}

/// Sends `op` to room `code`'s owner (`owner`: the node a `moved` notice named) and
/// returns its answer's body.
///
/// # Errors
/// [`Unreachable`] when nobody serves the room or nobody answered in time.
pub async fn ask(
    state: &AppState,
    code: &str,
    owner: Option<String>,
    op: RoomOp,
) -> Result<axum::body::Bytes, Unreachable> {
    let Some(cluster) = state.cluster() else {
        return Err(Unreachable::NoResponders);
    };
    let timeout = REQUEST_TIMEOUT;
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
pub async fn served(state: &AppState, code: &str) -> bool {
    state.cluster().is_some() && ask(state, code, None, RoomOp::Probe).await.is_ok()
}
