//! Cluster mode's tournaments between nodes (`docs/TOURNAMENTS.md`, "Cluster"): any node
//! serves every tournament route, while one node directs each tournament (holds its
//! lease).
//!
//! * **Commands** ([`forward`]): a node that does not direct the tournament turns the
//!   request into the director's input as usual (the caller's account id and username in
//!   it) and sends it to the directing node on `P.tournament.<NODE>` (NATS request/reply,
//!   at most [`FORWARD_TIMEOUT`]); that node's [`serve`] hands it to its director and
//!   answers what the director answered, once its events are durable. Nobody listening
//!   (the node is gone) is answered `503 room_unavailable`, "not applied"; no answer in
//!   time is `503 outcome_unknown` (the command may have been applied: read the
//!   tournament before sending it again). Both with `Retry-After`.
//! * **Live views** ([`crate::tournament_views::NatsRelay`], [`remote_views`]): every director publishes each view
//!   on `P.tview.<ID>` with its log's last seq; a node serving the SSE subscription of a
//!   tournament it does not direct sends the stored view first, then every relayed view
//!   of a higher seq, and folds the store again every [`RESYNC`] (a lost message, or a
//!   director moving to another node, delays a view but loses none).

use crate::http::ApiError;
use crate::state::AppState;
use crate::tournament_errors::refused;
use crate::tournament_views::{PublishedOwned, VIEWS_VERSION};
use async_nats::RequestErrorKind;
use axum::http::StatusCode;
use futures_util::{Stream, StreamExt};
use parchis_director::DirectorError;
use parchis_protocol::ErrorCode;
use parchis_tournament::{Input, TournamentView};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use tracing::{debug, info, warn};
use uuid::Uuid;

/// The version of the forwarded commands' shapes.
pub const WIRE_VERSION: u32 = 1;
/// The longest wait for the directing node's answer to a forwarded command (below the
/// HTTP request timeout of 10 s): the director answers once its events are stored and
/// their effects (rooms opened, started, closed) performed.
pub const FORWARD_TIMEOUT: Duration = Duration::from_secs(8);
/// How often a relayed live subscription folds the store again.
pub const RESYNC: Duration = Duration::from_secs(5);
/// `Retry-After` of a command that could not be forwarded, seconds.
pub const RETRY_SECS: u64 = 1;

/// A command forwarded to the directing node on `P.tournament.<NODE>`.
#[derive(Debug, Serialize, Deserialize)]
struct Forwarded {
    v: u32,
    tournament: Uuid,
    /// The director's input, the caller's identity in it (`by`, `account`).
    input: Input,
}

/// The directing node's answer to [`Forwarded`].
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
enum ForwardAnswer {
    /// Stored (and its effects performed).
    Done,
    /// The director (or the asked node) refused it: the HTTP answer to give.
    Refused {
        status: u16,
        code: ErrorCode,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_secs: Option<u64>,
    },
    /// The asked node does not direct it (any more): `owner` does (empty: nobody now).
    /// Nothing was applied.
    Elsewhere { owner: String },
    /// Unreadable, or another version: nothing was applied.
    Bad { message: String },
}

/// Serves `P.tournament.<NODE>` for this node until shutdown (cluster mode; nothing on a
/// single node): each forwarded command is handed to the director here and answered with
/// its outcome.
///
/// # Errors
/// NATS refused the subscription.
pub async fn serve(state: AppState) -> Result<(), String> {
    let Some(cluster) = state.cluster().cloned() else {
        return Ok(());
    };
    let subject = cluster.bus.tournament_subject(cluster.node().as_str());
    let mut sub = cluster
        .bus
        .client()
        .subscribe(subject.clone())
        .await
        .map_err(|e| format!("subscribing to {subject}: {e}"))?;
    let shutdown = state.shutdown_token();
    tokio::spawn(async move {
        loop {
            let msg = tokio::select! {
                () = shutdown.cancelled() => break,
                msg = sub.next() => msg,
            };
            let Some(msg) = msg else { break };
            tokio::spawn(answer(state.clone(), msg));
        }
        let _ = sub.unsubscribe().await;
    });
    Ok(())
}

