//! HTTP API: create, list and inspect rooms. Errors are JSON [`HttpError`] bodies.

use crate::ids::normalise_code;
use crate::room::{self, RoomCmd};
use crate::state::AppState;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use parchis_protocol::{
    CreateRoomResponse, ErrorCode, HttpError, RoomList, RoomSettings, RoomStatus,
};
use tokio::sync::oneshot;

/// An HTTP error answer: status plus a JSON body.
#[derive(Debug, thiserror::Error)]
#[error("{status}: {body:?}")]
pub struct ApiError {
    status: StatusCode,
    body: HttpError,
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
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

/// `POST /api/rooms`: body [`RoomSettings`] (every field optional; an empty body means
/// all defaults). Answers 201 with [`CreateRoomResponse`].
pub async fn create_room(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<(StatusCode, Json<CreateRoomResponse>), ApiError> {
    let mut settings: RoomSettings = if body.iter().all(u8::is_ascii_whitespace) {
        RoomSettings::default()
    } else {
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
    if state.shutdown_token().is_cancelled() {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::ShuttingDown,
            ErrorCode::ShuttingDown.describe(),
        ));
    }
    let code = room::create(&state, settings.clone())
        .await
        .map_err(|r| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, r.code, r.message))?;
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

/// Query of `GET /api/rooms`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct RoomsQuery {
    /// `lobby` (the default) or `playing`.
    pub status: Option<String>,
}

/// `GET /api/rooms`: public rooms not yet started, oldest first. With `?status=playing`:
/// public rooms whose game is in progress and that allow spectators. Any other `status`
/// is `400 bad_request`.
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
    let mut rooms: Vec<_> = state
        .all_rooms()
        .into_iter()
        .map(|h| h.listing())
        .filter(|l| {
            l.public
                && if playing {
                    l.status == RoomStatus::Playing && l.spectators_allowed
                } else {
                    l.status == RoomStatus::Lobby
                }
        })
        .map(|l| l.summary)
        .collect();
    rooms.sort_by(|a, b| b.age_secs.cmp(&a.age_secs).then(a.code.cmp(&b.code)));
    Ok(Json(RoomList { rooms }))
}

/// `GET /api/rooms/{code}`: one room's public state ([`parchis_protocol::RoomView`]);
/// 404 `unknown_room` when no room has that code.
pub async fn get_room(
    State(state): State<AppState>,
    Path(code): Path<String>,
) -> Result<Json<parchis_protocol::RoomView>, ApiError> {
    let code = normalise_code(&code);
    let unknown = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::UnknownRoom,
            format!("no room has code {code:?}"),
        )
    };
    let handle = state.room(&code).ok_or_else(unknown)?;
    let (reply, answer) = oneshot::channel();
    handle
        .sender()
        .send(RoomCmd::View { reply })
        .await
        .map_err(|_| unknown())?;
    answer.await.map(Json).map_err(|_| unknown())
}

// ----- stored games ----------------------------------------------------------------------

/// One seated player of a stored game.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PlayerInfo {
    /// The seat's colour.
    pub colour: String,
    /// Display name.
    pub name: String,
    /// Whether this player created the room.
    pub creator: bool,
}

/// One stored event of a game, with its room seq.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StoredEvent {
    /// The event's seq in the room's event stream.
    pub seq: i64,
    /// When it happened (unix ms).
    pub at_ms: i64,
    /// The [`parchis_protocol::RoomEvent`] as sent on the WebSocket.
    pub event: serde_json::Value,
}

/// Summary of one stored game (`GET /api/games?room=…`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct GameSummary {
    /// Game id (UUID).
    pub id: uuid::Uuid,
    /// Room code.
    pub room: String,
    /// Rules preset name.
    pub preset: String,
    /// When the game started (unix ms).
    pub created_at_ms: i64,
    /// When it finished (unix ms); `null` while it runs.
    pub finished_at_ms: Option<i64>,
    /// The engine's outcome (`winner`, `reason`, …); `null` while it runs.
    pub result: Option<serde_json::Value>,
    /// Why it ended: `completed` or `abandoned`; `null` while it runs.
    pub reason: Option<String>,
    /// Absolute deadline of the running turn clock (unix ms), if any.
    pub deadline_ms: Option<i64>,
}

impl From<parchis_store::GameRecord> for GameSummary {
    fn from(g: parchis_store::GameRecord) -> Self {
        GameSummary {
            id: g.id,
            room: g.room_code,
            preset: g.preset,
            created_at_ms: g.created_at_ms,
            finished_at_ms: g.finished_at_ms,
            result: g.result,
            reason: g.reason,
            deadline_ms: g.deadline_ms,
        }
    }
}

/// The stored game, with the turn clock's deadline taken from its room while the game
/// runs there (the stored column is written at the start and on restore only; each
/// throw's deadline is durable in its `turn` event).
pub(crate) fn live_summary(state: &AppState, g: parchis_store::GameRecord) -> GameSummary {
    let live = state
        .room(&g.room_code)
        .map(|room| room.listing())
        .filter(|l| l.game_id == Some(g.id) && g.finished_at_ms.is_none());
    let mut summary = GameSummary::from(g);
    if let Some(listing) = live {
        summary.deadline_ms = listing.deadline_ms;
    }
    summary
}

