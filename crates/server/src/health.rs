//! Liveness and readiness probes.
//!
//! * `GET /healthz` — liveness: the process serves HTTP. Always `200 ok`.
//! * `GET /readyz` — readiness: `200` with [`Readiness`] `ready` only when the store
//!   answers a cheap query ([`parchis_store::Store::ping`]) within [`READY_TIMEOUT`];
//!   otherwise `503` with the reason. A load balancer stops sending players to a server
//!   whose database is gone, and sends them again once it is back. A cluster node that
//!   sheds load (`docs/CLUSTER.md`, "Load shedding") is not ready either.

use crate::state::AppState;
use aide::transform::TransformOperation;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use parchis_protocol::{Readiness, ReadinessStatus};
use std::time::Duration;

/// How long the store may take to answer the readiness query.
pub const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// `GET /healthz`: liveness only.
pub async fn healthz() -> &'static str {
    "ok"
}

/// The docs of [`healthz`].
pub fn healthz_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    op.id("healthz")
        .summary("Liveness")
        .description(
            "`ok` while the process serves HTTP, even to a connection over a connection \
             limit (for supervisors).",
        )
        .tag("operations")
        .response_with::<200, &'static str, _>(|r| r.description("`ok` (`text/plain`)."))
}

/// What a `503` of `/readyz` carries: the store's answer ([`Readiness`]), or, beyond the
/// connections reserved for operators, the connection limit's [`parchis_protocol::HttpError`].
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum NotReady {
    /// The server is not ready: the store failed or is slow, it sheds load, or it shuts down.
    Readiness(Readiness),
    /// A connection limit's refusal (`server_full`), with `Retry-After`.
    Refused(parchis_protocol::HttpError),
}

/// The docs of [`readyz`].
pub fn readyz_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("readyz")
        .summary("Readiness")
        .description(
            "Ready only when the store answers a cheap query within 2 s (and, in cluster \
             mode, the node does not shed load), for load balancers.",
        )
        .tag("operations")
        .response_with::<200, Json<Readiness>, _>(|r| r.description("`{\"status\":\"ready\"}`."))
        .response_with::<503, Json<NotReady>, _>(|r| {
            r.description(
                "Not ready: `{\"status\":\"unavailable\",\"reason\":…}`; or a connection \
                 limit's `server_full` (with `Retry-After`).",
            )
        });
    crate::api_doc::errors(op, &[])
}

/// `GET /readyz`: `200 {"status":"ready"}`, or `503 {"status":"unavailable","reason":…}`
/// when the store fails or does not answer within [`READY_TIMEOUT`], or the server is
/// shutting down.
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Readiness>) {
    let reason = if state.shutdown_token().is_cancelled() {
        Some("the server is shutting down".to_owned())
    } else if let Some(why) = parchis_cluster::ownership::monitor::shedding_reason(state.node()) {
        Some(format!("overloaded: shedding load ({why})"))
    } else {
        match tokio::time::timeout(READY_TIMEOUT, state.store().ping()).await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(format!("store: {e}")),
            Err(_) => Some(format!(
                "store: no answer within {} ms",
                READY_TIMEOUT.as_millis()
            )),
        }
    };
    match reason {
        None => (
            StatusCode::OK,
            Json(Readiness {
                status: ReadinessStatus::Ready,
                reason: None,
            }),
        ),
        Some(reason) => {
            tracing::warn!(%reason, "not ready");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(Readiness {
                    status: ReadinessStatus::Unavailable,
                    reason: Some(reason),
                }),
            )
        }
    }
}
