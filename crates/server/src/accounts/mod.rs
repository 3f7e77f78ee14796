//! Accounts and sessions (issue 26; docs/ACCOUNTS.md): sign-up, log-in, log-out,
//! password change and recovery, deletion, profiles, blocks, and the accounts' admin
//! routes. Guests play as before: nothing here is needed to create, join or watch a room.
//!
//! * [`username`]: what an account may be called, and the key that makes two names one.
//! * [`password`]: Argon2id hashing (bounded, off the async threads), recovery codes,
//!   bearer tokens.
//! * [`auth`]: who is asking: cookie sessions (tower-sessions + axum-login over the
//!   store's database) and bearer tokens.
//! * [`limits`]: sign-up and log-in rates (governor).
//! * `handlers`, `admin`: the routes (sharing `shared::Accounts`); `csrf`: the Origin
//!   check of state-changing requests.
//!
//! [`routes`] is merged into the router, [`auth::layer`] wraps the whole router (the
//! WebSocket upgrade reads the session too).

mod admin;
pub mod auth;
mod csrf;
mod handlers;
pub mod limits;
pub mod password;
pub mod ratings;
mod shared;
pub mod username;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::{Extension, Router};

pub use handlers::{DELETED_NAME, RESERVED_MS};

use crate::state::AppState;

/// The largest body an account route reads (bytes); larger: 413.
pub const MAX_BODY_BYTES: usize = 4096;

pub use shared::Accounts;

/// The account routes (mounted at the root).
pub fn routes(state: &AppState) -> Router<AppState> {
    let limits = &state.config().accounts;
    let shared = Arc::new(Accounts {
        hasher: password::Hasher::new(limits.concurrent_hashes),
        rates: limits::AccountRates::new(limits),
    });
    Router::new()
        .route("/api/accounts", post(handlers::sign_up))
        .route("/api/accounts/recover", post(handlers::recover))
        .route(
            "/api/session",
            post(handlers::log_in_route).delete(handlers::log_out),
        )
        .route("/api/me", get(handlers::me).delete(handlers::delete_me))
        .route("/api/me/password", post(handlers::change_password))
        .route("/api/me/blocks", get(handlers::blocks))
        .route(
            "/api/me/blocks/{username}",
            post(handlers::block).delete(handlers::unblock),
        )
        .route("/api/players/{username}", get(handlers::profile))
        .route(
            "/admin/accounts/{username}/password",
            post(admin::reset_password),
        )
        .route("/admin/accounts/{username}/rename", post(admin::rename))
        .route("/admin/accounts/{username}/ban", post(admin::ban))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            csrf::check,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(Extension(shared))
}

/// Whether session cookies are `Secure`: the public URL is https.
pub fn secure_cookies(state: &AppState) -> bool {
    state
        .config()
        .public_url
        .to_ascii_lowercase()
        .starts_with("https://")
}
