//! HTTP API: create, list and inspect rooms (stored games: [`crate::games`]). Errors are
//! JSON [`HttpError`] bodies.

use crate::api_doc;
use crate::client_addr::ClientAddr;
use crate::state::AppState;
use aide::transform::TransformOperation;
use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use axum::Json;
use parchis_admission::Denied;
use parchis_protocol::{
    CreateRoomRequest, CreateRoomResponse, ErrorCode, HttpError, RoomList, RoomSettings, RoomView,
};
use parchis_room::ids::normalise_code;
use parchis_room::{self, Refusal, RoomCmd};
use tokio::sync::oneshot;

/// `Retry-After` of a cluster creation that no node took (every node full, draining or
/// shedding load), seconds.
pub const PLACEMENT_RETRY_SECS: u64 = 2;

/// The largest body `POST /api/rooms` reads, in bytes (room settings are well under 1 KB);
/// a larger one is refused `413 bad_request` before it is buffered whole.
pub const MAX_CREATE_BODY_BYTES: usize = 16 * 1024;

/// An HTTP error answer: status plus a JSON body (and `Retry-After` for limits).
#[derive(Debug, thiserror::Error)]
#[error("{status}: {body:?}")]
pub struct ApiError {
    status: StatusCode,
    body: HttpError,
    retry_after_secs: Option<u64>,
}

impl ApiError {
    /// An error answer with `status` and body `{code, message}`.
    pub(crate) fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            body: HttpError {
                code,
                message: message.into(),
            },
            retry_after_secs: None,
        }
    }

    /// The same answer with `Retry-After: secs`.
    pub(crate) fn retry_after(mut self, secs: u64) -> ApiError {
        self.retry_after_secs = Some(secs);
        self
    }

    /// Its status, JSON body and `Retry-After` (to carry it between cluster nodes).
    pub(crate) fn parts(&self) -> (StatusCode, &HttpError, Option<u64>) {
        (self.status, &self.body, self.retry_after_secs)
    }
}

impl From<Denied> for ApiError {
    /// 429 `rate_limited` or 503 `server_full`, with `Retry-After`.
    fn from(d: Denied) -> ApiError {
        let status = match d {
            Denied::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Denied::ServerFull { .. } => StatusCode::SERVICE_UNAVAILABLE,
        };
        ApiError {
            retry_after_secs: Some(d.retry_after_secs()),
            ..ApiError::new(status, d.code(), d.to_string())
        }
    }
}

/// Error answers are documented per route ([`api_doc::errors`]): nothing is inferred.
impl aide::OperationOutput for ApiError {
    type Inner = HttpError;
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body)).into_response();
        if let Some(secs) = self.retry_after_secs {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// `Path<T>` whose refusal (a segment that is not UTF-8 once percent-decoded, or does not
/// parse as `T`) is `400 bad_request` in JSON like every other error, not the framework's
/// plain text. Documented as `Path<T>`: one parameter per field of `T` (`T: JsonSchema`).
#[derive(Debug, Clone)]
pub struct ApiPath<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiPath<T>
where
    T: serde::de::DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(value)| ApiPath(value))
            .map_err(|rejection| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    ErrorCode::BadRequest,
                    rejection.body_text(),
                )
            })
    }
}

impl<T: schemars::JsonSchema> aide::OperationInput for ApiPath<T> {
    fn operation_input(
        ctx: &mut aide::generate::GenContext,
        operation: &mut aide::openapi::Operation,
    ) {
        Path::<T>::operation_input(ctx, operation);
    }
}

/// Refuses any body that is not one JSON object (`[…]`, `"…"`, numbers…), before serde
/// would read an array as the struct's fields in order.
fn require_object(body: &[u8]) -> Result<(), ApiError> {
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => Ok(()),
        _ => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            ErrorCode::BadRequest,
            "the settings must be one JSON object",
        )),
    }
}

