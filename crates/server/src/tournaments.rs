//! The tournament routes (issue 27, `docs/TOURNAMENTS.md`, `proto/README.md`
//! "Tournaments"): create, list, read, close registration, register, confirm, withdraw,
//! name referees, the referee's decisions on a match, and a live subscription (Server-Sent
//! Events). In cluster mode every node serves every route: commands for a tournament
//! another node directs are forwarded there, and its live views relayed from there
//! ([`crate::tournament_relay`]). Each route turns the request into one input of the tournament's director
//! ([`parchis_director::Directors`]) and answers once its events are stored.
//!
//! Refusals use the JSON error body: `400 bad_request` (a body or field the rules refuse),
//! `401 not_logged_in`, `403 not_referee` (or the CSRF check's `origin_not_allowed`), `404
//! unknown_tournament`, `409 tournament_refused` (the tournament's state does not allow
//! it), `409 too_many_tournaments` (creation: the organiser's limit,
//! [`crate::config::TournamentLimits`]), `500 internal`, `503 room_unavailable`.
//!
//! Why one file over 600 lines: one handler per route, each a few steps (who asks, the
//! body, one input to the director), with its OpenAPI docs beside it, as in
//! `accounts/handlers.rs`; they share the helpers at the top.

use std::convert::Infallible;

use aide::axum::routing::{delete_with, get_with, post_with};
use aide::axum::ApiRouter;
use aide::transform::TransformOperation;
use aide::NoApi;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::Json;
use axum_login::AuthSession;
use futures_util::stream::BoxStream;
use futures_util::{Stream, StreamExt};
use parchis_director::DirectorError;
use parchis_protocol::{ErrorCode, NameReferee, RefereeCommand, RegisterEntry, TournamentCreated};
use parchis_store::StoreError;
use parchis_tournament::{Account, EntrantId, Input, MatchId, Official, Settings, TournamentView};
use serde::de::DeserializeOwned;
use std::sync::Arc;
use uuid::Uuid;

use crate::accounts::auth::{self, Backend, User};
use crate::accounts::username;
use crate::api_doc;
use crate::http::{ApiError, ApiPath};
use crate::state::AppState;
use crate::tournament_errors::{bad, err, refused, store_error};

/// Largest body of a tournament route, in bytes.
pub const MAX_BODY_BYTES: usize = 8 * 1024;
/// Tournaments listed by `GET /api/tournaments`, newest first.
pub const LIST_LIMIT: u32 = 100;

/// `GET /api/tournaments`: the tournaments, newest first.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct TournamentList {
    /// At most [`LIST_LIMIT`] tournaments' views, newest first.
    pub tournaments: Vec<TournamentView>,
}

/// The path of a tournament's routes.
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
pub struct TournamentPath {
    /// The tournament's id (a UUID).
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub id: Uuid,
}

/// The path of an entry's routes.
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
pub struct EntryPath {
    /// The tournament's id (a UUID).
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub id: Uuid,
    /// The entrant's id (from the tournament's `entrants`).
    pub entry: u32,
}

/// The path of a match's routes.
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
pub struct MatchPath {
    /// The tournament's id (a UUID).
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub id: Uuid,
    /// The match's id (from the tournament's `matches`).
    #[serde(rename = "match")]
    pub match_id: u32,
}

