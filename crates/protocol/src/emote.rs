//! Quick emotes: a fixed list of short phrases a seated player can send to the room
//! ([`crate::ClientMessage::Emote`], broadcast as [`crate::ServerMessage::Emote`]). Ids
//! only, never free text: clients translate each id, so there is nothing to moderate.

use parchis_engine::Colour;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One quick emote or phrase, by id. Clients show it in the reader's language (Spanish
/// and English in the web client); the server never sends text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Emote {
    /// "¡Hola!" / "Hello!"
    Hello,
    /// "¡Suerte!" / "Good luck!"
    GoodLuck,
    /// "¡Buena jugada!" / "Nice move!"
    NiceMove,
    /// "¡Bien jugado!" / "Well played!"
    WellPlayed,
    /// "¡Gracias!" / "Thanks!"
    Thanks,
    /// "¡Uy!" / "Oops!"
    Oops,
    /// "Perdón" / "Sorry"
    Sorry,
    /// "¡Vaya!" / "Wow!"
    Wow,
}

impl Emote {
    /// Every emote, in the order clients offer them.
    pub const ALL: [Emote; 8] = [
        Emote::Hello,
        Emote::GoodLuck,
        Emote::NiceMove,
        Emote::WellPlayed,
        Emote::Thanks,
        Emote::Oops,
        Emote::Sorry,
        Emote::Wow,
    ];
}

/// A seat away from the room (its connection dropped) and when its grace period ends
/// ([`crate::ServerMessage::Presence`]'s `away`, R-LEAVE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AwaySeat {
    /// The seat's colour.
    pub colour: Colour,
    /// Unix ms at which the seat is given up unless its player comes back: freed before
    /// the start; during the game abandoned (R-LEAVE), so a bot takes it over
    /// (`on_abandon: bot`) or the player forfeits. Computed by the room from the time
    /// the connection dropped plus `disconnect_grace_secs`. A seat that runs out of
    /// time `timeouts_to_abandon` times in a row is abandoned earlier (its strikes are in
    /// the position's `timeouts`).
    pub until_ms: i64,
}

/// Body of `GET /api/config`: what the web client needs to know about this server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClientConfig {
    /// The server's public base URL (`--public-url` / `PARCHIS_PUBLIC_URL`, no trailing
    /// `/`), from which clients build invite links (`{public_url}/?room=CODE`); `null`
    /// when the server was given none and its bind address names no host (`0.0.0.0`,
    /// `[::]`): then clients use the page's own address.
    pub public_url: Option<String>,
}
