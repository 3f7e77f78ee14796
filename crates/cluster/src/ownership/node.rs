//! This node towards the others: its heartbeat in `cluster_nodes` (every
//! `lease-renew-ms`: its room count, whether it drains and whether it sheds load, read
//! by placement, the drain and the sweepers) and its `P.node.<NODE>` request service (`docs/CLUSTER.md`, "NATS
//! subjects"): `create` (placement) and `adopt` (drain hand-off). Requests and replies
//! are JSON ([`NodeRequest`], [`NodeReply`]).

use super::observe::How;
use super::takeover;
use crate::state::NodeState;
use crate::NodeId;
use futures_util::StreamExt;
use parchis_protocol::{ErrorCode, RoomSettings};
use parchis_room::{self, Refusal};
use parchis_store::{LeaseKeeper, NodeRecord};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How long a node waits for another node's answer to a [`NodeRequest`].
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// Adopting: attempts to acquire a just-released lease, [`ADOPT_RETRY`] apart (a
/// renewal of the old owner's may still be landing).
const ADOPT_ATTEMPTS: u32 = 5;
const ADOPT_RETRY: Duration = Duration::from_millis(100);

/// A request to `P.node.<NODE>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum NodeRequest {
    /// Create a room with these (already validated) settings here (placement).
    Create {
        /// The room's settings.
        settings: RoomSettings,
        /// The address of the client that asked for it: the room counts among that
        /// address's open rooms on the node that runs it (`--max-lobbies-per-address`,
        /// `--max-bot-rooms-per-address`); absent from older nodes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<std::net::IpAddr>,
    },
    /// Acquire this room's lease at once (its owner drains and released it), restore it
    /// and serve it.
    Adopt {
        /// The room code.
        room: String,
    },
}

/// The answer to a [`NodeRequest`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum NodeReply {
    /// The room was created here.
    Created {
        /// Its code.
        code: String,
    },
    /// The room runs here now, at this lease epoch.
    Adopted {
        /// The new epoch.
        epoch: i64,
    },
    /// Not done.
    Refused {
        /// Why, as a protocol error code (`server_full`, `shutting_down`, `internal`…).
        code: ErrorCode,
        /// Human-readable text.
        message: String,
    },
}

impl NodeReply {
    fn refused(code: ErrorCode, message: impl Into<String>) -> NodeReply {
        NodeReply::Refused {
            code,
            message: message.into(),
        }
    }
}

/// Asks node `to` over `P.node.<to>` and waits at most [`REQUEST_TIMEOUT`].
///
/// # Errors
/// A text for logs when NATS fails, nobody answers in time or the answer is no
/// [`NodeReply`].
pub async fn ask(
    state: &NodeState,
    to: &NodeId,
    request: &NodeRequest,
) -> Result<NodeReply, String> {
    let Some(cluster) = state.cluster() else {
        return Err("not in cluster mode".to_owned());
    };
    let payload = serde_json::to_vec(request).map_err(|e| e.to_string())?;
    let subject = cluster.bus.node_subject(to);
    let answer = cluster.bus.client().request(subject, payload.into());
    let msg = tokio::time::timeout(REQUEST_TIMEOUT, answer)
        .await
        .map_err(|_| format!("node {to} did not answer in {REQUEST_TIMEOUT:?}"))?
        .map_err(|e| format!("node {to}: {e}"))?;
    serde_json::from_slice(&msg.payload).map_err(|e| format!("node {to} answered: {e}"))
}

/// This node's heartbeat now: its room count, whether it drains and whether it sheds
/// load (the row's `draining` and `shedding`: placement and a drain's hand-offs skip a
/// node that does either, the sweepers' [`super::sweeper::plan`] reads both).
pub async fn beat(state: &NodeState) {
    beat_on(state, &parchis_store::ViaStore(state.store().clone())).await;
}

/// [`beat`] on `keeper`'s connections.
async fn beat_on(state: &NodeState, keeper: &dyn LeaseKeeper) {
    let (Some(cluster), Some(own)) = (state.cluster(), state.ownership()) else {
        return;
    };
    let record = NodeRecord {
        node_id: cluster.node().as_str().to_owned(),
        rooms: u32::try_from(state.kinds().count()).unwrap_or(u32::MAX),
        draining: own.is_draining(),
        shedding: own.load.is_shedding(),
    };
    if let Err(e) = keeper.heartbeat_node(&record).await {
        tracing::warn!(node = %cluster.node(), error = %e, "heartbeat failed");
    }
    check_clock(cluster.node().as_str(), own, keeper).await;
}

