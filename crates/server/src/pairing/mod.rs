//! Quick pairing (issue 26, `docs/ACCOUNTS.md` "Quick pairing"): a player chooses a rule
//! set, 2 or 4 seats and rated or casual, and waits in that pool with a ticket; the
//! matcher ([`matcher`]) seats close ratings together in a room whose seats are
//! reserved for the group, which starts once every player sent the WebSocket `claim`.
//!
//! * `GET /api/pairing`: players waiting per pool.
//! * `POST /api/pairing` [`PairingRequest`] → 201 [`PairingTicket`]: enter a pool
//!   (guests: casual pools only, 401 `not_logged_in` in a rated one; 409
//!   `already_waiting` for an account that waits already).
//! * `GET /api/pairing/{ticket}` → [`PairingStatus`]: waiting (how long, the window) or
//!   paired (room, colour). Polling keeps the ticket: one not polled for
//!   [`PAIRING_TICKET_IDLE_MS`] (30 s) is dropped; 404 `unknown_ticket` then.
//! * `DELETE /api/pairing/{ticket}` → 204: leave the pool.
//!
//! **Where the pool lives.** On a single node (SQLite, memory, or PostgreSQL without
//! NATS): this node's memory ([`crate::pairing_tickets`], in [`AppState::pairing`]), and
//! the matcher runs over it. In cluster mode: the database ([`stored_pool`],
//! `pairing_tickets`), so that every node enters, polls and cancels every ticket, and
//! the matcher runs on the one node holding the `pairing` lease
//! ([`matcher::tick_stored`]).
//!
//! What a player is matched on is read once, when they enter: their μ in the pool (25
//! without a rating) and whom they block (blocks made while waiting count from the next
//! ticket).

pub mod matcher;

use aide::axum::routing::get_with;
use aide::axum::ApiRouter;
use aide::transform::TransformOperation;
use aide::NoApi;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use axum_login::AuthSession;
use parchis_protocol::{
    ErrorCode, PairingPools, PairingRequest, PairingStatus, PairingTicket, RoomSettings,
    PAIRING_TICKET_IDLE_MS,
};
use parchis_ratings::{Pool, Queue, Rating};
use rand::RngCore;
use uuid::Uuid;

use crate::accounts::auth::{self, Backend};
use crate::api_doc;
use crate::http::{ApiError, ApiPath};
use crate::pairing_tickets::{self as tickets, Refused, Ticket};
use crate::state::AppState;

/// The largest body `POST /api/pairing` reads (bytes); larger: 413.
pub const MAX_BODY_BYTES: usize = 1024;

/// The routes (mounted at the root, documented in the OpenAPI document); `POST` and
/// `DELETE` pass the accounts' CSRF check.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/api/pairing",
            get_with(pools, pools_docs).post_with(enter, enter_docs),
        )
        .api_route(
            "/api/pairing/{ticket}",
            get_with(poll, poll_docs).delete_with(leave, leave_docs),
        )
        .route_layer(axum::middleware::from_fn(crate::accounts::csrf::check))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// The path of a ticket's routes.
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
pub struct TicketPath {
    /// The ticket of `POST /api/pairing`.
    pub ticket: String,
}

fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::BadRequest, message)
}

fn error(status: StatusCode, code: ErrorCode) -> ApiError {
    ApiError::new(status, code, code.describe())
}

const BAD_PATH: (u16, &str) = (
    400,
    "bad_request: the ticket is not UTF-8 once percent-decoded.",
);
const UNKNOWN_TICKET: (u16, &str) = (
    404,
    "unknown_ticket: no ticket has this id (it left, or was not polled for 30 s).",
);
const STORE_FAILED: (u16, &str) = (
    500,
    "internal: the store failed (cluster mode: the pool is in the database).",
);
const UNAVAILABLE: (u16, &str) = (
    503,
    "room_unavailable: the database is out of reach; server_full: too many tickets.",
);

/// The docs of [`pools`].
pub fn pools_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("listPairingPools")
        .summary("Players waiting per quick-pairing pool")
        .tag("pairing")
        .response_with::<200, Json<PairingPools>, _>(|r| r.description("The pools."));
    api_doc::errors(op, &[STORE_FAILED, UNAVAILABLE])
}

/// Cluster mode: the pool in the database (`docs/ACCOUNTS.md`, "Quick pairing in a
/// cluster"); `None` on a single node, whose pool is [`AppState::pairing`].
pub fn stored_pool(state: &AppState) -> Option<&dyn parchis_store::PairingStore> {
    state.cluster()?;
    state.store().pairing()
}