const NOT_FOUND: (u16, &str) = (
    404,
    "unknown_tournament: no tournament (match, entrant) has this id.",
);
const NOT_FOUND_OR_PLAYER: (u16, &str) = (
    404,
    "unknown_tournament: no tournament has this id; unknown_player: no live account has \
     the username given.",
);
const CONFLICT: (u16, &str) = (
    409,
    "tournament_refused: the tournament's state does not allow it (the message says why).",
);
const TOO_MANY: (u16, &str) = (
    409,
    "too_many_tournaments: this account organises as many unfinished tournaments as one \
     account may (`--max-open-tournaments-per-account`, default 5); one must finish first.",
);
const FORBIDDEN: (u16, &str) = (
    403,
    "not_referee: only the organiser (or a referee it named) may; origin_not_allowed: a \
     browser page of an origin that is not allowed sent it (the CSRF check; apps send no \
     `Origin`).",
);
const UNAVAILABLE: (u16, &str) = (
    503,
    "room_unavailable: the database is out of reach, this server keeps no tournaments, or \
     (cluster) the node directing the tournament is not reachable or it is moving to another \
     node: nothing was applied, retry after `Retry-After`. outcome_unknown (cluster): the \
     directing node did not answer in time: the command may have been applied; read the \
     tournament before sending it again.",
);
const INTERNAL: (u16, &str) = (
    500,
    "internal: the store failed, or a stored tournament does not read back.",
);
const BAD: (u16, &str) = (
    400,
    "bad_request: an id of the path is malformed, the body is not one JSON object of this \
     shape, or a field is refused (the message says which rule).",
);
const BAD_PATH: (u16, &str) = (
    400,
    "bad_request: an id of the path is malformed (not a UUID, not a number).",
);
const BAD_SETTINGS: (u16, &str) = (
    400,
    "bad_request: the body is not one JSON object of this shape, a settings rule is broken \
     (`docs/TOURNAMENTS.md`, \"Settings\"), or `bot_fill.up_to` is over this server's \
     limit (`--max-tournament-bot-fill`, default 32); the message says which.",
);

/// The tournament routes, each with its docs.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/api/tournaments",
            post_with(create, create_docs).get_with(list, list_docs),
        )
        .api_route("/api/tournaments/{id}", get_with(detail, detail_docs))
        .api_route("/api/tournaments/{id}/close", post_with(close, close_docs))
        .api_route(
            "/api/tournaments/{id}/entries",
            post_with(register, register_docs),
        )
        .api_route(
            "/api/tournaments/{id}/entries/{entry}",
            delete_with(unregister, unregister_docs),
        )
        .api_route(
            "/api/tournaments/{id}/entries/{entry}/confirm",
            post_with(confirm, confirm_docs),
        )
        .api_route(
            "/api/tournaments/{id}/referees",
            post_with(name_referee, name_referee_docs),
        )
        .api_route(
            "/api/tournaments/{id}/matches/{match}/referee",
            post_with(referee, referee_docs),
        )
        .api_route(
            "/api/tournaments/{id}/events",
            get_with(events, events_docs),
        )
        .route_layer(axum::middleware::from_fn(crate::accounts::csrf::check))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// The body as one JSON object of `T`.
fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(bad("the body must be one JSON object"));
    }
    serde_json::from_slice(body).map_err(|e| bad(e.to_string()))
}

/// The player asking, or 401 `not_logged_in`.
async fn user(
    state: &AppState,
    headers: &HeaderMap,
    session: &AuthSession<Backend>,
) -> Result<User, ApiError> {
    auth::current(state.store(), headers, None, session)
        .await
        .map_err(store_error)?
        .map(|(u, _)| u)
        .ok_or_else(|| {
            let code = ErrorCode::NotLoggedIn;
            err(StatusCode::UNAUTHORIZED, code, code.describe())
        })
}

/// The account `id` as the director sees it: its name and conservative rating
/// (μ − 3σ) in the pool of `preset`, if rated there.
async fn account(
    state: &AppState,
    id: Uuid,
    name: String,
    preset: &str,
) -> Result<Account, ApiError> {
    let pool = parchis_engine::RuleSet::from_name(preset)
        .map(|r| parchis_ratings::Pool::of(&r).as_str().to_owned())
        .ok();
    let ratings = state.store().ratings_of(id).await.map_err(store_error)?;
    let rating = ratings
        .iter()
        .find(|r| Some(&r.pool) == pool.as_ref())
        .map(|r| r.mu - 3.0 * r.sigma);
    Ok(Account { id, name, rating })
}

/// The live account called `name` (any spelling its username key folds), or
/// `404 unknown_player`.
async fn account_named(
    state: &AppState,
    name: &str,
) -> Result<parchis_store::AccountRecord, ApiError> {
    let accounts = state
        .store()
        .accounts()
        .ok_or_else(|| store_error(StoreError::Unsupported("this store keeps no accounts")))?;
    let found = if name.len() > 64 {
        None
    } else {
        accounts
            .account_by_key(&username::key(name))
            .await
            .map_err(store_error)?
    };
    found.filter(|a| a.is_active()).ok_or_else(|| {
        let code = ErrorCode::UnknownPlayer;
        err(
            StatusCode::NOT_FOUND,
            code,
            format!("no player is called {name:?}"),
        )
    })
}