/// Reads the database's clock and compares this node's with it ([`crate::held::clock`]): the
/// skew gauge, and a log line when it goes beyond the bound or comes back. Nothing when
/// the keeper has no clock of its own, or the reading fails (the heartbeat logged it).
async fn check_clock(node: &str, own: &crate::held::Ownership, keeper: &dyn LeaseKeeper) {
    let sent = parchis_room::now_ms();
    let Ok(Some(db)) = keeper.clock_ms().await else {
        return;
    };
    let skew = crate::held::clock::skew_ms(db, sent, parchis_room::now_ms());
    metrics::gauge!(parchis_telemetry::names::CLOCK_SKEW).set(skew as f64 / 1000.0);
    own.clock_skew_ms
        .store(skew, std::sync::atomic::Ordering::Relaxed);
    let was = own.clock_skewed.load(std::sync::atomic::Ordering::Relaxed);
    match crate::held::clock::judge(was, skew) {
        Some(true) => tracing::warn!(
            node,
            skew_ms = skew,
            bound_ms = crate::held::clock::SKEW_WARN_MS,
            "this node's clock differs from the database's beyond the bound: the turn deadlines it writes are replaced by the next owner"
        ),
        Some(false) => tracing::info!(node, skew_ms = skew, "this node's clock agrees with the database's again"),
        None => {}
    }
    own.clock_skewed.store(
        skew.abs() > crate::held::clock::SKEW_WARN_MS,
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// The heartbeat task: [`beat`] at once, then every `lease-renew-ms`, on `keeper`'s
/// connections (the lease thread's, [`super::lease_thread`]); ends at shutdown.
pub async fn heartbeat(state: NodeState, keeper: &dyn LeaseKeeper) {
    let Some(cluster) = state.cluster().cloned() else {
        return;
    };
    let shutdown = state.shutdown_token();
    let mut every = tokio::time::interval(cluster.config.lease_renew);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = every.tick() => beat_on(&state, keeper).await,
        }
    }
}

/// The `P.node.<NODE>` service: each request is answered from a task of its own. Ends
/// at shutdown.
pub async fn serve(state: NodeState) {
    let Some(cluster) = state.cluster().cloned() else {
        return;
    };
    let subject = cluster.bus.node_subject(cluster.node());
    let mut requests = match cluster.bus.client().subscribe(subject.clone()).await {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(node = %cluster.node(), subject, error = %e, "cannot serve node requests");
            return;
        }
    };
    let shutdown = state.shutdown_token();
    loop {
        let msg = tokio::select! {
            _ = shutdown.cancelled() => break,
            msg = requests.next() => match msg {
                Some(msg) => msg,
                None => break,
            },
        };
        let state = state.clone();
        tokio::spawn(async move {
            let reply = match serde_json::from_slice::<NodeRequest>(&msg.payload) {
                Ok(request) => handle(&state, request).await,
                Err(e) => NodeReply::refused(ErrorCode::BadRequest, e.to_string()),
            };
            let Some(to) = msg.reply else { return };
            let Ok(payload) = serde_json::to_vec(&reply) else {
                return;
            };
            if let Some(c) = state.cluster() {
                if let Err(e) = c.bus.client().publish(to, payload.into()).await {
                    tracing::warn!(node = %c.node(), error = %e, "node reply not sent");
                }
            }
        });
    }
}

/// Answers one request.
async fn handle(state: &NodeState, request: NodeRequest) -> NodeReply {
    let draining = state.ownership().is_none_or(|o| o.is_draining());
    if draining || state.shutdown_token().is_cancelled() {
        return NodeReply::refused(ErrorCode::ShuttingDown, "this node is draining");
    }
    match request {
        NodeRequest::Create { settings, client } => {
            if state.is_full() {
                return NodeReply::refused(ErrorCode::ServerFull, "too many rooms");
            }
            let bots = settings.bots.is_some();
            // The rooms this address holds here (the asking node checked its own), the
            // new one counted from now on (given back if it is not created).
            let reservation = match client {
                Some(ip) => match state.admission().reserve(ip, bots, |code| {
                    state.room(code).map(|h| h.listing().status)
                }) {
                    Ok(r) => Some(r),
                    Err(denied) => return NodeReply::refused(denied.code(), denied.to_string()),
                },
                None => None,
            };
            if let Some(why) = super::monitor::shedding_reason(state) {
                metrics::counter!(parchis_telemetry::names::CREATIONS_SHED).increment(1);
                return NodeReply::refused(
                    ErrorCode::ServerFull,
                    format!("this node is overloaded ({why})"),
                );
            }
            match parchis_room::create(state.rooms(), settings).await {
                Ok(code) => {
                    match reservation {
                        Some(r) => r.created(&code),
                        None => state.admission().created(None, &code, bots),
                    }
                    NodeReply::Created { code }
                }
                Err(Refusal { code, message, .. }) => NodeReply::Refused { code, message },
            }
        }
        NodeRequest::Adopt { room } => adopt(state, &room).await,
    }
}

