//! Quick pairing over HTTP (issue 26): `GET/POST /api/pairing`, `GET/DELETE
//! /api/pairing/{ticket}`. A player waits in a pool (rule set, 2 or 4 seats, rated or
//! casual) with a ticket; the server groups close ratings and opens a room whose seats
//! are reserved for the group; each player then sends the WebSocket `claim`.

use parchis_engine::Colour;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How long a ticket lives without being polled (`GET /api/pairing/{ticket}`), in ms:
/// 30 s. A ticket not polled for longer leaves its pool.
pub const PAIRING_TICKET_IDLE_MS: i64 = 30_000;

/// Body of `POST /api/pairing`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PairingRequest {
    /// The rule set, as for `POST /api/rooms` (`online`, `classic+two-out`, `pairs`…).
    #[schemars(length(min = 1, max = 96))]
    pub preset: String,
    /// Seats of the game: 2 or 4 (within the rule set's player range; `pairs`: 4).
    #[schemars(range(min = 2, max = 4))]
    pub seats: u8,
    /// A rated game (logged-in players only) or a casual one (guests welcome).
    pub rated: bool,
    /// A guest's display name (1 to 24 characters; a logged-in player's seat shows the
    /// username and this is ignored). Absent for a guest: `Guest`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 24))]
    pub name: Option<String>,
}

/// A ticket's state, as `GET /api/pairing/{ticket}` answers it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum PairingStatus {
    /// Still waiting in the pool.
    Waiting {
        /// How long it has waited, in ms.
        waiting_ms: i64,
        /// The rating window now, in μ points either side of the player's μ; `null` once
        /// it is unlimited (after 60 s).
        window: Option<f64>,
    },
    /// A group was found: open the room's WebSocket and send `claim` (with the ticket
    /// for a guest; without, for a logged-in player).
    Paired {
        /// The room's code.
        room: String,
        /// The colour reserved for this ticket.
        colour: Colour,
    },
    /// The room was paired but not every player claimed their seat within the claim
    /// wait (60 s by default): its lobby was closed (connections closed with 4006
    /// `pairing_expired`). A player who had claimed in time is back in the pool with
    /// their original wait, under `ticket`; the others must enter again.
    Expired {
        /// The room's code (closed).
        room: String,
        /// The new ticket to poll (this player had claimed in time and waits again);
        /// `null` when they did not claim.
        ticket: Option<String>,
    },
}

/// Answer of `POST /api/pairing` (201): the ticket and its first state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PairingTicket {
    /// The ticket (32 hex digits): a secret: it claims the seat of a guest.
    pub ticket: String,
    /// `waiting`.
    pub status: String,
    /// 0.
    pub waiting_ms: i64,
    /// The rating window at once, in μ points; `null` if unlimited.
    pub window: Option<f64>,
}

/// One pool of [`PairingPools`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PairingPool {
    /// The rule set's canonical name.
    pub preset: String,
    /// 2 or 4.
    pub seats: u8,
    /// Rated or casual.
    pub rated: bool,
    /// Players waiting in it now.
    pub waiting: u32,
}

/// Body of `GET /api/pairing`: the pools with players waiting, and always `online`
/// with 2 and 4 seats, rated and casual (0 when nobody waits), sorted by preset, seats,
/// rated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PairingPools {
    /// The pools.
    pub pools: Vec<PairingPool>,
}