/// `GET /api/pairing`: [`PairingPools`].
pub async fn pools(State(state): State<AppState>) -> Result<Json<PairingPools>, ApiError> {
    match stored_pool(&state) {
        Some(db) => {
            let rows = db.pairing_tickets().await?;
            Ok(Json(tickets::Tickets::from_stored(&rows).pools()))
        }
        None => Ok(Json(state.pairing().lock().pools())),
    }
}

/// The docs of [`enter`].
pub fn enter_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let mut op = op
        .id("enterPairing")
        .summary("Wait in a quick-pairing pool")
        .description(
            "Guests may wait in casual pools only (send `name`); a logged-in player's seat \
             shows their username. Poll the ticket at least every 30 s; once paired, open \
             the room's WebSocket and send `claim` (with the ticket for a guest).",
        )
        .tag("pairing")
        .security_requirement(api_doc::SESSION_COOKIE)
        .security_requirement(api_doc::ACCOUNT_TOKEN)
        .response_with::<201, Json<PairingTicket>, _>(|r| {
            let r = r.description("Waiting.");
            api_doc::links(
                r,
                &[
                    (
                        "PollTicket",
                        "pollPairing",
                        &[("ticket", "$response.body#/ticket")],
                    ),
                    (
                        "LeavePool",
                        "leavePairing",
                        &[("ticket", "$response.body#/ticket")],
                    ),
                ],
            )
        });
    // Without a session too (a guest): the empty requirement.
    op.inner_mut().security.push(Default::default());
    let op = api_doc::raw_json_body::<PairingRequest>(op, MAX_BODY_BYTES);
    api_doc::errors(
        op,
        &[
            (
                400,
                "bad_request: the body is not one JSON object of this shape, the rule set \
                 is unknown, it cannot seat this many players, or the guest's name is \
                 refused (the message says why).",
            ),
            (
                401,
                "not_logged_in: a guest asked for a rated pool (log in first).",
            ),
            crate::accounts::ORIGIN_NOT_ALLOWED,
            (
                409,
                "already_waiting: this account already has a ticket that is not paired.",
            ),
            (500, "internal: the store failed."),
            UNAVAILABLE,
        ],
    )
}