async fn view(state: &AppState, id: Uuid) -> Result<Json<TournamentView>, ApiError> {
    let v = state.directors().view(id).await.map_err(refused)?;
    Ok(Json(TournamentView::clone(&v)))
}

/// Hands `input` to tournament `id`'s director, here or (cluster mode) on the node
/// directing it ([`crate::tournament_relay::forward`]), then answers the view: once the
/// director answered, its events are stored, so the view read here shows them.
async fn act(state: &AppState, id: Uuid, input: Input) -> Result<Json<TournamentView>, ApiError> {
    match state.directors().input(id, input.clone()).await {
        Ok(()) => {}
        Err(DirectorError::Elsewhere { owner, .. }) => {
            crate::tournament_relay::forward(state, id, &owner, input).await?;
        }
        Err(e) => return Err(refused(e)),
    }
    view(state, id).await
}

/// `POST /api/tournaments`.
pub async fn create(
    State(state): State<AppState>,
    NoApi(session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<(StatusCode, Json<TournamentCreated>), ApiError> {
    let me = user(&state, &headers, &session).await?;
    let settings: Settings = parse(&body)?;
    let limits = state.config().tournaments;
    if let Some(fill) = settings.bot_fill.filter(|f| f.up_to > limits.max_bot_fill) {
        return Err(bad(format!(
            "bot_fill.up_to must be at most {} on this server, got {}",
            limits.max_bot_fill, fill.up_to
        )));
    }
    let organiser = Official {
        account: me.id,
        name: me.username.clone(),
    };
    let id = state
        .directors()
        .create_at_most(organiser, settings, limits.max_open_per_account)
        .await
        .map_err(refused)?;
    tracing::info!(tournament = %id, organiser = %me.id, "tournament created over HTTP");
    Ok((
        StatusCode::CREATED,
        Json(TournamentCreated { id: id.to_string() }),
    ))
}

/// The docs of [`create`].
pub fn create_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("createTournament")
        .summary("Create a tournament")
        .description(
            "The logged-in player organises a tournament with these settings \
             (`docs/TOURNAMENTS.md`, \"Settings\"; unknown fields refused). Registration is \
             open until `registration_deadline_ms`; with `bot_fill`, bot entrants fill up \
             to `up_to` when it closes.",
        )
        .tag("tournaments")
        .response_with::<201, Json<TournamentCreated>, _>(|r| {
            let id: &[(&str, &str)] = &[("id", "$response.body#/id")];
            api_doc::links(
                r.description("Created."),
                &[
                    ("GetTournament", "getTournament", id),
                    ("RegisterEntry", "registerTournamentEntry", id),
                    ("NameReferee", "nameTournamentReferee", id),
                    ("CloseTournament", "closeTournament", id),
                    ("TournamentEvents", "tournamentEvents", id),
                ],
            )
        });
    let op = api_doc::raw_json_body::<Settings>(op, MAX_BODY_BYTES);
    api_doc::errors(
        api_doc::logged_in(op),
        &[
            BAD_SETTINGS,
            crate::accounts::ORIGIN_NOT_ALLOWED,
            TOO_MANY,
            INTERNAL,
            UNAVAILABLE,
        ],
    )
}

/// `GET /api/tournaments`.
pub async fn list(State(state): State<AppState>) -> Result<Json<TournamentList>, ApiError> {
    let views = state.directors().list(LIST_LIMIT).await.map_err(refused)?;
    Ok(Json(TournamentList {
        tournaments: views.iter().map(|v| TournamentView::clone(v)).collect(),
    }))
}

/// The docs of [`list`].
pub fn list_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("listTournaments")
        .summary("The tournaments, newest first")
        .tag("tournaments")
        .response_with::<200, Json<TournamentList>, _>(|r| {
            api_doc::links(
                r.description("At most 100."),
                &[(
                    "GetTournament",
                    "getTournament",
                    &[("id", "$response.body#/tournaments/0/id")],
                )],
            )
        });
    api_doc::errors(op, &[INTERNAL, UNAVAILABLE])
}

