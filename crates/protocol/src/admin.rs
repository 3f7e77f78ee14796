//! Bodies of the admin API (`/admin/…`, behind `Authorization: Bearer $PARCHIS_ADMIN_TOKEN`).

use crate::http::{BotLevel, RoomStatus};
use parchis_engine::Colour;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One seat of a live room, as the operator sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdminSeat {
    /// The seat's colour.
    pub colour: Colour,
    /// Display name.
    pub name: String,
    /// The connection attached to the seat (its id), `null` when disconnected or a bot.
    pub conn: Option<u64>,
    /// The bot's level for a bot seat, `null` for a person.
    pub bot: Option<BotLevel>,
    /// The player abandoned the game.
    pub abandoned: bool,
}

/// One live room with its connections (`GET /admin/rooms`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdminRoom {
    /// Room code.
    pub code: String,
    /// Lifecycle.
    pub status: RoomStatus,
    /// The rule set's name.
    pub preset: String,
    /// The room's game (UUID), once started.
    pub game_id: Option<String>,
    /// Unix ms of creation.
    pub created_at_ms: i64,
    /// Seated players in joining order.
    pub seats: Vec<AdminSeat>,
    /// Connection ids of the spectators.
    pub spectators: Vec<u64>,
}

/// Body of `GET /admin/rooms`: every live room, oldest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdminRoomList {
    /// The rooms.
    pub rooms: Vec<AdminRoom>,
}

/// Answer to `POST /admin/rooms/{code}/close`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdminCloseRoom {
    /// The room closed.
    pub code: String,
    /// The game that was running and now ended with reason `closed_by_admin` (stored);
    /// `null` if none was running (a lobby, or a finished game).
    pub game_id: Option<String>,
    /// Connections closed (with close code 4002).
    pub connections_closed: u32,
}

/// Answer to `POST /admin/connections/{id}/disconnect`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdminDisconnect {
    /// The connection closed (with close code 4003).
    pub conn: u64,
}
