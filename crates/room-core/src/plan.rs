//! What the lobby hands the core: a start waiting for its transaction, and what a `join`
//! asks for.

use crate::dice::DiceSource;
use crate::seat::Seat;
use crate::{ConnId, Ms};
use parchis_engine::{Colour, Game};
use parchis_protocol::RoomEvent;
use uuid::Uuid;

/// A start waiting for its transaction.
pub(crate) struct StartPlan {
    pub conn: ConnId,
    pub req: u64,
    /// Started by a tournament's director: no connection's command to answer.
    pub director: bool,
    /// Bot seats filling the free colours, with their `player_joined` events.
    pub bots: Vec<Seat>,
    pub bot_events: Vec<RoomEvent>,
    pub game: Game,
    pub game_id: Uuid,
    /// Opening rolls, `game_started`, the first `turn`.
    pub events: Vec<RoomEvent>,
    pub deadline: Ms,
    pub at_ms: Ms,
    pub first: Colour,
    /// The dice with the client seeds fixed and the opening throws counted.
    pub dice: DiceSource,
}

/// A bot to seat at the start: its colour, level and name (`None`: "Random bot 1").
pub(crate) type BotFill = (Colour, parchis_protocol::BotLevel, Option<String>);

/// What a `join` asks for: a display name, a colour (or any free one) and a client seed
/// for the fair dice (or the default).
pub(crate) struct SeatAsk {
    pub name: String,
    pub colour: Option<Colour>,
    pub client_seed: Option<String>,
    /// The logged-in player's account, `None` for a guest.
    pub account: Option<uuid::Uuid>,
    /// The account's display ratings by pool name (empty for a guest).
    pub ratings: std::collections::BTreeMap<String, i64>,
}
