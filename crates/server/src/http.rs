//! HTTP API: create, list and inspect rooms (stored games: [`crate::games`]). Errors are
//! JSON [`HttpError`] bodies.

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
