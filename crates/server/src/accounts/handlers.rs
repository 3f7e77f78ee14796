//! The accounts' HTTP handlers (`proto/README.md`, "Accounts"). Bodies are read as bytes
//! (at most `accounts::MAX_BODY_BYTES`) and parsed here, so that a bad one gets the usual
//! JSON error body.
//!
//! Each handler's OpenAPI docs (`*_docs`, `docs/API_DOCS.md`) sit next to it.
//!
//! Why one file over 600 lines: one handler per route, each a few steps in order
//! (limits, body, password, store, session), and its docs beside it; they share the
//! helpers at the top.

use std::sync::Arc;

use aide::transform::TransformOperation;
use aide::NoApi;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use axum_login::AuthSession;
use parchis_protocol::{
    BlockList, ChangePassword, Credentials, DeleteAccount, ErrorCode, Me, Profile, Recover,
    SessionToken, SignUp,
};
use parchis_store::{AccountRecord, AccountStore, Deletion, NewAccount, StoreError};
use serde::de::DeserializeOwned;
use tracing::info;
use uuid::Uuid;

use super::auth::{self, Backend, User, Via};
use super::password::{self, HashFailed};
use super::ratings;
use super::shared::{Accounts, MAX_BODY_BYTES};
use super::username;
use crate::api_doc;
use crate::client_addr::ClientAddr;
use crate::http::{ApiError, ApiPath};
use crate::state::AppState;

/// A deleted account's name in its games.
pub const DELETED_NAME: &str = "deleted player";
/// How long a deleted account's username stays reserved: 30 days (ms).
pub const RESERVED_MS: i64 = 30 * 24 * 3600 * 1000;
/// Games listed on a profile.
const RECENT_GAMES: u32 = 20;

/// The path of the routes naming a player: `{username}`.
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
pub struct UsernamePath {
    /// The player's username, any spelling of it (case and accents as the username's key
    /// folds them); an unknown one is `404 unknown_player`.
    pub username: String,
}

/// What a state-changing account route may answer besides its own errors.
pub(crate) const ORIGIN_NOT_ALLOWED: (u16, &str) = (
    403,
    "origin_not_allowed: a browser page of an origin that is not allowed sent it (the CSRF \
     check; apps send no `Origin`).",
);
/// The 500 of every account route.
pub(super) const INTERNAL: (u16, &str) = (
    500,
    "internal: password hashing, the session or the store failed.",
);
/// The 503 of every account route.
pub(super) const UNAVAILABLE: (u16, &str) = (
    503,
    "room_unavailable: the database is out of reach, or this server's store keeps no \
     accounts; server_full.",
);
/// The 429 of the routes that check a password.
const LOGIN_LIMITED: (u16, &str) = (
    429,
    "rate_limited: log-in attempts of this address per minute or for this username per \
     hour (or a connection limit).",
);
/// The 400 of a body that is not the operation's.
const BAD_BODY: &str = "bad_request: the body is not one JSON object of this shape";

fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::BadRequest, message)
}

fn bad_credentials() -> ApiError {
    let code = ErrorCode::BadCredentials;
    ApiError::new(StatusCode::UNAUTHORIZED, code, code.describe())
}

fn not_logged_in() -> ApiError {
    let code = ErrorCode::NotLoggedIn;
    ApiError::new(StatusCode::UNAUTHORIZED, code, code.describe())
}

fn unknown_player() -> ApiError {
    let code = ErrorCode::UnknownPlayer;
    ApiError::new(StatusCode::NOT_FOUND, code, code.describe())
}

pub(super) fn internal(what: &str, e: impl std::fmt::Display) -> ApiError {
    tracing::error!(error = %e, "{what} failed");
    let code = ErrorCode::Internal;
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, code, code.describe())
}