/// [`adopt`] on this node for a room that stopped here to be rebuilt from its log
/// (`RoomEnd::Rebuild`, after its lease was released). Boxed: it runs in the stopped
/// actor's task and starts the next actor, so its future names no opaque type.
pub(crate) fn adopt_again<'a>(
    state: &'a NodeState,
    code: &'a str,
) -> futures_util::future::BoxFuture<'a, NodeReply> {
    Box::pin(adopt(state, code))
}

/// Takes room `code` over at once: acquires its lease (released by its draining owner),
/// restores and serves it. A released lease is also claimable: when this node's sweeper
/// got it first, the room is this node's all the same and the answer is `adopted`.
/// Refused `shutting_down` while this node drains or stops, `server_full` when it is full
/// or sheds load (`docs/CLUSTER.md`, "Load shedding": the drain then asks another node,
/// or leaves the lease released for the sweepers).
async fn adopt(state: &NodeState, code: &str) -> NodeReply {
    let Some(cluster) = state.cluster() else {
        return NodeReply::refused(ErrorCode::Internal, "not in cluster mode");
    };
    // Also for this node's own rebuild (`adopt_again`): a draining or stopping node
    // leaves the released lease to another node's sweeper instead of running the room
    // until its shutdown releases it a second time.
    let draining = state.ownership().is_none_or(|o| o.is_draining());
    if draining || state.shutdown_token().is_cancelled() {
        return NodeReply::refused(ErrorCode::ShuttingDown, "this node is draining");
    }
    if state.kinds().of(code).is_full() {
        return NodeReply::refused(ErrorCode::ServerFull, "too many rooms");
    }
    let node = cluster.node().as_str();
    let ours = || state.ownership().and_then(|o| o.fence_of(code));
    if ours().is_none() {
        if let Some(why) = super::monitor::shedding_reason(state) {
            // The drain asks another node, or leaves the lease released for a sweeper.
            metrics::counter!(parchis_telemetry::names::ADOPTIONS_SHED).increment(1);
            tracing::info!(node, room = code, why, "adopt refused: shedding load");
            return NodeReply::refused(
                ErrorCode::ServerFull,
                format!("this node is overloaded ({why}): it adopts no rooms"),
            );
        }
    }
    for attempt in 1..=ADOPT_ATTEMPTS {
        if let Some(fence) = ours() {
            return NodeReply::Adopted { epoch: fence.epoch };
        }
        match state
            .store()
            .acquire_lease(code, node, cluster.ttl_ms())
            .await
        {
            Ok(Some(fence)) => {
                let epoch = fence.epoch;
                return if takeover::bring_up(state, fence, How::Adopted).await {
                    NodeReply::Adopted { epoch }
                } else {
                    NodeReply::refused(ErrorCode::Internal, "the room did not restore here")
                };
            }
            Ok(None) if attempt < ADOPT_ATTEMPTS => tokio::time::sleep(ADOPT_RETRY).await,
            Ok(None) => return NodeReply::refused(ErrorCode::Internal, "the room's lease is held"),
            Err(e) => {
                tracing::warn!(node, room = code, error = %e, "adopt: lease not acquired");
                return NodeReply::refused(ErrorCode::Internal, e.to_string());
            }
        }
    }
    NodeReply::refused(ErrorCode::Internal, "the room's lease is held")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_are_plain_json() {
        let adopt = NodeRequest::Adopt {
            room: "ABCD".into(),
        };
        let text = serde_json::to_string(&adopt).expect("json");
        assert_eq!(text, r#"{"op":"adopt","room":"ABCD"}"#);
        let create: NodeRequest =
            serde_json::from_str(r#"{"op":"create","settings":{}}"#).expect("parse");
        assert!(matches!(create, NodeRequest::Create { .. }));
        let refused = NodeReply::refused(ErrorCode::ServerFull, "full");
        let text = serde_json::to_string(&refused).expect("json");
        assert_eq!(
            text,
            r#"{"answer":"refused","code":"server_full","message":"full"}"#
        );
        assert!(serde_json::from_str::<NodeRequest>(r#"{"op":"explode"}"#).is_err());
    }
}
