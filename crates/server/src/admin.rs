//! The admin API, for operators: list the live rooms with their connections, close a
//! room, disconnect a connection. Every request needs `Authorization: Bearer <token>` with
//! the token of `PARCHIS_ADMIN_TOKEN`; without that setting the API is disabled (`404
//! admin_disabled`). A missing or wrong token is `401 unauthorized`. Every action, and
//! every refused attempt, is logged.
//!
//! * `GET /admin/rooms` → [`AdminRoomList`]
//! * `POST /admin/rooms/{code}/close` → [`AdminCloseRoom`]; `404 unknown_room`
//! * `POST /admin/connections/{id}/disconnect` → [`AdminDisconnect`];
//!   `404 unknown_connection`

use crate::admin_auth::authorize;
use crate::api_doc;
use crate::client_addr::ClientAddr;
use crate::http::{ApiError, ApiPath, RoomCodePath};
use crate::metrics::ADMIN_ACTIONS;
use crate::state::AppState;
use aide::axum::routing::{get_with, post_with};
use aide::axum::ApiRouter;
use aide::transform::TransformOperation;
use axum::extract::{Extension, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use parchis_protocol::{close_code, AdminCloseRoom, AdminDisconnect, AdminRoomList, ErrorCode};
use parchis_room::ids::normalise_code;
use parchis_room::RoomCmd;
use std::time::Duration;
use tokio::sync::oneshot;
use tracing::info;

/// How long a room actor may take to answer an admin request.
const ROOM_ANSWER: Duration = Duration::from_secs(2);

/// The admin routes (mounted at the root: paths start with `/admin`), each with its docs.
pub fn router() -> ApiRouter<AppState> {
    use crate::stall;
    ApiRouter::new()
        .api_route("/admin/rooms", get_with(list_rooms, list_rooms_docs))
        .api_route(
            "/admin/rooms/{code}/close",
            post_with(close_room, close_room_docs),
        )
        .api_route(
            "/admin/connections/{id}/disconnect",
            post_with(disconnect, disconnect_docs),
        )
        .api_route(
            "/admin/debug/stall",
            post_with(stall::stall, stall::stall_docs),
        )
        .api_route(
            "/admin/debug/shed",
            post_with(stall::shed, stall::shed_docs),
        )
}

/// The path of `POST /admin/connections/{id}/disconnect`.
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
pub struct ConnectionIdPath {
    /// The connection's id (decimal), as `GET /admin/rooms` lists it; anything else is no
    /// open connection's id (404).
    pub id: String,
}

/// The docs of [`list_rooms`].
pub fn list_rooms_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("adminListRooms")
        .summary("Every live room with its connections")
        .description("Every live room on this node, oldest first, with its seats' and spectators' connection ids.")
        .response_with::<200, Json<AdminRoomList>, _>(|r| r.description("The rooms."));
    api_doc::errors(
        api_doc::admin(op),
        &[(404, "admin_disabled: no admin token is configured.")],
    )
}

/// The docs of [`close_room`].
pub fn close_room_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("adminCloseRoom")
        .summary("Close a room")
        .description(
            "The running game ends with reason `closed_by_admin` (stored); every connection \
             closes with 4002.",
        )
        .response_with::<200, Json<AdminCloseRoom>, _>(|r| r.description("Closed."));
    api_doc::errors(
        api_doc::admin(op),
        &[
            (
                400,
                "bad_request: the code is not UTF-8 once percent-decoded.",
            ),
            (
                404,
                "admin_disabled: no admin token is configured; unknown_room: no live room \
                 has this code.",
            ),
            (
                503,
                "internal: the room did not answer in time; server_full.",
            ),
        ],
    )
}

/// The docs of [`disconnect`].
pub fn disconnect_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("adminDisconnect")
        .summary("Disconnect a connection")
        .description(
            "Closes the connection with 4003; a player's seat keeps its grace period, as for \
             any dropped connection.",
        )
        .response_with::<200, Json<AdminDisconnect>, _>(|r| r.description("Disconnected."));
    api_doc::errors(
        api_doc::admin(op),
        &[
            (
                400,
                "bad_request: the id is not UTF-8 once percent-decoded.",
            ),
            (
                404,
                "admin_disabled: no admin token is configured; unknown_connection: no open \
                 connection has this id.",
            ),
        ],
    )
}

fn counted(action: &'static str) {
    metrics::counter!(ADMIN_ACTIONS, "action" => action).increment(1);
}

/// `GET /admin/rooms`: every live room with its seats, their connection ids and the
/// spectators' connection ids, oldest first.
pub async fn list_rooms(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    headers: HeaderMap,
) -> Result<Json<AdminRoomList>, ApiError> {
    authorize(&state, client, &headers, "list_rooms")?;
    let asks = state.all_rooms().into_iter().map(|room| async move {
        let (reply, answer) = oneshot::channel();
        room.sender().send(RoomCmd::Inspect { reply }).await.ok()?;
        tokio::time::timeout(ROOM_ANSWER, answer).await.ok()?.ok()
    });
    let mut rooms: Vec<_> = futures_util::future::join_all(asks)
        .await
        .into_iter()
        .flatten()
        .collect();
    rooms.sort_by(|a, b| {
        a.created_at_ms
            .cmp(&b.created_at_ms)
            .then(a.code.cmp(&b.code))
    });
    info!(rooms = rooms.len(), "admin listed rooms");
    counted("list_rooms");
    Ok(Json(AdminRoomList { rooms }))
}

/// `POST /admin/rooms/{code}/close`: closes the room. A running game ends with reason
/// `closed_by_admin` (stored); every connection is closed with 4002.
pub async fn close_room(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    headers: HeaderMap,
    ApiPath(RoomCodePath { code }): ApiPath<RoomCodePath>,
) -> Result<Json<AdminCloseRoom>, ApiError> {
    authorize(&state, client, &headers, "close_room")?;
    let code = normalise_code(&code);
    let unknown = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::UnknownRoom,
            format!(
                "no live room has code {:?}",
                parchis_room::ids::shown_code(&code)
            ),
        )
    };
    let room = state.room(&code).ok_or_else(unknown)?;
    let (reply, answer) = oneshot::channel();
    room.sender()
        .send(RoomCmd::Close { reply })
        .await
        .map_err(|_| unknown())?;
    let closed = tokio::time::timeout(ROOM_ANSWER * 5, answer)
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::Internal,
                "the room did not answer",
            )
        })?
        .map_err(|_| unknown())?;
    state.rooms().deregister(&code);
    info!(
        room = %closed.code,
        game = closed.game_id.as_deref().unwrap_or(""),
        connections = closed.connections_closed,
        "admin closed a room"
    );
    counted("close_room");
    Ok(Json(closed))
}

/// `POST /admin/connections/{id}/disconnect`: closes connection `id` with 4003. A player's
/// seat keeps its grace period, as for any dropped connection.
pub async fn disconnect(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    headers: HeaderMap,
    ApiPath(ConnectionIdPath { id }): ApiPath<ConnectionIdPath>,
) -> Result<Json<AdminDisconnect>, ApiError> {
    authorize(&state, client, &headers, "disconnect")?;
    let unknown = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::UnknownConnection,
            format!("no open connection has id {id:?}"),
        )
    };
    let conn: u64 = id.parse().map_err(|_| unknown())?;
    let kick = state.connection(conn).ok_or_else(unknown)?;
    kick.kick(
        close_code::DISCONNECTED_BY_ADMIN,
        "disconnected by an administrator",
    );
    info!(conn, "admin disconnected a connection");
    counted("disconnect");
    Ok(Json(AdminDisconnect { conn }))
}