/// Hands one forwarded command to the director here and answers its outcome.
async fn answer(state: AppState, msg: async_nats::Message) {
    let Some(reply) = msg.reply.clone() else {
        return;
    };
    let answer = match serde_json::from_slice::<Forwarded>(&msg.payload) {
        Ok(f) if f.v != WIRE_VERSION => ForwardAnswer::Bad {
            message: format!("wire version {}, this node speaks {WIRE_VERSION}", f.v),
        },
        Ok(f) => {
            let id = f.tournament;
            match state.directors().input(id, f.input).await {
                Ok(()) => {
                    info!(tournament = %id, "forwarded tournament command done");
                    ForwardAnswer::Done
                }
                Err(DirectorError::Elsewhere { owner, .. }) => ForwardAnswer::Elsewhere { owner },
                Err(e) => {
                    let api = refused(e);
                    let (status, body, retry_after_secs) = api.parts();
                    ForwardAnswer::Refused {
                        status: status.as_u16(),
                        code: body.code,
                        message: body.message.clone(),
                        retry_after_secs,
                    }
                }
            }
        }
        Err(e) => ForwardAnswer::Bad {
            message: e.to_string(),
        },
    };
    let Some(cluster) = state.cluster() else {
        return;
    };
    let body = serde_json::to_vec(&answer).unwrap_or_default();
    if let Err(e) = cluster.bus.client().publish(reply, body.into()).await {
        warn!(error = %e, "answer to a forwarded tournament command not sent");
    }
}

fn not_applied(message: String) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::RoomUnavailable,
        message,
    )
    .retry_after(RETRY_SECS)
}

/// Sends `input` for tournament `id` to `owner`, the node holding its lease (cluster
/// mode), and returns what its director answered. When `owner` answers that another
/// node directs it now, that node is asked once more.
///
/// # Errors
/// The director's refusal as its HTTP answer; `503 room_unavailable` (nothing was
/// applied: nobody directs it now, or the node is gone) or `503 outcome_unknown` (no
/// answer in time: it may have been applied), both with `Retry-After`.
pub async fn forward(
    state: &AppState,
    id: Uuid,
    owner: &str,
    input: Input,
) -> Result<(), ApiError> {
    let Some(cluster) = state.cluster() else {
        return Err(not_applied(
            "the tournament is directed by another node".into(),
        ));
    };
    let me = cluster.node().as_str();
    let body = serde_json::to_vec(&Forwarded {
        v: WIRE_VERSION,
        tournament: id,
        input,
    })
    .map_err(|e| not_applied(format!("command not encoded: {e}")))?;
    let mut owner = owner.to_owned();
    for _ in 0..2 {
        if owner.is_empty() || owner == me {
            break;
        }
        if !cluster.bus.is_connected() {
            return Err(not_applied(
                "this node has lost its link to the cluster; nothing was applied: retry".into(),
            ));
        }
        let request = async_nats::Request::new()
            .payload(body.clone().into())
            .timeout(Some(FORWARD_TIMEOUT));
        let sent = cluster
            .bus
            .client()
            .send_request(cluster.bus.tournament_subject(&owner), request)
            .await;
        let msg = match sent {
            Ok(msg) => msg,
            Err(e) if e.kind() == RequestErrorKind::NoResponders => {
                info!(tournament = %id, node = %owner, "tournament command not forwarded: node gone");
                return Err(not_applied(format!(
                    "the tournament's director (node {owner}) is not reachable; nothing was \
                     applied: retry in a moment"
                )));
            }
            Err(e) => {
                warn!(tournament = %id, node = %owner, error = %e, "forwarded tournament command unanswered");
                return Err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    ErrorCode::OutcomeUnknown,
                    format!(
                        "the tournament's director (node {owner}) did not answer in time: the \
                         command may have been applied; read the tournament before sending it \
                         again"
                    ),
                )
                .retry_after(RETRY_SECS));
            }
        };
        match serde_json::from_slice::<ForwardAnswer>(&msg.payload) {
            Ok(ForwardAnswer::Done) => return Ok(()),
            Ok(ForwardAnswer::Refused {
                status,
                code,
                message,
                retry_after_secs,
            }) => {
                let status =
                    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let e = ApiError::new(status, code, message);
                return Err(match retry_after_secs {
                    Some(s) => e.retry_after(s),
                    None => e,
                });
            }
            Ok(ForwardAnswer::Elsewhere { owner: next }) => {
                debug!(tournament = %id, asked = %owner, next = %next, "tournament moved: asking its new director");
                if next == owner {
                    break;
                }
                owner = next;
            }
            Ok(ForwardAnswer::Bad { message }) => {
                return Err(not_applied(format!(
                    "the tournament's director refused the forwarded command ({message}); \
                     nothing was applied"
                )))
            }
            Err(e) => {
                return Err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    ErrorCode::OutcomeUnknown,
                    format!(
                        "unreadable answer of the tournament's director ({e}): the command may \
                         have been applied; read the tournament before sending it again"
                    ),
                )
                .retry_after(RETRY_SECS))
            }
        }
    }
    Err(not_applied(
        "the tournament is moving to another node; nothing was applied: retry in a moment".into(),
    ))
}