/// `POST /api/rooms`: body [`RoomSettings`] (every field optional; an empty body means
/// all defaults). Answers 201 with [`CreateRoomResponse`].
///
/// Strict: the body must be one JSON object without unknown fields (400 `bad_request`).
/// Limits ([`parchis_admission`]): 429 `rate_limited` (creations per minute, open lobbies
/// or rooms with bots of this address; in cluster mode, of this address on the node the
/// room would be placed on) or 503 `server_full` (rooms, rooms with bots; in cluster
/// mode also when no node takes the room: every node is full, draining or sheds load),
/// with `Retry-After`.
pub async fn create_room(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<(StatusCode, Json<CreateRoomResponse>), ApiError> {
    let settings = settings_of(body)?;
    if state.shutdown_token().is_cancelled() {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::ShuttingDown,
            ErrorCode::ShuttingDown.describe(),
        ));
    }
    let bots = settings.bots.is_some();
    // Counted among the address's open rooms from here (given back if the creation
    // fails), so concurrent creations cannot pass its limits together.
    let reservation = state.admission().may_create(client, bots, |code| {
        state.room(code).map(|h| h.listing().status)
    })?;
    // Cluster mode: here unless draining or full, else on another node (placement).
    let created = if state.cluster().is_some() {
        parchis_cluster::ownership::placement::create(state.node(), settings.clone(), Some(client))
            .await
    } else if state.is_full() {
        return Err(Denied::ServerFull { what: "rooms" }.into());
    } else {
        parchis_room::create(state.rooms(), settings.clone()).await
    };
    let code = created.map_err(creation_refused)?;
    reservation.created(&code);
    // The invite names this node: any node serves any room.
    let base = state.config().public_url.trim_end_matches('/');
    Ok((
        StatusCode::CREATED,
        Json(CreateRoomResponse {
            invite_url: format!("{base}/?room={code}"),
            code,
            settings,
        }),
    ))
}

/// The docs of [`create_room`] (`docs/API_DOCS.md`).
pub fn create_room_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let mut op = op
        .id("createRoom")
        .summary("Create a room")
        .description(
            "Creates a room with these settings (every field optional; an empty body means \
             every default). The creator then joins it over the WebSocket (`join`) and \
             shares `invite_url` or `code`.",
        )
        .tag("rooms");
    // The handler reads the raw body (to refuse arrays and answer in JSON); it is the
    // settings as JSON, and may be empty.
    op.inner_mut().request_body = None;
    let mut op = op.input::<Json<CreateRoomRequest>>();
    if let Some(aide::openapi::ReferenceOr::Item(body)) = op.inner_mut().request_body.as_mut() {
        body.required = false;
        body.description =
            Some("The room's settings: one JSON object, unknown fields refused.".into());
    }
    let op = op.response_with::<201, Json<CreateRoomResponse>, _>(|r| {
        let r = r.description(
            "Created: the room's code, invite link and settings (the preset under its \
             canonical name).",
        );
        api_doc::links(
            r,
            &[
                ("GetRoom", "getRoom", &[("code", "$response.body#/code")]),
                (
                    "ListRoomGames",
                    "listGames",
                    &[("room", "$response.body#/code")],
                ),
                (
                    "AdminCloseRoom",
                    "adminCloseRoom",
                    &[("code", "$response.body#/code")],
                ),
            ],
        )
    });
    api_doc::errors(
        op,
        &[
            (
                400,
                "bad_request: not one JSON object, an unknown field, a value out of range or \
                 an invalid combination (the message names it); bad_json: not JSON.",
            ),
            (413, "bad_request: the body is over 16 KiB."),
            (
                429,
                "rate_limited: room creations per minute, open lobbies or rooms with bots of \
                 this address (or a connection limit).",
            ),
            (
                500,
                "internal: the room could not be created (a bug or a store that closed).",
            ),
            (
                503,
                "server_full (rooms or rooms with bots; in cluster mode no node takes it), \
                 shutting_down, or room_unavailable (the database is out of reach or busy).",
            ),
        ],
    )
}