impl From<HashFailed> for ApiError {
    fn from(e: HashFailed) -> ApiError {
        internal("password hashing", e)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::UsernameTaken(_) => {
                let code = ErrorCode::UsernameTaken;
                ApiError::new(StatusCode::CONFLICT, code, code.describe())
            }
            e if e.is_unreachable() => {
                let code = ErrorCode::RoomUnavailable;
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    code,
                    "the database is out of reach; retry in a moment",
                )
            }
            e => internal("accounts' store", e),
        }
    }
}

/// The body as one JSON object of `T`.
pub(super) fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(bad_request("the body must be one JSON object"));
    }
    serde_json::from_slice(body).map_err(|e| bad_request(e.to_string()))
}

/// The store's accounts (503 when the store keeps none).
pub(super) fn store(state: &AppState) -> Result<&dyn AccountStore, ApiError> {
    state.store().accounts().ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::RoomUnavailable,
            "this server's store keeps no accounts",
        )
    })
}

/// The player asking, or 401 `not_logged_in`.
async fn me_or_401(
    state: &AppState,
    headers: &HeaderMap,
    session: &AuthSession<Backend>,
) -> Result<(User, Via), ApiError> {
    auth::current(state.store(), headers, None, session)
        .await?
        .ok_or_else(not_logged_in)
}

/// A fresh bearer token for `id`, stored.
async fn new_token(accounts: &dyn AccountStore, id: Uuid) -> Result<String, ApiError> {
    let token = password::bearer_token();
    accounts
        .insert_token(
            &parchis_store::hash_token(&token),
            id,
            parchis_room::now_ms(),
        )
        .await?;
    Ok(token)
}

/// Logs the cookie session in as `user` (a new session id: no fixation).
async fn log_in(session: &mut AuthSession<Backend>, user: &User) -> Result<(), ApiError> {
    session
        .login(user)
        .await
        .map_err(|e| internal("session log-in", e))
}

async fn me_view(state: &AppState, record: &AccountRecord) -> Result<Me, ApiError> {
    let accounts = store(state)?;
    Ok(Me {
        id: record.id.to_string(),
        username: record.username.clone(),
        created_at_ms: record.created_at_ms,
        ratings: ratings::ratings_of(state.store().as_ref(), record.id).await?,
        recovery_codes_left: accounts.recovery_codes_left(record.id).await?,
    })
}

/// Checks the password of the logged-in `user` (a log-in attempt for the limits).
async fn check_password(
    state: &AppState,
    svc: &Accounts,
    ip: std::net::IpAddr,
    user: &User,
    given: String,
) -> Result<AccountRecord, ApiError> {
    let accounts = store(state)?;
    svc.rates.login(ip, &username::key(&user.username))?;
    let record = accounts
        .account(user.id)
        .await?
        .filter(AccountRecord::is_active)
        .ok_or_else(not_logged_in)?;
    if !svc
        .hasher
        .verify(given, Some(record.password_hash.clone()))
        .await?
    {
        return Err(bad_credentials());
    }
    Ok(record)
}

/// The 404 of a route naming an account by its username.
const UNKNOWN_PLAYER: (u16, &str) = (
    404,
    "unknown_player: no account has this username (or it is deleted).",
);

/// The docs of [`sign_up`].
pub fn sign_up_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("signUp")
        .summary("Sign up")
        .description(
            "Creates an account and logs this client in: the answer sets the session cookie \
             and carries a bearer token and ten one-time recovery codes (shown only here).",
        )
        .tag("accounts")
        .response_with::<201, Json<SignUp>, _>(|r| {
            let r = r.description("Created and logged in (the cookie is set).");
            api_doc::links(
                r,
                &[(
                    "GetPlayer",
                    "getPlayer",
                    &[("username", "$response.body#/account/username")],
                )],
            )
        });
    let op = api_doc::raw_json_body::<Credentials>(op, MAX_BODY_BYTES);
    let bad = format!("{BAD_BODY}, or the username or password is refused (the message says why).");
    api_doc::errors(
        op,
        &[
            (400, bad.as_str()),
            ORIGIN_NOT_ALLOWED,
            (
                409,
                "username_taken: an account (or a deleted one's, for 30 days) has this \
                 username or one that differs only in case or accents.",
            ),
            (
                429,
                "rate_limited: sign-ups of this address per hour (or a connection limit).",
            ),
            INTERNAL,
            UNAVAILABLE,
        ],
    )
}

