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
//! [`router`] is merged into [`crate::api_routes`] (documented in the OpenAPI document);
//! [`extension`] and [`auth::layer`] wrap the whole router (the WebSocket upgrade reads
//! the session too).

mod admin;
pub mod auth;
pub(crate) mod csrf;
mod handlers;
pub mod limits;
pub mod password;
pub mod ratings;
pub mod renames;
mod shared;
pub mod username;

use aide::axum::routing::{get_with, post_with};
use aide::axum::ApiRouter;
use axum::extract::DefaultBodyLimit;

pub(crate) use handlers::ORIGIN_NOT_ALLOWED;
pub use handlers::{DELETED_NAME, RESERVED_MS};

use crate::state::AppState;

pub use shared::{Accounts, MAX_BODY_BYTES};

/// The account routes (mounted at the root), each with its docs (`docs/API_DOCS.md`).
/// They need [`Accounts`] as a request extension ([`extension`]), which [`crate::app`]
/// adds over the whole router; state-changing requests pass the CSRF check first.
pub fn router() -> ApiRouter<AppState> {
    use admin::*;
    use handlers::*;
    ApiRouter::new()
        .api_route("/api/accounts", post_with(sign_up, sign_up_docs))
        .api_route("/api/accounts/recover", post_with(recover, recover_docs))
        .api_route(
            "/api/session",
            post_with(log_in_route, log_in_docs).delete_with(log_out, log_out_docs),
        )
        .api_route(
            "/api/me",
            get_with(me, me_docs).delete_with(delete_me, delete_me_docs),
        )
        .api_route(
            "/api/me/password",
            post_with(change_password, change_password_docs),
        )
        .api_route("/api/me/blocks", get_with(blocks, blocks_docs))
        .api_route(
            "/api/me/blocks/{username}",
            post_with(block, block_docs).delete_with(unblock, unblock_docs),
        )
        .api_route("/api/players/{username}", get_with(profile, profile_docs))
        .api_route(
            "/admin/accounts/{username}/password",
            post_with(reset_password, reset_password_docs),
        )
        .api_route(
            "/admin/accounts/{username}/rename",
            post_with(rename, rename_docs),
        )
        .api_route("/admin/accounts/{username}/ban", post_with(ban, ban_docs))
        .api_route(
            "/admin/accounts/{username}/ratings/reset",
            post_with(reset_ratings, reset_ratings_docs),
        )
        .route_layer(axum::middleware::from_fn(csrf::check))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// The [`Accounts`] extension of `state`'s configuration, for [`crate::app`] to add over
/// the whole router.
pub fn extension(state: &AppState) -> axum::Extension<std::sync::Arc<Accounts>> {
    axum::Extension(Accounts::of(state))
}

/// Whether session cookies are `Secure`: the public URL is https.
pub fn secure_cookies(state: &AppState) -> bool {
    state
        .config()
        .public_url
        .to_ascii_lowercase()
        .starts_with("https://")
}
