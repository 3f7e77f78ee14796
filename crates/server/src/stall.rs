//! Fault injection for tests (`--debug-stall-hook`, off by default): `POST
//! /admin/debug/stall` with `{"ms": N}` blocks every worker thread of the server's main
//! tokio runtime for `N` milliseconds (at most 30 s), as a burst of work that never
//! yields would (a mass disconnect, a flood of fan-out). Nothing scheduled on the main
//! runtime (sockets, room actors, timers, its I/O driver) runs meanwhile; the lease thread
//! (docs/CLUSTER.md, "Lease thread") is not on it. `POST /admin/debug/shed` with
//! `{"ms": N}` (cluster mode) makes the load monitor see a group commit in flight beyond
//! its limit for `N` milliseconds (at most 30 s), so the node sheds load
//! (docs/CLUSTER.md, "Load shedding"; `commit_slow`) as if its writer were stuck, and
//! stops shedding by the usual rule once the time is up. Both need the admin token too;
//! without the setting the routes answer 404 `admin_disabled`.

use crate::api_doc;
use crate::client_addr::ClientAddr;
use crate::http::ApiError;
use crate::state::AppState;
use aide::transform::TransformOperation;
use axum::extract::{Extension, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use parchis_protocol::ErrorCode;
use serde::Deserialize;
use std::time::{Duration, Instant};

/// The longest stall one request may ask for.
const LONGEST: Duration = Duration::from_secs(30);
/// The stall starts this long after the request, so that its answer is sent first.
const HEAD_START: Duration = Duration::from_millis(100);

/// The body of `POST /admin/debug/stall`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct StallRequest {
    /// Milliseconds every worker thread stays blocked.
    pub ms: u64,
}

/// The gate of both hooks: `--debug-stall-hook` set (else `404 admin_disabled`) and the
/// admin token (`crate::admin_auth::authorize`, as action `what`).
fn allowed(
    state: &AppState,
    client: std::net::IpAddr,
    headers: &HeaderMap,
    what: &str,
) -> Result<(), ApiError> {
    if !state.config().debug_stall_hook {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::AdminDisabled,
            format!("the {what} hook is off (--debug-stall-hook)"),
        ));
    }
    crate::admin_auth::authorize(state, client, headers, what)
}

/// What both hooks answer besides 202: the admin API's refusals and the JSON body's.
fn hook_docs<'t>(op: TransformOperation<'t>, extra: &[(u16, &str)]) -> TransformOperation<'t> {
    let op = op
        .tag("debug")
        .response_with::<202, (), _>(|r| r.description("Accepted (no body)."));
    let op = api_doc::errors(op, extra);
    let op = api_doc::errors(
        api_doc::admin(op),
        &[(
            404,
            "admin_disabled: the hook is off (`--debug-stall-hook`) or no admin token is \
             configured.",
        )],
    );
    api_doc::json_body_rejections(op)
}

/// The docs of [`stall`].
pub fn stall_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    hook_docs(
        op.id("debugStall")
            .summary("Block every worker thread for `ms` (tests only)"),
        &[],
    )
}

/// The docs of [`shed`].
pub fn shed_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    hook_docs(
        op.id("debugShed")
            .summary("Make a cluster node shed load for `ms` (tests only)"),
        &[(400, "bad_request: load shedding needs cluster mode.")],
    )
}

/// `POST /admin/debug/stall`: answers at once (202), then, 100 ms later, blocks every
/// worker thread of the main runtime for `ms`.
///
/// # Errors
/// `404 admin_disabled` unless `--debug-stall-hook` is set; the admin API's `401`/`404` for
/// the token.
pub async fn stall(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    headers: HeaderMap,
    Json(req): Json<StallRequest>,
) -> Result<StatusCode, ApiError> {
    allowed(&state, client, &headers, "stall")?;
    let runtime = tokio::runtime::Handle::current();
    let workers = runtime.metrics().num_workers();
    let from = Instant::now() + HEAD_START;
    let until = from + Duration::from_millis(req.ms).min(LONGEST);
    tracing::warn!(
        workers,
        ms = req.ms,
        "debug hook: stalling every worker thread"
    );
    // Spawned from a thread outside the runtime, the blockers go to its shared queue, so
    // each idle worker takes one; each blocks its worker until the same instant.
    std::thread::spawn(move || {
        std::thread::sleep(from.saturating_duration_since(Instant::now()));
        for _ in 0..workers {
            runtime.spawn(async move {
                std::thread::sleep(until.saturating_duration_since(Instant::now()));
            });
        }
    });
    Ok(StatusCode::ACCEPTED)
}

/// `POST /admin/debug/shed`: answers 202 at once; the node sheds load from its load
/// monitor's next sample (within a quarter `lease-renew-ms`) until `ms` from now, and
/// then until its load has been calm for two TTLs.
///
/// # Errors
/// `404 admin_disabled` unless `--debug-stall-hook` is set, `400 bad_request` on a
/// single node; the admin API's `401`/`404` for the token.
pub async fn shed(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    headers: HeaderMap,
    Json(req): Json<StallRequest>,
) -> Result<StatusCode, ApiError> {
    allowed(&state, client, &headers, "shed")?;
    let Some(own) = state.node().ownership() else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            ErrorCode::BadRequest,
            "load shedding needs cluster mode",
        ));
    };
    let ms = Duration::from_millis(req.ms).min(LONGEST);
    tracing::warn!(ms = req.ms, "debug hook: shedding load");
    own.load.force_until(tokio::time::Instant::now() + ms);
    Ok(StatusCode::ACCEPTED)
}