/// `POST /api/accounts`: sign up ([`Credentials`] → 201 [`SignUp`] and the cookie).
pub async fn sign_up(
    State(state): State<AppState>,
    Extension(svc): Extension<Arc<Accounts>>,
    Extension(ClientAddr(ip)): Extension<ClientAddr>,
    NoApi(mut session): NoApi<AuthSession<Backend>>,
    body: Bytes,
) -> Result<Response, ApiError> {
    svc.rates.signup(ip)?;
    let accounts = store(&state)?;
    let creds: Credentials = parse(&body)?;
    let name = username::check(&creds.username).map_err(|e| bad_request(e.to_string()))?;
    password::check_new(&creds.password).map_err(|e| bad_request(e.to_string()))?;
    let hash = svc.hasher.hash(creds.password).await?;
    let codes = password::recovery_codes();
    let now = parchis_room::now_ms();
    let new = NewAccount {
        id: Uuid::now_v7(),
        username: name.name.clone(),
        username_key: name.key,
        password_hash: hash,
        created_at_ms: now,
        recovery_code_hashes: codes.iter().map(|c| password::code_hash(c)).collect(),
    };
    accounts.create_account(&new).await?;
    let record = accounts.account(new.id).await?.ok_or_else(not_logged_in)?;
    let token = new_token(accounts, new.id).await?;
    log_in(&mut session, &User::from(record.clone())).await?;
    info!(account = %new.id, username = %new.username, %ip, "account created");
    let body = SignUp {
        account: me_view(&state, &record).await?,
        recovery_codes: codes,
        token,
    };
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// The docs of [`log_in_route`].
pub fn log_in_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("logIn")
        .summary("Log in")
        .description("Sets the session cookie and returns a new bearer token.")
        .tag("accounts")
        .response_with::<200, Json<SessionToken>, _>(|r| {
            let r = r.description("Logged in (the cookie is set).");
            api_doc::links(
                r,
                &[(
                    "GetPlayer",
                    "getPlayer",
                    &[("username", "$response.body#/username")],
                )],
            )
        });
    let op = api_doc::raw_json_body::<Credentials>(op, MAX_BODY_BYTES);
    let bad = format!("{BAD_BODY}.");
    api_doc::errors(
        op,
        &[
            (400, bad.as_str()),
            (
                401,
                "bad_credentials: no such username, or a wrong password (the same answer).",
            ),
            (
                403,
                "account_banned: the account is banned; origin_not_allowed: the CSRF check.",
            ),
            LOGIN_LIMITED,
            INTERNAL,
            UNAVAILABLE,
        ],
    )
}

/// `POST /api/session`: log in ([`Credentials`] → 200 [`SessionToken`] and the cookie).
/// A wrong password and an unknown user get the same 401, at the same cost.
pub async fn log_in_route(
    State(state): State<AppState>,
    Extension(svc): Extension<Arc<Accounts>>,
    Extension(ClientAddr(ip)): Extension<ClientAddr>,
    NoApi(mut session): NoApi<AuthSession<Backend>>,
    body: Bytes,
) -> Result<Json<SessionToken>, ApiError> {
    let accounts = store(&state)?;
    let creds: Credentials = parse(&body)?;
    let plausible = username::check(&creds.username).is_ok();
    let key = username::key(&creds.username);
    svc.rates.login(ip, &key)?;
    let record = if plausible {
        accounts.account_by_key(&key).await?
    } else {
        None
    };
    let phc = record.as_ref().map(|r| r.password_hash.clone());
    if !svc.hasher.verify(creds.password, phc).await? {
        info!(%ip, "log-in refused");
        return Err(bad_credentials());
    }
    let Some(record) = record else {
        return Err(bad_credentials());
    };
    if record.banned_at_ms.is_some() {
        let code = ErrorCode::AccountBanned;
        return Err(ApiError::new(StatusCode::FORBIDDEN, code, code.describe()));
    }
    let token = new_token(accounts, record.id).await?;
    log_in(&mut session, &User::from(record.clone())).await?;
    info!(account = %record.id, %ip, "logged in");
    Ok(Json(SessionToken {
        token,
        username: record.username,
    }))
}