/// `GET /api/tournaments/{id}`.
pub async fn detail(
    State(state): State<AppState>,
    ApiPath(TournamentPath { id }): ApiPath<TournamentPath>,
) -> Result<Json<TournamentView>, ApiError> {
    view(&state, id).await
}

/// The docs of [`detail`].
pub fn detail_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("getTournament")
        .summary("A tournament: entrants, bracket or standings, matches, champion")
        .tag("tournaments")
        .response_with::<200, Json<TournamentView>, _>(|r| {
            r.description("Its view (`status` registering | running | finished).")
        });
    api_doc::errors(op, &[BAD_PATH, NOT_FOUND, INTERNAL, UNAVAILABLE])
}

/// `POST /api/tournaments/{id}/close`.
pub async fn close(
    State(state): State<AppState>,
    NoApi(session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
    ApiPath(TournamentPath { id }): ApiPath<TournamentPath>,
) -> Result<Json<TournamentView>, ApiError> {
    let me = user(&state, &headers, &session).await?;
    act(&state, id, Input::Close { by: me.id }).await
}

/// The docs of [`close`].
pub fn close_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("closeTournament")
        .summary("Close registration now and draw")
        .description("The organiser only. Bots fill as `bot_fill` says; round 1 starts.")
        .tag("tournaments")
        .response_with::<200, Json<TournamentView>, _>(|r| r.description("Drawn."));
    api_doc::errors(
        api_doc::logged_in(op),
        &[
            BAD_PATH,
            FORBIDDEN,
            NOT_FOUND,
            CONFLICT,
            INTERNAL,
            UNAVAILABLE,
        ],
    )
}

/// `POST /api/tournaments/{id}/entries`.
pub async fn register(
    State(state): State<AppState>,
    NoApi(session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
    ApiPath(TournamentPath { id }): ApiPath<TournamentPath>,
    body: Bytes,
) -> Result<(StatusCode, Json<TournamentView>), ApiError> {
    let me = user(&state, &headers, &session).await?;
    let entry: RegisterEntry = parse(&body)?;
    let preset = state
        .directors()
        .view(id)
        .await
        .map_err(refused)?
        .preset
        .clone();
    let registrant = account(&state, me.id, me.username.clone(), &preset).await?;
    let partner = match &entry.partner {
        None => None,
        Some(name) => {
            let a = account_named(&state, name).await?;
            Some(account(&state, a.id, a.username, &preset).await?)
        }
    };
    let input = Input::Register {
        account: registrant,
        partner,
        team_name: entry.team_name,
    };
    let v = act(&state, id, input).await?;
    Ok((StatusCode::CREATED, v))
}

/// The docs of [`register`].
pub fn register_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("registerTournamentEntry")
        .summary("Register (with a partner in pairs)")
        .description(
            "The logged-in player registers: alone in an individual preset, with `partner` \
             (a username) in `pairs`, whose team then waits for the partner's confirmation \
             (`status` pending_partner).",
        )
        .tag("tournaments")
        .response_with::<201, Json<TournamentView>, _>(|r| r.description("Registered."));
    let op = api_doc::raw_json_body::<RegisterEntry>(op, MAX_BODY_BYTES);
    api_doc::errors(
        api_doc::logged_in(op),
        &[
            BAD,
            crate::accounts::ORIGIN_NOT_ALLOWED,
            NOT_FOUND_OR_PLAYER,
            CONFLICT,
            INTERNAL,
            UNAVAILABLE,
        ],
    )
}

/// `POST /api/tournaments/{id}/entries/{entry}/confirm`.
pub async fn confirm(
    State(state): State<AppState>,
    NoApi(session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
    ApiPath(EntryPath { id, entry }): ApiPath<EntryPath>,
) -> Result<Json<TournamentView>, ApiError> {
    let me = user(&state, &headers, &session).await?;
    check_entry(&state, id, entry, me.id).await?;
    act(&state, id, Input::ConfirmPartner { account: me.id }).await
}

/// The docs of [`confirm`].
pub fn confirm_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("confirmTournamentEntry")
        .summary("The partner confirms a team")
        .tag("tournaments")
        .response_with::<200, Json<TournamentView>, _>(|r| r.description("Confirmed."));
    api_doc::errors(
        api_doc::logged_in(op),
        &[
            BAD_PATH,
            crate::accounts::ORIGIN_NOT_ALLOWED,
            NOT_FOUND,
            CONFLICT,
            INTERNAL,
            UNAVAILABLE,
        ],
    )
}

