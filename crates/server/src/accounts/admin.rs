//! The accounts' admin routes (the admin API's token: [`crate::admin_auth`]); every action
//! is logged with the account's id.
//!
//! * `POST /admin/accounts/{username}/password` [`AdminResetPassword`] → 204: a new
//!   password; every session and token of the account is revoked.
//! * `POST /admin/accounts/{username}/rename` [`AdminRename`] → 204; 409 `username_taken`.
//! * `POST /admin/accounts/{username}/ban` [`AdminBan`] → 204: banned accounts cannot log
//!   in, and their sessions and tokens stop working.
//! * `POST /admin/accounts/{username}/ratings/reset` → 204: the account's ratings and
//!   rating history are deleted in every pool (its next rated game starts from the
//!   initial rating).
//!
//! An unknown username is 404 `unknown_player`.

use std::sync::Arc;

use aide::transform::TransformOperation;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Extension;
use parchis_protocol::{AdminBan, AdminRename, AdminResetPassword};
use tracing::info;

use super::handlers::{
    by_name, parse, store, UsernamePath, INTERNAL, ORIGIN_NOT_ALLOWED, UNAVAILABLE,
};
use super::shared::{Accounts, MAX_BODY_BYTES};
use super::{password, username};
use crate::admin_auth::authorize;
use crate::api_doc;
use crate::client_addr::ClientAddr;
use crate::http::{ApiError, ApiPath};
use crate::state::AppState;

fn bad_request(message: String) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        parchis_protocol::ErrorCode::BadRequest,
        message,
    )
}

/// The 404 of a route naming an account by its username.
const ADMIN_NO_ACCOUNT: (u16, &str) = (
    404,
    "admin_disabled: no admin token is configured; unknown_player: no account \
     has this username.",
);

/// The docs of [`reset_password`].
pub fn reset_password_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("adminResetPassword")
        .summary("Set an account's password")
        .description("Every session and token of the account end.")
        .response_with::<204, (), _>(|r| r.description("Set."));
    let op = api_doc::raw_json_body::<AdminResetPassword>(op, MAX_BODY_BYTES);
    api_doc::errors(
        api_doc::admin(op),
        &[
            (
                400,
                "bad_request: the body is not one JSON object of this shape, the password is \
                 refused, or the username is not UTF-8 once percent-decoded.",
            ),
            ADMIN_NO_ACCOUNT,
            ORIGIN_NOT_ALLOWED,
            INTERNAL,
            UNAVAILABLE,
        ],
    )
}

/// `POST /admin/accounts/{username}/password`.
pub async fn reset_password(
    State(state): State<AppState>,
    Extension(svc): Extension<Arc<Accounts>>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    headers: HeaderMap,
    ApiPath(UsernamePath { username: name }): ApiPath<UsernamePath>,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    authorize(&state, client, &headers, "reset_password")?;
    let ask: AdminResetPassword = parse(&body)?;
    password::check_new(&ask.new_password).map_err(|e| bad_request(e.to_string()))?;
    let accounts = store(&state)?;
    let account = by_name(accounts, &name).await?;
    let hash = svc.hasher.hash(ask.new_password).await?;
    accounts
        .set_password(account.id, &hash, parchis_room::now_ms())
        .await?;
    info!(account = %account.id, "admin reset a password");
    Ok(StatusCode::NO_CONTENT)
}

/// The docs of [`rename`].
pub fn rename_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("adminRenameAccount")
        .summary("Rename an account")
        .response_with::<204, (), _>(|r| r.description("Renamed."));
    let op = api_doc::raw_json_body::<AdminRename>(op, MAX_BODY_BYTES);
    api_doc::errors(
        api_doc::admin(op),
        &[
            (
                400,
                "bad_request: the body is not one JSON object of this shape, the new \
                 username is refused, or the username is not UTF-8 once percent-decoded.",
            ),
            ADMIN_NO_ACCOUNT,
            ORIGIN_NOT_ALLOWED,
            INTERNAL,
            UNAVAILABLE,
            (
                409,
                "username_taken: another account (or a deleted one's, for 30 days) has the \
                 new username.",
            ),
        ],
    )
}