/// A stored game with its players and every event (`GET /api/games/{id}`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct GameDetail {
    /// The game.
    #[serde(flatten)]
    pub game: GameSummary,
    /// Seated players, in joining order.
    pub players: Vec<PlayerInfo>,
    /// Every stored event, by ascending seq.
    pub events: Vec<StoredEvent>,
}

/// The games of one room (`GET /api/games?room=…`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct GameList {
    /// Oldest first.
    pub games: Vec<GameSummary>,
}

/// Query of `GET /api/games`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct GamesQuery {
    /// Room code (read like any room code: case-insensitive, `O`→`0`…).
    pub room: Option<String>,
}

fn store_failed(e: parchis_store::StoreError) -> ApiError {
    tracing::warn!(error = %e, "store failed serving a game");
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::Internal,
        "the game store failed",
    )
}

fn parse_game_id(id: &str) -> Result<uuid::Uuid, ApiError> {
    uuid::Uuid::parse_str(id).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            ErrorCode::BadRequest,
            format!("{id:?} is not a game id (UUID): {e}"),
        )
    })
}

pub(crate) type StoredGame = (
    parchis_store::GameRecord,
    Vec<parchis_store::EventRecord>,
    Vec<parchis_store::SeatRecord>,
);

pub(crate) async fn load_game(state: &AppState, id: &str) -> Result<StoredGame, ApiError> {
    let id = parse_game_id(id)?;
    let (game, events) = state
        .store()
        .get_game(id)
        .await
        .map_err(store_failed)?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                ErrorCode::UnknownGame,
                format!("no game has id {id}"),
            )
        })?;
    let seats = state
        .store()
        .get_room(&game.room_code)
        .await
        .map_err(store_failed)?
        .map(|r| r.seats)
        .unwrap_or_default();
    Ok((game, events, seats))
}

/// `GET /api/games/{id}`: one stored game ([`GameDetail`]): players, preset, result and
/// every event with its seq. `400 bad_request` for a malformed id, `404 unknown_game`.
pub async fn get_game(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<GameDetail>, ApiError> {
    let (game, events, seats) = load_game(&state, &id).await?;
    Ok(Json(GameDetail {
        game: live_summary(&state, game),
        players: seats
            .into_iter()
            .map(|s| PlayerInfo {
                colour: s.colour,
                name: s.display_name,
                creator: s.is_creator,
            })
            .collect(),
        events: events
            .into_iter()
            .map(|e| StoredEvent {
                seq: e.seq,
                at_ms: e.created_at_ms,
                event: e.event,
            })
            .collect(),
    }))
}

/// `GET /api/games?room=CODE`: the room's games, oldest first ([`GameList`]); empty for a
/// room with no games or no such room. `400 bad_request` without `room`.
pub async fn list_games(
    State(state): State<AppState>,
    axum::extract::Query(query): axum::extract::Query<GamesQuery>,
) -> Result<Json<GameList>, ApiError> {
    let Some(room) = query.room else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            ErrorCode::BadRequest,
            "give the room: /api/games?room=CODE",
        ));
    };
    let code = normalise_code(&room);
    let games = state
        .store()
        .list_games(&code)
        .await
        .map_err(store_failed)?;
    Ok(Json(GameList {
        games: games.into_iter().map(|g| live_summary(&state, g)).collect(),
    }))
}

/// `GET /api/games/{id}/export`: the game in the text notation of `proto/GAME_EXPORT.md`
/// (`text/plain`), with tags `Room`, `Game`, `Result` (`*` while it runs) and one tag per
/// player named after its colour (`[Yellow "Ana"]`).
pub async fn export_game(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let (game, events, seats) = load_game(&state, &id).await?;
    let corrupt = |message: String| {
        tracing::error!(room = %game.room_code, game = %game.id, %message, "stored game does not export");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Internal,
            message,
        )
    };
    let mut start = None;
    let mut engine_events = Vec::new();
    for e in &events {
        let event: parchis_protocol::RoomEvent = serde_json::from_value(e.event.clone())
            .map_err(|err| corrupt(format!("event seq {}: {err}", e.seq)))?;
        match event {
            parchis_protocol::RoomEvent::GameStarted {
                first, position, ..
            } => {
                start = Some((
                    position.rules,
                    position.players.iter().map(|p| p.colour).collect(),
                    first,
                ))
            }
            parchis_protocol::RoomEvent::Game { event } => engine_events.push(event),
            _ => {}
        }
    }
    let (rules, seated, first) = start.ok_or_else(|| corrupt("no game_started event".into()))?;
    let mut record = parchis_engine::GameRecord::from_events(rules, seated, first, &engine_events);
    let (replayed, _) = record.replay().map_err(|e| corrupt(e.to_string()))?;
    record.tags.push(("Room".into(), game.room_code.clone()));
    record.tags.push(("Game".into(), game.id.to_string()));
    record.tags.push((
        "Result".into(),
        parchis_engine::result_tag(&replayed).unwrap_or_else(|| "*".into()),
    ));
    for seat in &seats {
        let tag = match seat.colour.parse::<parchis_engine::Colour>() {
            Ok(c) => c.name().to_owned(),
            Err(_) => continue,
        };
        let mut chars = tag.chars();
        let tag: String = chars
            .next()
            .map(|f| f.to_uppercase().chain(chars).collect())
            .unwrap_or_default();
        record.tags.push((tag, seat.display_name.clone()));
    }
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; charset=utf-8",
        )],
        record.to_string(),
    )
        .into_response())
}