/// `DELETE /api/tournaments/{id}/entries/{entry}`.
pub async fn unregister(
    State(state): State<AppState>,
    NoApi(session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
    ApiPath(EntryPath { id, entry }): ApiPath<EntryPath>,
) -> Result<Json<TournamentView>, ApiError> {
    let me = user(&state, &headers, &session).await?;
    check_entry(&state, id, entry, me.id).await?;
    act(&state, id, Input::Unregister { account: me.id }).await
}

/// The docs of [`unregister`].
pub fn unregister_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("unregisterTournamentEntry")
        .summary("Withdraw a team or player before the close")
        .tag("tournaments")
        .response_with::<200, Json<TournamentView>, _>(|r| r.description("Withdrawn."));
    api_doc::errors(
        api_doc::logged_in(op),
        &[
            BAD_PATH,
            crate::accounts::ORIGIN_NOT_ALLOWED,
            NOT_FOUND,
            CONFLICT,
            INTERNAL,
            UNAVAILABLE,
        ],
    )
}

/// The entrant `entry` of tournament `id` has `account` among its players, or 404.
async fn check_entry(
    state: &AppState,
    id: Uuid,
    entry: u32,
    account: Uuid,
) -> Result<(), ApiError> {
    let v = state.directors().view(id).await.map_err(refused)?;
    let ok = v
        .entrants
        .iter()
        .any(|e| e.id == EntrantId(entry) && e.players.iter().any(|p| p.account == Some(account)));
    if ok {
        Ok(())
    } else {
        Err(err(
            StatusCode::NOT_FOUND,
            ErrorCode::UnknownTournament,
            format!("entrant {entry} is not yours"),
        ))
    }
}

/// `POST /api/tournaments/{id}/referees`.
pub async fn name_referee(
    State(state): State<AppState>,
    NoApi(session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
    ApiPath(TournamentPath { id }): ApiPath<TournamentPath>,
    body: Bytes,
) -> Result<Json<TournamentView>, ApiError> {
    let me = user(&state, &headers, &session).await?;
    let NameReferee { username: name } = parse(&body)?;
    let found = account_named(&state, &name).await?;
    let input = Input::NameReferee {
        by: me.id,
        account: found.id,
        name: found.username.clone(),
    };
    act(&state, id, input).await
}

/// The docs of [`name_referee`].
pub fn name_referee_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("nameTournamentReferee")
        .summary("The organiser names a referee")
        .tag("tournaments")
        .response_with::<200, Json<TournamentView>, _>(|r| r.description("Named."));
    let op = api_doc::raw_json_body::<NameReferee>(op, MAX_BODY_BYTES);
    api_doc::errors(
        api_doc::logged_in(op),
        &[
            BAD,
            FORBIDDEN,
            NOT_FOUND_OR_PLAYER,
            CONFLICT,
            INTERNAL,
            UNAVAILABLE,
        ],
    )
}

