//! Prometheus metrics at `GET /metrics` (text exposition format 0.0.4), recorded with the
//! `metrics` crate and rendered by `metrics-exporter-prometheus`.
//!
//! Counters end in `_total`, durations are histograms in seconds (`_seconds`), label values
//! are closed sets (no room codes or ids). Room and connection gauges are computed from the
//! room registry at scrape time. The names, with their help texts, are the constants of
//! `parchis_telemetry::names` (re-exported here);
//! `deploy/grafana-dashboard.json` charts them.
//!
//! The names and the recorder live in `parchis-telemetry` (re-exported here); this module
//! is the endpoint: it samples the room gauges at scrape time and renders.

use crate::state::AppState;
use aide::transform::TransformOperation;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use parchis_protocol::RoomStatus;
pub use parchis_telemetry::names::*;
pub use parchis_telemetry::recorder::{install, Cached};

/// Sets the scrape-time gauges from the room registry.
fn sample(state: &AppState) {
    let (mut lobby, mut playing, mut finished) = (0u32, 0u32, 0u32);
    let (mut players, mut spectators) = (0u32, 0u32);
    for room in state.all_rooms() {
        let l = room.listing();
        match l.status {
            RoomStatus::Lobby => lobby += 1,
            RoomStatus::Playing => playing += 1,
            RoomStatus::Finished => finished += 1,
        }
        players += l.connected_players;
        spectators += l.summary.spectators;
    }
    metrics::gauge!(ROOMS, "status" => "lobby").set(lobby);
    metrics::gauge!(ROOMS, "status" => "playing").set(playing);
    metrics::gauge!(ROOMS, "status" => "finished").set(finished);
    metrics::gauge!(CONNECTIONS, "role" => "player").set(players);
    metrics::gauge!(CONNECTIONS, "role" => "spectator").set(spectators);
    if let Some(own) = state.node().ownership() {
        metrics::gauge!(CLUSTER_ROOMS_OWNED).set(own.count() as f64);
    }
}

/// The docs of [`scrape`].
pub fn scrape_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("metrics")
        .summary("Prometheus metrics")
        .description("The text exposition format 0.0.4; the names are `parchis_telemetry::names`.")
        .tag("operations")
        .response_with::<200, String, _>(|r| {
            r.description("`text/plain; version=0.0.4`: the metrics.")
        });
    let op = crate::api_doc::errors(
        op,
        &[(
            503,
            "server_full: a connection limit (JSON, with `Retry-After`).",
        )],
    );
    crate::api_doc::plain_text(
        op,
        &[(
            503,
            "This process has no Prometheus recorder (`text/plain`).",
        )],
    )
}

/// `GET /metrics`: every metric in the Prometheus text format (`text/plain;
/// version=0.0.4`). `503` if this process has no Prometheus recorder.
pub async fn scrape(State(state): State<AppState>) -> axum::response::Response {
    let Some(handle) = install() else {
        return (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "metrics recorder not installed\n",
        )
            .into_response();
    };
    sample(&state);
    handle.run_upkeep();
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        handle.render(),
    )
        .into_response()
}