/// The docs of [`log_out`].
pub fn log_out_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("logOut")
        .summary("Log out")
        .description(
            "Ends the cookie session and revokes the bearer token sent, if any; answered \
             `204` also when neither was there.",
        )
        .tag("accounts")
        // Either scheme, or none (`{}`): nothing to end is fine too.
        .security_requirement(api_doc::SESSION_COOKIE)
        .security_requirement(api_doc::ACCOUNT_TOKEN)
        .security_requirement_multi(std::iter::empty::<&str>())
        .response_with::<204, (), _>(|r| r.description("Logged out (the cookie is cleared)."));
    api_doc::errors(op, &[ORIGIN_NOT_ALLOWED, INTERNAL, UNAVAILABLE])
}

/// `DELETE /api/session`: log out (the bearer token sent, and the cookie session). 204.
pub async fn log_out(
    State(state): State<AppState>,
    NoApi(mut session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    if let Some(token) = auth::bearer(&headers, None) {
        store(&state)?
            .delete_token(&parchis_store::hash_token(&token))
            .await?;
    }
    session
        .logout()
        .await
        .map_err(|e| internal("session log-out", e))?;
    Ok(StatusCode::NO_CONTENT)
}

/// The docs of [`me`].
pub fn me_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("getMe")
        .summary("The logged-in player's account")
        .tag("accounts")
        .response_with::<200, Json<Me>, _>(|r| r.description("The account."));
    api_doc::errors(api_doc::logged_in(op), &[INTERNAL, UNAVAILABLE])
}

/// `GET /api/me`: [`Me`], or 401 `not_logged_in`.
pub async fn me(
    State(state): State<AppState>,
    NoApi(session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
) -> Result<Json<Me>, ApiError> {
    let (user, _) = me_or_401(&state, &headers, &session).await?;
    let accounts = store(&state)?;
    let record = accounts.account(user.id).await?.ok_or_else(not_logged_in)?;
    Ok(Json(me_view(&state, &record).await?))
}

/// The docs of [`change_password`].
pub fn change_password_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("changePassword")
        .summary("Change the password")
        .description(
            "Needs the current password. Every other session and every token of the \
             account end; this request's cookie session stays logged in; the answer \
             carries a new token.",
        )
        .tag("accounts")
        .response_with::<200, Json<SessionToken>, _>(|r| r.description("Changed."));
    let op = api_doc::raw_json_body::<ChangePassword>(op, MAX_BODY_BYTES);
    let bad = format!("{BAD_BODY}, or the new password is refused (the message says why).");
    let op = api_doc::errors(
        op,
        &[
            (400, bad.as_str()),
            (
                401,
                "not_logged_in: no session or token, or it ended; bad_credentials: the \
                 current password is wrong.",
            ),
            ORIGIN_NOT_ALLOWED,
            LOGIN_LIMITED,
            INTERNAL,
            UNAVAILABLE,
        ],
    );
    api_doc::logged_in(op)
}