/// The settings of a `POST /api/rooms` body: strict JSON, validated, the preset under
/// its canonical name.
fn settings_of(
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<RoomSettings, ApiError> {
    // A body over the limit (or one that broke off) is answered in JSON like every other
    // error, not with the framework's plain text.
    let body = body.map_err(|r| {
        let status = r.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            format!("the room settings are over {MAX_CREATE_BODY_BYTES} bytes")
        } else {
            r.body_text()
        };
        ApiError::new(status, ErrorCode::BadRequest, message)
    })?;
    let mut settings: RoomSettings = if body.iter().all(u8::is_ascii_whitespace) {
        RoomSettings::default()
    } else {
        require_object(&body)?;
        serde_json::from_slice(&body).map_err(|e| {
            let code = if e.is_syntax() || e.is_eof() {
                ErrorCode::BadJson
            } else {
                ErrorCode::BadRequest
            };
            ApiError::new(StatusCode::BAD_REQUEST, code, e.to_string())
        })?
    };
    settings
        .validate()
        .map_err(|m| ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::BadRequest, m))?;
    // The canonical name: `classic+two-out+murcia-12` is stored as `classic+murcia-12+two-out`.
    if let Ok(rules) = settings.rules() {
        settings.preset = rules.name();
    }
    Ok(settings)
}

/// The HTTP error for a creation the room layer or the cluster's placement refused.
fn creation_refused(r: Refusal) -> ApiError {
    let (status, retry) = match r.code {
        ErrorCode::Internal => (StatusCode::INTERNAL_SERVER_ERROR, None),
        // Another node holds this address's open rooms (cluster placement): as for
        // the open rooms here, they must close first.
        ErrorCode::RateLimited => (StatusCode::TOO_MANY_REQUESTS, Some(60)),
        // No node took it (full, draining, overloaded) or the database is out of
        // reach: worth trying again shortly.
        ErrorCode::ServerFull | ErrorCode::ShuttingDown | ErrorCode::RoomUnavailable => {
            (StatusCode::SERVICE_UNAVAILABLE, Some(PLACEMENT_RETRY_SECS))
        }
        _ => (StatusCode::SERVICE_UNAVAILABLE, None),
    };
    ApiError {
        retry_after_secs: retry,
        ..ApiError::new(status, r.code, r.message)
    }
}

/// Query of `GET /api/rooms`.
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoomsQuery {
    /// `lobby` (the default: rooms not yet started) or `playing` (games in progress that
    /// allow spectators).
    #[schemars(extend("enum" = ["lobby", "playing"]))]
    pub status: Option<String>,
}

/// The path of a room's routes (`/api/rooms/{code}`, `/admin/rooms/{code}/close`).
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
pub struct RoomCodePath {
    /// The room's code: 10 characters of Crockford base32, read case-insensitively (`O`
    /// as `0`, `I` and `L` as `1`, `-` and spaces ignored). Anything else is no room's
    /// code (404).
    pub code: String,
}

/// `GET /api/rooms`: public rooms not yet started, oldest first (in cluster mode, those of
/// every node: [`parchis_cluster::routing::lobby`]). With `?status=playing`:
/// public rooms whose game is in progress and that allow spectators. Any other `status`,
/// or another parameter, is `400 bad_request`.
pub async fn list_rooms(
    State(state): State<AppState>,
    query: Result<axum::extract::Query<RoomsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<RoomList>, ApiError> {
    let axum::extract::Query(query) = query.map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            ErrorCode::BadRequest,
            e.body_text(),
        )
    })?;
    let playing = match query.status.as_deref() {
        None | Some("lobby") => false,
        Some("playing") => true,
        Some(other) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                ErrorCode::BadRequest,
                format!("unknown status {other:?}: use lobby or playing"),
            ))
        }
    };
    // Every node's public rooms in cluster mode (`P.lobby`), this node's otherwise.
    let rooms = parchis_cluster::routing::lobby::gather(state.node(), playing).await;
    Ok(Json(RoomList { rooms }))
}