/// `POST /admin/accounts/{username}/rename`.
pub async fn rename(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    headers: HeaderMap,
    ApiPath(UsernamePath { username: name }): ApiPath<UsernamePath>,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    authorize(&state, client, &headers, "rename_account")?;
    let ask: AdminRename = parse(&body)?;
    let new = username::check(&ask.username).map_err(|e| bad_request(e.to_string()))?;
    let accounts = store(&state)?;
    let account = by_name(accounts, &name).await?;
    accounts
        .rename_account(account.id, &new.name, &new.key, parchis_room::now_ms())
        .await?;
    info!(account = %account.id, from = %account.username, to = %new.name, "admin renamed an account");
    // The live rooms where the account sits show the new name (every node's, in a cluster).
    super::renames::announce(&state, account.id, &new.name).await;
    Ok(StatusCode::NO_CONTENT)
}

/// The docs of [`ban`].
pub fn ban_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("adminBanAccount")
        .summary("Ban or unban an account")
        .description(
            "A banned account cannot log in, its sessions and tokens stop working and its \
             profile is hidden.",
        )
        .response_with::<204, (), _>(|r| r.description("Done."));
    let op = api_doc::raw_json_body::<AdminBan>(op, MAX_BODY_BYTES);
    api_doc::errors(
        api_doc::admin(op),
        &[
            (
                400,
                "bad_request: the body is not one JSON object of this shape, or the username \
                 is not UTF-8 once percent-decoded.",
            ),
            ADMIN_NO_ACCOUNT,
            ORIGIN_NOT_ALLOWED,
            INTERNAL,
            UNAVAILABLE,
        ],
    )
}

/// `POST /admin/accounts/{username}/ban`.
pub async fn ban(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    headers: HeaderMap,
    ApiPath(UsernamePath { username: name }): ApiPath<UsernamePath>,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    authorize(&state, client, &headers, "ban_account")?;
    let ask: AdminBan = parse(&body)?;
    let accounts = store(&state)?;
    let account = by_name(accounts, &name).await?;
    let at = ask.banned.then(parchis_room::now_ms);
    accounts.set_banned(account.id, at).await?;
    info!(account = %account.id, banned = ask.banned, "admin banned or unbanned an account");
    Ok(StatusCode::NO_CONTENT)
}

/// The docs of [`reset_ratings`].
pub fn reset_ratings_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("adminResetRatings")
        .summary("Reset an account's ratings")
        .description(
            "Deletes the account's rating and rating history in every pool; its next rated \
             game starts from the initial rating. No body.",
        )
        .response_with::<204, (), _>(|r| r.description("Reset (also when it had none)."));
    api_doc::errors(
        api_doc::admin(op),
        &[
            (
                400,
                "bad_request: the username is not UTF-8 once percent-decoded.",
            ),
            ADMIN_NO_ACCOUNT,
            ORIGIN_NOT_ALLOWED,
            INTERNAL,
            UNAVAILABLE,
        ],
    )
}

/// `POST /admin/accounts/{username}/ratings/reset`.
pub async fn reset_ratings(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    headers: HeaderMap,
    ApiPath(UsernamePath { username: name }): ApiPath<UsernamePath>,
) -> Result<StatusCode, ApiError> {
    authorize(&state, client, &headers, "reset_ratings")?;
    let accounts = store(&state)?;
    let account = by_name(accounts, &name).await?;
    let deleted = state.store().reset_ratings(account.id).await?;
    info!(account = %account.id, pools = deleted, "admin reset an account's ratings");
    // Its seats in live rooms (of every node) show no rating from now on.
    state.rooms().ratings_changed(None, vec![account.id]);
    Ok(StatusCode::NO_CONTENT)
}