/// `POST /api/me/password` ([`ChangePassword`] → 200 [`SessionToken`], a new token):
/// every other session and every token of the account is revoked; this request's cookie
/// session stays logged in.
pub async fn change_password(
    State(state): State<AppState>,
    Extension(svc): Extension<Arc<Accounts>>,
    Extension(ClientAddr(ip)): Extension<ClientAddr>,
    NoApi(mut session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<SessionToken>, ApiError> {
    let (user, via) = me_or_401(&state, &headers, &session).await?;
    let change: ChangePassword = parse(&body)?;
    password::check_new(&change.new_password).map_err(|e| bad_request(e.to_string()))?;
    check_password(&state, &svc, ip, &user, change.password).await?;
    let hash = svc.hasher.hash(change.new_password).await?;
    let accounts = store(&state)?;
    if !accounts
        .set_password(user.id, &hash, parchis_room::now_ms())
        .await?
    {
        return Err(not_logged_in());
    }
    let record = accounts.account(user.id).await?.ok_or_else(not_logged_in)?;
    if via == Via::Cookie {
        log_in(&mut session, &User::from(record.clone())).await?;
    }
    let token = new_token(accounts, user.id).await?;
    info!(account = %user.id, %ip, "password changed");
    Ok(Json(SessionToken {
        token,
        username: record.username,
    }))
}

/// The docs of [`recover`].
pub fn recover_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("recoverAccount")
        .summary("Set a new password with a recovery code")
        .description(
            "Uses up one of the account's recovery codes; sets the session cookie (unless \
             the account is banned) and returns a new bearer token.",
        )
        .tag("accounts")
        .response_with::<200, Json<SessionToken>, _>(|r| r.description("Recovered."));
    let op = api_doc::raw_json_body::<Recover>(op, MAX_BODY_BYTES);
    let bad = format!("{BAD_BODY}, or the new password is refused (the message says why).");
    api_doc::errors(
        op,
        &[
            (400, bad.as_str()),
            (
                401,
                "bad_credentials: no such username, or the code is not one of its unused \
                 recovery codes.",
            ),
            ORIGIN_NOT_ALLOWED,
            LOGIN_LIMITED,
            INTERNAL,
            UNAVAILABLE,
        ],
    )
}

/// `POST /api/accounts/recover` ([`Recover`] → 200 [`SessionToken`] and the cookie): one
/// unused recovery code sets a new password. Unknown user or code: 401 `bad_credentials`.
pub async fn recover(
    State(state): State<AppState>,
    Extension(svc): Extension<Arc<Accounts>>,
    Extension(ClientAddr(ip)): Extension<ClientAddr>,
    NoApi(mut session): NoApi<AuthSession<Backend>>,
    body: Bytes,
) -> Result<Json<SessionToken>, ApiError> {
    let accounts = store(&state)?;
    let ask: Recover = parse(&body)?;
    let key = username::key(&ask.username);
    svc.rates.login(ip, &key)?;
    password::check_new(&ask.new_password).map_err(|e| bad_request(e.to_string()))?;
    let hash = svc.hasher.hash(ask.new_password).await?;
    let Some(record) = accounts.account_by_key(&key).await? else {
        return Err(bad_credentials());
    };
    let now = parchis_room::now_ms();
    let code = password::code_hash(&ask.code);
    if !accounts
        .use_recovery_code(record.id, &code, &hash, now)
        .await?
    {
        info!(account = %record.id, %ip, "recovery code refused");
        return Err(bad_credentials());
    }
    let record = accounts
        .account(record.id)
        .await?
        .ok_or_else(bad_credentials)?;
    let token = new_token(accounts, record.id).await?;
    if record.banned_at_ms.is_none() {
        log_in(&mut session, &User::from(record.clone())).await?;
    }
    info!(account = %record.id, %ip, "password recovered with a code");
    Ok(Json(SessionToken {
        token,
        username: record.username,
    }))
}

/// The docs of [`delete_me`].
pub fn delete_me_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("deleteMe")
        .summary("Delete the account")
        .description(
            "Needs the password. The account's games stay, under the name \"deleted \
             player\"; its username stays reserved for 30 days.",
        )
        .tag("accounts")
        .response_with::<204, (), _>(|r| r.description("Deleted and logged out."));
    let op = api_doc::raw_json_body::<DeleteAccount>(op, MAX_BODY_BYTES);
    let bad = format!("{BAD_BODY}.");
    let op = api_doc::errors(
        op,
        &[
            (400, bad.as_str()),
            (
                401,
                "not_logged_in: no session or token, or it ended; bad_credentials: the \
                 password is wrong.",
            ),
            ORIGIN_NOT_ALLOWED,
            LOGIN_LIMITED,
            INTERNAL,
            UNAVAILABLE,
        ],
    );
    api_doc::logged_in(op)
}