/// A new ticket: 128 random bits as 32 hex digits.
pub(crate) fn new_ticket() -> String {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// `POST /api/pairing` (module docs).
pub async fn enter(
    State(state): State<AppState>,
    NoApi(session): NoApi<AuthSession<Backend>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<(StatusCode, Json<PairingTicket>), ApiError> {
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(bad_request("the body must be one JSON object"));
    }
    let ask: PairingRequest =
        serde_json::from_slice(&body).map_err(|e| bad_request(e.to_string()))?;
    let pool = Pool::parse(&ask.preset).map_err(|e| bad_request(e.to_string()))?;
    if !matches!(ask.seats, 2 | 4) {
        return Err(bad_request("quick pairing seats 2 or 4 players"));
    }
    let settings = serde_json::from_value::<RoomSettings>(serde_json::json!({
        "preset": pool.as_str(), "seats": ask.seats, "rated": ask.rated, "public": false,
    }))
    .map_err(|e| bad_request(e.to_string()))?;
    settings.validate().map_err(bad_request)?;
    let user = auth::current(state.store(), &headers, None, &session)
        .await?
        .map(|(u, _)| u);
    let now = parchis_room::now_ms();
    let (player, account, name, (mu, rating), blocks) = match &user {
        Some(u) => {
            let rated = match state.store().ratings_of(u.id).await {
                Ok(rows) => rows
                    .iter()
                    .find(|r| r.pool == pool.as_str())
                    .map(crate::accounts::ratings::pool_rating),
                Err(e) => return Err(e.into()),
            };
            let mu = rated
                .as_ref()
                .map_or((Rating::INITIAL.mu, None), |r| (r.mu, Some(r.display)));
            let blocks = match state.store().accounts() {
                Some(a) => a.blocked(u.id).await?,
                None => Vec::new(),
            };
            (u.id, Some(u.id), u.username.clone(), mu, blocks)
        }
        None if ask.rated => return Err(error(StatusCode::UNAUTHORIZED, ErrorCode::NotLoggedIn)),
        None => {
            let name = crate::names::display_name(ask.name.as_deref().unwrap_or("Guest"))
                .map_err(|e| bad_request(e.to_string()))?;
            (
                Uuid::new_v4(),
                None,
                name,
                (Rating::INITIAL.mu, None),
                Vec::new(),
            )
        }
    };
    let queue = Queue {
        pool,
        seats: ask.seats,
        rated: ask.rated,
    };
    let ticket = Ticket {
        player,
        account,
        name,
        queue: queue.clone(),
        mu,
        rating,
        since_ms: now,
        polled_ms: now,
        blocks,
        state: tickets::State::Waiting,
    };
    let id = new_ticket();
    let pairing = state.pairing();
    let entered = match stored_pool(&state) {
        Some(db) => {
            let row = tickets::stored(&id, &ticket)
                .ok_or_else(|| error(StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::Internal))?;
            match db.enter_pairing(&row, tickets::MAX_TICKETS).await? {
                parchis_store::Entered::Stored => Ok(()),
                parchis_store::Entered::AlreadyWaiting => Err(Refused::AlreadyWaiting),
                parchis_store::Entered::Full => Err(Refused::Full),
            }
        }
        None => pairing.lock().enter(id.clone(), ticket),
    };
    match entered {
        Ok(()) => {}
        Err(Refused::AlreadyWaiting) => {
            return Err(error(StatusCode::CONFLICT, ErrorCode::AlreadyWaiting))
        }
        Err(Refused::Full) => {
            return Err(error(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::ServerFull,
            ))
        }
    }
    tracing::info!(account = ?account, pool = %queue.pool, seats = queue.seats,
        rated = queue.rated, mu, "quick pairing: waiting");
    Ok((
        StatusCode::CREATED,
        Json(PairingTicket {
            ticket: id,
            status: "waiting".into(),
            waiting_ms: 0,
            window: tickets::finite(pairing.config.window(now, now)),
        }),
    ))
}

/// The docs of [`poll`].
pub fn poll_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("pollPairing")
        .summary("A quick-pairing ticket's state (keeps it alive)")
        .description(
            "Waiting (how long, and the rating window now) or paired (the room and the \
             colour to `claim`). A ticket not polled for 30 s is dropped.",
        )
        .tag("pairing")
        .response_with::<200, Json<PairingStatus>, _>(|r| r.description("The state."));
    api_doc::errors(op, &[BAD_PATH, UNKNOWN_TICKET, STORE_FAILED, UNAVAILABLE])
}

/// `GET /api/pairing/{ticket}`: [`PairingStatus`], or 404 `unknown_ticket`.
pub async fn poll(
    State(state): State<AppState>,
    ApiPath(TicketPath { ticket }): ApiPath<TicketPath>,
) -> Result<Json<PairingStatus>, ApiError> {
    let pairing = state.pairing();
    let now = parchis_room::now_ms();
    let status = match stored_pool(&state) {
        Some(db) => {
            let row = db.poll_pairing(&ticket, now).await?;
            tickets::Tickets::from_stored(row.as_slice()).poll(&ticket, now, &pairing.config)
        }
        None => pairing.lock().poll(&ticket, now, &pairing.config),
    };
    status
        .map(Json)
        .ok_or_else(|| error(StatusCode::NOT_FOUND, ErrorCode::UnknownTicket))
}

/// The docs of [`leave`].
pub fn leave_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("leavePairing")
        .summary("Leave the quick-pairing pool")
        .description(
            "Also when the ticket is unknown (left already, or dropped). A paired ticket \
             is forgotten; its seat stays reserved in the room.",
        )
        .tag("pairing")
        .response_with::<204, (), _>(|r| r.description("Left."));
    api_doc::errors(
        op,
        &[
            BAD_PATH,
            crate::accounts::ORIGIN_NOT_ALLOWED,
            STORE_FAILED,
            UNAVAILABLE,
        ],
    )
}

/// `DELETE /api/pairing/{ticket}` (204, also for an unknown ticket).
pub async fn leave(
    State(state): State<AppState>,
    ApiPath(TicketPath { ticket }): ApiPath<TicketPath>,
) -> Result<StatusCode, ApiError> {
    let left = match stored_pool(&state) {
        Some(db) => db.leave_pairing(&ticket).await?,
        None => state.pairing().lock().leave(&ticket),
    };
    if left {
        tracing::info!("quick pairing: a ticket left its pool");
    }
    Ok(StatusCode::NO_CONTENT)
}

/// How long a ticket lives unpolled, in seconds (for the docs).
pub const TICKET_IDLE_SECS: i64 = PAIRING_TICKET_IDLE_MS / 1000;
