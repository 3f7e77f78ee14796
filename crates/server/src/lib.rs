//! # parchis-server
//!
//! The authoritative online Parchís server (axum 0.8 on tokio):
//!
//! * [`app`] builds the router: `/healthz` and `/readyz` ([`health`]), `/metrics`
//!   ([`metrics`]), `POST/GET /api/rooms`, `GET /api/rooms/{code}`,
//!   `GET /api/games` ([`games`]: paged, filtered), `GET /api/games/{id}`,
//!   `GET /api/games/{id}/export` and `GET /api/games/{id}/replay` ([`replay`]), the admin
//!   API ([`admin`]), the accounts' routes ([`accounts`]: sign-up, sessions, profiles,
//!   blocks and their admin routes), `GET /api/config` ([`client_config`]), the OpenAPI document of them all at `/api/openapi.json`
//!   ([`api_doc`]), the WebSocket endpoint `/ws`, and the web client's spot at `/`
//!   ([`static_files`]). [`api_routes`] registers each documented route with its docs.
//! * [`run`] serves a router on a listener until a shutdown token fires, then tells every
//!   client, waits for the room actors and flushes the store. Tests call it on port 0.
//! * One actor task per room ([`parchis_room`]) owns the room and its [`parchis_engine::Game`];
//!   connections ([`ws`]) talk to it through bounded channels.
//!
//! The wire protocol lives in `parchis-protocol` and is documented in `proto/README.md`.

pub mod accounts;
pub mod admin;
pub mod admin_auth;
pub mod api_doc;
pub mod client_addr;
pub mod client_config;
pub mod config;
pub mod games;
pub mod health;
pub mod http;
pub mod leaderboard;
pub mod listener;
pub mod logging;
pub mod metrics;
pub mod names;
pub mod origin;
pub mod pairing;
pub mod pairing_tickets;
pub mod replay;
pub mod stall;
pub mod state;
pub mod static_files;
pub mod tournament_errors;
pub mod tournament_relay;
pub mod tournament_views;
pub mod tournaments;
pub mod ws;

use aide::axum::routing::get_with;
use aide::axum::ApiRouter;
use axum::routing::get;
use axum::Router;
use std::io;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use config::ServerConfig;
pub use state::AppState;

/// The documented routes: the HTTP API, each registered with its docs
/// ([`api_doc`]: `api_route(path, get_with(handler, handler_docs))`), and the undocumented
/// ones (the WebSocket, described by `proto/asyncapi.json`, and the web client's files).
pub fn api_routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/api/rooms",
            get_with(http::list_rooms, http::list_rooms_docs)
                .post_with(http::create_room, http::create_room_docs)
                .layer(axum::extract::DefaultBodyLimit::max(
                    http::MAX_CREATE_BODY_BYTES,
                )),
        )
        .api_route(
            "/api/rooms/{code}",
            get_with(http::get_room, http::get_room_docs),
        )
        .api_route(
            "/api/games",
            get_with(games::list_games, games::list_games_docs),
        )
        .api_route(
            "/api/games/{id}",
            get_with(games::get_game, games::get_game_docs),
        )
        .api_route(
            "/api/games/{id}/export",
            get_with(games::export_game, games::export_game_docs),
        )
        .api_route(
            "/api/games/{id}/replay",
            get_with(replay::get_replay, replay::get_replay_docs),
        )
        .api_route(
            "/api/openapi.json",
            get_with(api_doc::serve, api_doc::serve_docs),
        )
        .api_route(
            "/api/leaderboard",
            get_with(leaderboard::leaderboard, leaderboard::leaderboard_docs),
        )
        .api_route(
            "/api/config",
            get_with(client_config::get_config, client_config::get_config_docs),
        )
        .route("/ws", get(ws::upgrade))
        .api_route("/healthz", get_with(health::healthz, health::healthz_docs))
        .api_route("/readyz", get_with(health::readyz, health::readyz_docs))
        .api_route("/metrics", get_with(metrics::scrape, metrics::scrape_docs))
        .merge(admin::router())
        .merge(accounts::router())
        .merge(pairing::router())
        .merge(tournaments::router())
        .merge(static_files::router())
}

/// The OpenAPI document of [`api_routes`] (`proto/openapi.json`), and aide's complaints
/// while generating it (none expected).
pub fn openapi() -> (aide::openapi::OpenApi, Vec<String>) {
    let (_, api, complaints) = api_doc::generate(api_routes);
    (api, complaints)
}

/// The router: HTTP API, WebSocket endpoint and the static web client's spot, with the
/// OpenAPI document of its routes at `/api/openapi.json`.
///
/// Handlers read the client's address from [`client_addr::ClientAddr`], which
/// [`listener::serve`] attaches; every request must be answered within
/// [`config::Timeouts::request`] (408 otherwise).
pub fn app(state: AppState) -> Router {
    let request_timeout = state.config().timeouts.request;
    let (router, api, _) = api_doc::generate(api_routes);
    let document = api_doc::Document(api_doc::render(&api).into());
    router
        .layer(accounts::extension(&state))
        .layer(accounts::auth::layer(
            state.store().clone(),
            accounts::secure_cookies(&state),
        ))
        .layer(axum::Extension(document))
        .layer(access_log())
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            request_timeout,
        ))
        .with_state(state)
}