/// `POST /api/tournaments/{id}/matches/{match}/referee`.
pub async fn referee(
    State(state): State<AppState>,
    NoApi(session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
    ApiPath(MatchPath { id, match_id }): ApiPath<MatchPath>,
    body: Bytes,
) -> Result<Json<TournamentView>, ApiError> {
    let me = user(&state, &headers, &session).await?;
    let cmd: RefereeCommand = parse(&body)?;
    let by = me.id;
    let m = MatchId(match_id);
    let input = match cmd {
        RefereeCommand::Pause => Input::Pause { by, id: m },
        RefereeCommand::Resume => Input::Resume { by, id: m },
        RefereeCommand::Award {
            winner,
            places,
            reason,
        } => {
            let places: Vec<EntrantId> = match (winner, places.is_empty()) {
                (Some(w), true) => vec![EntrantId(w)],
                (None, false) => places.into_iter().map(EntrantId).collect(),
                _ => return Err(bad("award takes either `winner` or `places`")),
            };
            Input::Award {
                by,
                id: m,
                places,
                reason,
            }
        }
        RefereeCommand::Disqualify { entrant, reason } => {
            let v = state.directors().view(id).await.map_err(refused)?;
            let in_match = v
                .matches
                .iter()
                .any(|x| x.id == m && x.entrants.contains(&EntrantId(entrant)));
            if !in_match {
                return Err(err(
                    StatusCode::NOT_FOUND,
                    ErrorCode::UnknownTournament,
                    format!("entrant {entrant} does not play match {match_id}"),
                ));
            }
            Input::Disqualify {
                by,
                entrant: EntrantId(entrant),
                reason,
            }
        }
        RefereeCommand::Replay { reason } => Input::Replay { by, id: m, reason },
    };
    act(&state, id, input).await
}

/// The docs of [`referee`].
pub fn referee_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("refereeTournamentMatch")
        .summary("A referee's decision on a match")
        .description(
            "The organiser or a named referee: `pause` / `resume` the match's clock, \
             `award` it (`winner`, or `places` best first) with a reason, `disqualify` an \
             entrant of it (its opponents advance), or `replay` it in a new room. Every \
             decision is stored and listed in `referee_actions`.",
        )
        .tag("tournaments")
        .response_with::<200, Json<TournamentView>, _>(|r| r.description("Done."));
    let op = api_doc::raw_json_body::<RefereeCommand>(op, MAX_BODY_BYTES);
    api_doc::errors(
        api_doc::logged_in(op),
        &[BAD, FORBIDDEN, NOT_FOUND, CONFLICT, INTERNAL, UNAVAILABLE],
    )
}

/// The name of every event of `GET /api/tournaments/{id}/events` (its data: the view).
pub const EVENT_NAME: &str = "tournament";

/// `GET /api/tournaments/{id}/events`: Server-Sent Events, one `tournament` event with
/// the view (JSON) now and after every change; a comment keeps the stream alive.
pub async fn events(
    State(state): State<AppState>,
    ApiPath(TournamentPath { id }): ApiPath<TournamentPath>,
) -> Result<NoApi<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>>, ApiError> {
    let shutdown = state.shutdown_token();
    let views: BoxStream<'static, Arc<TournamentView>> = match state.directors().subscribe(id).await
    {
        Ok(rx) => futures_util::stream::unfold((rx, shutdown), |(mut rx, shutdown)| async move {
            tokio::select! {
                changed = rx.changed() => changed.ok()?,
                () = shutdown.cancelled() => return None,
            }
            let view = rx.borrow_and_update().clone();
            Some((view, (rx, shutdown)))
        })
        .boxed(),
        // Cluster mode: directed by another node; its views are relayed.
        Err(DirectorError::Elsewhere { .. }) => crate::tournament_relay::remote_views(&state, id)
            .await?
            .boxed(),
        Err(e) => return Err(refused(e)),
    };
    let stream = views.map(|view| {
        let data = serde_json::to_string(&*view).unwrap_or_default();
        Ok(SseEvent::default().event(EVENT_NAME).data(data))
    });
    Ok(NoApi(Sse::new(stream).keep_alive(KeepAlive::default())))
}

/// The docs of [`events`].
pub fn events_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("tournamentEvents")
        .summary("Live: the tournament's view on every change (Server-Sent Events)")
        .description(
            "`text/event-stream` (Server-Sent Events): an event `tournament` whose data is \
             the view (the schema of getTournament, one line of JSON) at once, then after \
             every change (a registration, the draw, a room opened, a game started or \
             finished, a referee's decision). Views in between may be skipped (the latest \
             is sent); comment lines (`:`) keep the connection alive. The stream ends when \
             the server shuts down. The AsyncAPI document lists it as the channel \
             `tournamentEvents`.",
        )
        .tag("tournaments");
    let op = api_doc::event_stream::<TournamentView>(
        op,
        EVENT_NAME,
        "The event stream: each event is `event: tournament` and `data: <the view as JSON>`.",
    );
    api_doc::errors(op, &[BAD_PATH, NOT_FOUND, INTERNAL, UNAVAILABLE])
}