/// `DELETE /api/me` ([`DeleteAccount`] → 204): deletes the account; its games stay,
/// under the name "deleted player"; its username is reserved for 30 days. Its seats in
/// live rooms take that name at once (the rename path, [`super::renames::announce`]: every
/// connection of such a room gets `renamed`).
pub async fn delete_me(
    State(state): State<AppState>,
    Extension(svc): Extension<Arc<Accounts>>,
    Extension(ClientAddr(ip)): Extension<ClientAddr>,
    NoApi(mut session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let (user, _) = me_or_401(&state, &headers, &session).await?;
    let ask: DeleteAccount = parse(&body)?;
    check_password(&state, &svc, ip, &user, ask.password).await?;
    let now = parchis_room::now_ms();
    let deletion = Deletion {
        now_ms: now,
        reserve_until_ms: now + RESERVED_MS,
        neutral_name: DELETED_NAME.to_owned(),
    };
    store(&state)?.delete_account(user.id, &deletion).await?;
    // Its seats in live rooms take the neutral name at once (issue 26), as a rename's.
    super::renames::announce(&state, user.id, DELETED_NAME).await;
    session
        .logout()
        .await
        .map_err(|e| internal("session log-out", e))?;
    info!(account = %user.id, %ip, "account deleted");
    Ok(StatusCode::NO_CONTENT)
}

/// The live, active account named `name` (any spelling with its key), or 404.
pub(super) async fn by_name(
    accounts: &dyn AccountStore,
    name: &str,
) -> Result<AccountRecord, ApiError> {
    if name.len() > 64 {
        return Err(unknown_player());
    }
    accounts
        .account_by_key(&username::key(name))
        .await?
        .ok_or_else(unknown_player)
}

/// The docs of [`profile`].
pub fn profile_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("getPlayer")
        .summary("A player's public profile")
        .description("The username, when the account was made and its recent games.")
        .tag("accounts")
        .response_with::<200, Json<Profile>, _>(|r| r.description("The profile."));
    api_doc::errors(
        op,
        &[
            (
                400,
                "bad_request: the username is not UTF-8 once percent-decoded.",
            ),
            (
                404,
                "unknown_player: no account has this username (or it is banned or deleted).",
            ),
            (
                429,
                "rate_limited: this address's reads of games and profiles (or a connection \
                 limit).",
            ),
            INTERNAL,
            UNAVAILABLE,
        ],
    )
}

/// `GET /api/players/{username}`: the [`Profile`]; 404 `unknown_player` (banned too).
pub async fn profile(
    State(state): State<AppState>,
    Extension(ClientAddr(ip)): Extension<ClientAddr>,
    ApiPath(UsernamePath { username: name }): ApiPath<UsernamePath>,
) -> Result<Json<Profile>, ApiError> {
    state.admission().game_read(ip)?;
    let accounts = store(&state)?;
    let record = by_name(accounts, &name).await?;
    if !record.is_active() {
        return Err(unknown_player());
    }
    let games = accounts.account_games(record.id, RECENT_GAMES).await?;
    Ok(Json(Profile {
        username: record.username,
        created_at_ms: record.created_at_ms,
        ratings: ratings::ratings_of(state.store().as_ref(), record.id).await?,
        recent_games: games
            .into_iter()
            .map(|g| crate::games::live_summary(&state, g))
            .collect(),
        history: ratings::history_of(state.store().as_ref(), record.id).await?,
    }))
}