/// One INFO line per HTTP request once it is answered (`method`, `uri` in the span;
/// `status` and `latency` in µs), by tower-http's `TraceLayer`.
fn access_log() -> tower_http::trace::TraceLayer<
    tower_http::classify::SharedClassifier<tower_http::classify::ServerErrorsAsFailures>,
> {
    use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};
    use tower_http::LatencyUnit;
    TraceLayer::new_for_http()
        .make_span_with(DefaultMakeSpan::new().level(tracing::Level::INFO))
        .on_response(
            DefaultOnResponse::new()
                .level(tracing::Level::INFO)
                .latency_unit(LatencyUnit::Micros),
        )
}

/// Brings back the stored rooms ([`recover`]), then serves [`app`] on `listener` until
/// `shutdown` is cancelled, then shuts down gracefully:
/// stops accepting, closes every WebSocket with code 1001 (the room actors and connection
/// tasks watch the same token), waits for them, and closes the store (flushing pending
/// writes).
///
/// In cluster mode (`docs/CLUSTER.md`) nothing is recovered at start (that would fork
/// rooms owned by live nodes): the lease renewer, the heartbeat, the sweeper (which
/// claims rooms like on any node), the tournaments' claim loop and the `P.node.<NODE>`
/// service start instead; at the end the rooms release their leases and the node's heartbeat row is removed.
pub async fn run(
    listener: TcpListener,
    state: AppState,
    shutdown: CancellationToken,
) -> io::Result<()> {
    // Routing first: rooms the sweeper brings up are served on their subjects at once.
    parchis_cluster::routing::start(state.node())
        .await
        .map_err(io::Error::other)?;
    if state.cluster().is_some() {
        parchis_cluster::ownership::start(state.node());
        // Tournaments: each node takes the leases of those nobody directs (docs/TOURNAMENTS.md),
        // and answers the commands other nodes forward to the directors running here.
        tokio::spawn(state.directors().clone().claim_loop());
        tournament_relay::serve(state.clone())
            .await
            .map_err(io::Error::other)?;
    } else {
        recover(&state).await.map_err(io::Error::other)?;
        // Tournaments after their rooms: each director performs what it still owes.
        if let Err(e) = state.directors().restore_all().await {
            tracing::error!(error = %e, "tournaments not restored");
        }
    }
    let router = app(state.clone());
    // Link the server's own token to the caller's so actors and connections see it.
    let inner = state.shutdown_token();
    let watcher = {
        let shutdown = shutdown.clone();
        let inner = inner.clone();
        tokio::spawn(async move {
            shutdown.cancelled().await;
            inner.cancel();
        })
    };
    let forgetter = {
        let state = state.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(std::time::Duration::from_secs(60));
            loop {
                every.tick().await;
                state.admission().forget_idle();
            }
        })
    };
    let matcher = tokio::spawn(pairing::matcher::run(state.clone()));
    let renames = tokio::spawn(accounts::renames::listen(state.clone()));
    // Cluster mode: the new ratings other nodes announce reach this node's rooms.
    let rerated = state.cluster().cloned().map(|cluster| {
        tokio::spawn(parchis_cluster::rerated::listen(
            cluster,
            state.rooms().clone(),
            inner.clone(),
        ))
    });
    tracing::info!("serving");
    let result = listener::serve(listener, router, state.clone(), inner.clone()).await;
    inner.cancel();
    forgetter.abort();
    matcher.abort();
    renames.abort();
    if let Some(rerated) = rerated {
        rerated.abort();
    }
    state.tracker().close();
    state.tracker().wait().await;
    parchis_cluster::ownership::leave(state.node()).await;
    state.store().close().await;
    watcher.abort();
    tracing::info!("shut down");
    result
}

/// Brings back every unfinished room from the store ([`parchis_room::restore()`]): lobbies and
/// running games, replayed through the engine. A room whose stored events do not replay
/// is logged (with room and game ids) and left closed. Returns how many rooms came back.
///
/// # Errors
/// The store could not be read.
pub async fn recover(state: &AppState) -> Result<usize, parchis_store::StoreError> {
    let snapshots = state.store().load_unfinished().await?;
    let mut restored = 0;
    for snapshot in &snapshots {
        let game = snapshot.game.as_ref().map(|g| g.id);
        match parchis_room::restore(state.rooms(), snapshot, None).await {
            Ok(_) => restored += 1,
            Err(e) => tracing::error!(
                room = %snapshot.room.code,
                game = ?game,
                error = %e,
                "room not restored: it stays closed"
            ),
        }
    }
    tracing::info!(restored, stored = snapshots.len(), "recovery done");
    Ok(restored)
}