/// The live views of tournament `id`, directed by another node: the stored view now,
/// then each view its director publishes with a higher seq, and the store folded again
/// every [`RESYNC`]. Ends at shutdown.
///
/// # Errors
/// As `GET /api/tournaments/{id}` (`404`, `503`).
pub async fn remote_views(
    state: &AppState,
    id: Uuid,
) -> Result<impl Stream<Item = Arc<TournamentView>> + Send + 'static, ApiError> {
    let Some(cluster) = state.cluster().cloned() else {
        return Err(not_applied(
            "the tournament is directed by another node".into(),
        ));
    };
    // Subscribed before the store is read: nothing published after the read is missed.
    let subject = cluster.bus.tournament_view_subject(&id);
    let sub = cluster
        .bus
        .client()
        .subscribe(subject)
        .await
        .map_err(|e| not_applied(format!("live views not subscribed: {e}")))?;
    let (seq, first) = state.directors().stored_view(id).await.map_err(refused)?;
    let mut resync = tokio::time::interval(RESYNC);
    resync.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    resync.reset();
    let feed = Feed {
        state: state.clone(),
        id,
        sub,
        last: seq,
        first: Some(first),
        resync,
    };
    Ok(futures_util::stream::unfold(feed, Feed::next))
}

/// The state of one relayed live subscription.
struct Feed {
    state: AppState,
    id: Uuid,
    sub: async_nats::Subscriber,
    /// The highest seq sent.
    last: i64,
    first: Option<Arc<TournamentView>>,
    resync: tokio::time::Interval,
}

impl Feed {
    async fn next(mut self) -> Option<(Arc<TournamentView>, Feed)> {
        if let Some(first) = self.first.take() {
            return Some((first, self));
        }
        let shutdown = self.state.shutdown_token();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return None,
                msg = self.sub.next() => {
                    let msg = msg?;
                    match serde_json::from_slice::<PublishedOwned>(&msg.payload) {
                        Ok(p) if p.v == VIEWS_VERSION && p.tournament == self.id && p.seq > self.last => {
                            self.last = p.seq;
                            return Some((Arc::new(p.view), self));
                        }
                        Ok(_) => {}
                        Err(e) => debug!(tournament = %self.id, error = %e, "unreadable relayed view"),
                    }
                }
                _ = self.resync.tick() => {
                    match self.state.directors().stored_view(self.id).await {
                        Ok((seq, view)) if seq > self.last => {
                            self.last = seq;
                            return Some((view, self));
                        }
                        Ok(_) => {}
                        Err(e) => debug!(tournament = %self.id, error = %e, "stored view not read"),
                    }
                }
            }
        }
    }
}