/// The docs of [`list_rooms`].
pub fn list_rooms_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("listRooms")
        .summary("The lobby: public rooms")
        .description(
            "Public rooms not yet started, oldest first (each with its rule set, clock, free \
             colours and whether spectators may watch); with `status=playing`, public rooms \
             whose game is in progress and that allow spectators. In cluster mode, those of \
             every node.",
        )
        .tag("rooms")
        .response_with::<200, Json<RoomList>, _>(|r| {
            api_doc::links(
                r.description("The rooms."),
                &[(
                    "GetRoom",
                    "getRoom",
                    &[("code", "$response.body#/rooms/0/code")],
                )],
            )
        });
    api_doc::errors(
        op,
        &[(
            400,
            "bad_request: an unknown `status` or another parameter.",
        )],
    )
}

/// The docs of [`get_room`].
pub fn get_room_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("getRoom")
        .summary("One room's public state")
        .description(
            "The room as the WebSocket's `welcome` shows it: settings, rule set, seats, \
             teams, the board's marked squares, and the running game's position.",
        )
        .tag("rooms")
        .response_with::<200, Json<RoomView>, _>(|r| r.description("The room."));
    api_doc::errors(
        op,
        &[
            (
                400,
                "bad_request: the code is not UTF-8 once percent-decoded.",
            ),
            (404, "unknown_room: no room has this code."),
            (
                429,
                "rate_limited: this address's lookups by code per minute (or a connection limit).",
            ),
            (
                503,
                "room_unavailable (cluster mode: an unfinished room no node serves right now; \
                 Retry-After), or server_full.",
            ),
        ],
    )
}

/// `GET /api/rooms/{code}`: one room's public state ([`parchis_protocol::RoomView`]);
/// 404 `unknown_room` when no room has that code. Cluster mode: a room owned by another
/// node is asked on `P.room.<CODE>`; one that no node serves right now but is unfinished
/// gets 503 `room_unavailable` with `Retry-After`; a code found unknown is answered 404
/// from the negative cache for a few seconds ([`parchis_cluster::routing::unknown`]).
/// Lookups by code are limited per address (429 `rate_limited`, [`parchis_admission`]).
pub async fn get_room(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    ApiPath(RoomCodePath { code }): ApiPath<RoomCodePath>,
) -> Result<Json<RoomView>, ApiError> {
    state.admission().lookup(client)?;
    let code = normalise_code(&code);
    let unknown = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::UnknownRoom,
            format!(
                "no room has code {:?}",
                parchis_room::ids::shown_code(&code)
            ),
        )
    };
    if !parchis_room::ids::is_plausible_code(&code) {
        return Err(unknown());
    }
    let Some(handle) = state.room(&code) else {
        if let Some(cluster) = state.cluster() {
            // Found unknown a moment ago: no NATS request, no store read.
            let cache = &cluster.routing.unknown;
            if cache.is_unknown(&code) {
                return Err(unknown());
            }
            // Owned by another node, or being moved.
            if let Some(view) = parchis_cluster::routing::view(state.node(), &code).await {
                return Ok(Json(view));
            }
            let stored = state.store().get_room(&code).await;
            if let Ok(None) = stored {
                cache.note(&code);
            }
            if let Ok(Some(s)) = stored {
                if s.room.status != parchis_store::RoomStatus::Finished {
                    state.node().wake_sweeper();
                    return Err(ApiError {
                        retry_after_secs: Some(1),
                        ..ApiError::new(
                            StatusCode::SERVICE_UNAVAILABLE,
                            ErrorCode::RoomUnavailable,
                            ErrorCode::RoomUnavailable.describe(),
                        )
                    });
                }
            }
        }
        return Err(unknown());
    };
    let (reply, answer) = oneshot::channel();
    handle
        .sender()
        .send(RoomCmd::View { reply })
        .await
        .map_err(|_| unknown())?;
    answer.await.map(Json).map_err(|_| unknown())
}