/// The docs of [`blocks`].
pub fn blocks_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("listBlocks")
        .summary("The players the logged-in player blocks")
        .tag("accounts")
        .response_with::<200, Json<BlockList>, _>(|r| r.description("The usernames."));
    api_doc::errors(api_doc::logged_in(op), &[INTERNAL, UNAVAILABLE])
}

/// `GET /api/me/blocks`: [`BlockList`].
pub async fn blocks(
    State(state): State<AppState>,
    NoApi(session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
) -> Result<Json<BlockList>, ApiError> {
    let (user, _) = me_or_401(&state, &headers, &session).await?;
    let accounts = store(&state)?;
    let mut usernames = Vec::new();
    for id in accounts.blocked(user.id).await? {
        if let Some(a) = accounts
            .account(id)
            .await?
            .filter(|a| a.deleted_at_ms.is_none())
        {
            usernames.push(a.username);
        }
    }
    Ok(Json(BlockList { usernames }))
}

/// The docs of [`block`].
pub fn block_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("blockPlayer")
        .summary("Block a player")
        .description("A blocked player is not paired with the blocker by quick pairing.")
        .tag("accounts")
        .response_with::<204, (), _>(|r| r.description("Blocked (also when already)."));
    let op = api_doc::errors(
        op,
        &[
            (
                400,
                "bad_request: the username is your own, or not UTF-8 once percent-decoded.",
            ),
            ORIGIN_NOT_ALLOWED,
            UNKNOWN_PLAYER,
            INTERNAL,
            UNAVAILABLE,
        ],
    );
    api_doc::logged_in(op)
}

/// `POST /api/me/blocks/{username}` (204): blocks that player; 404 `unknown_player`;
/// 400 for oneself.
pub async fn block(
    State(state): State<AppState>,
    NoApi(session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
    ApiPath(UsernamePath { username: name }): ApiPath<UsernamePath>,
) -> Result<StatusCode, ApiError> {
    let (user, _) = me_or_401(&state, &headers, &session).await?;
    let accounts = store(&state)?;
    let target = by_name(accounts, &name).await?;
    if target.id == user.id {
        return Err(bad_request("you cannot block yourself"));
    }
    accounts
        .block(user.id, target.id, parchis_room::now_ms())
        .await?;
    info!(account = %user.id, blocked = %target.id, "player blocked");
    Ok(StatusCode::NO_CONTENT)
}

/// The docs of [`unblock`].
pub fn unblock_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("unblockPlayer")
        .summary("Unblock a player")
        .tag("accounts")
        .response_with::<204, (), _>(|r| r.description("Unblocked (also when not blocked)."));
    let op = api_doc::errors(
        op,
        &[
            (
                400,
                "bad_request: the username is not UTF-8 once percent-decoded.",
            ),
            ORIGIN_NOT_ALLOWED,
            UNKNOWN_PLAYER,
            INTERNAL,
            UNAVAILABLE,
        ],
    );
    api_doc::logged_in(op)
}

/// `DELETE /api/me/blocks/{username}` (204, also when there was no block).
pub async fn unblock(
    State(state): State<AppState>,
    NoApi(session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
    ApiPath(UsernamePath { username: name }): ApiPath<UsernamePath>,
) -> Result<StatusCode, ApiError> {
    let (user, _) = me_or_401(&state, &headers, &session).await?;
    let accounts = store(&state)?;
    let target = by_name(accounts, &name).await?;
    accounts.unblock(user.id, target.id).await?;
    Ok(StatusCode::NO_CONTENT)
}
