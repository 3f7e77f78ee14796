//! A room run by a tournament's director (issue 27, `docs/TOURNAMENTS.md`): its seats
//! reserved for the drawn entrants, and the director's commands to it. Plain values; the
//! core's handling is in [`crate::referee`].
//!
//! A director's room has no creator: nobody's `start` is obeyed, and the game starts on
//! the director's [`DirectorCmd::Start`], or (a quick pairing's room,
//! [`DirectorRoom::start_when_seated`]) by itself once every reserved person claimed.
//! Each reserved colour is taken by a claim that presents the reservation's opaque
//! `reserved_for` key (an account's uuid as text; `ticket:<ticket>` for a quick-pairing
//! ticket, [`ticket_key`]), or by a bot at the start. A plain `join` is refused
//! (`seat_reserved`). The reservation is stored beside the room's settings
//! ([`crate::persist::director_value`]), so a restored room keeps it.

use parchis_engine::Colour;
use parchis_protocol::{BotLevel, MAX_NAME_CHARS};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Longest `reserved_for` key, in bytes.
pub const MAX_RESERVATION_KEY_BYTES: usize = 128;

/// The `reserved_for` key of a quick-pairing ticket's seat: `ticket:<ticket>` (never an
/// account's uuid, so a claim by ticket never names an account).
pub fn ticket_key(ticket: &str) -> String {
    format!("ticket:{ticket}")
}

/// One reserved seat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reservation {
    /// The colour.
    pub colour: Colour,
    /// The opaque key a claim of this seat must present (an account uuid as text, once
    /// accounts exist); empty for a bot seat.
    #[serde(default)]
    pub reserved_for: String,
    /// The name shown for the seat (1 to [`MAX_NAME_CHARS`] characters).
    pub name: String,
    /// A bot of this level takes the seat at the start (no claim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot: Option<BotLevel>,
    /// The reserved account's display rating in the room's pool, shown on the claimed
    /// seat (`SeatView.rating`, issue 26): read by whoever reserved it (quick pairing,
    /// when the player entered the pool; a championship's director room, by the room
    /// layer when it opens the room); `None` for a guest, a bot or an account with no
    /// game in the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<i64>,
}

/// The reservations of a director's room.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct DirectorRoom {
    /// One per colour of the match, at most four, colours distinct.
    pub reserved: Vec<Reservation>,
    /// The game starts by itself once every reserved person's seat is claimed (bots
    /// seated then), as if the director had sent [`DirectorCmd::Start`] with nobody
    /// absent: a quick pairing's room. `false` (a championship's match): only the
    /// director starts it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub start_when_seated: bool,
}

impl DirectorRoom {
    /// Checks the reservations: 2 to 4, distinct colours, names of 1 to
    /// [`MAX_NAME_CHARS`] printable characters, a key of 1 to
    /// [`MAX_RESERVATION_KEY_BYTES`] bytes for every seat that is not a bot's. The error
    /// names the first broken rule.
    pub fn validate(&self) -> Result<(), String> {
        if !(2..=4).contains(&self.reserved.len()) {
            return Err(format!(
                "a director's room reserves 2 to 4 seats, got {}",
                self.reserved.len()
            ));
        }
        for (i, r) in self.reserved.iter().enumerate() {
            if self.reserved[..i].iter().any(|o| o.colour == r.colour) {
                return Err(format!("{} is reserved twice", r.colour));
            }
            let chars = r.name.trim().chars().count();
            if chars == 0 || chars > MAX_NAME_CHARS || r.name.chars().any(char::is_control) {
                return Err(format!(
                    "the name of {} must have 1 to {MAX_NAME_CHARS} printable characters",
                    r.colour
                ));
            }
            if r.bot.is_none()
                && (r.reserved_for.is_empty() || r.reserved_for.len() > MAX_RESERVATION_KEY_BYTES)
            {
                return Err(format!(
                    "the seat of {} needs a reserved_for key of 1 to {MAX_RESERVATION_KEY_BYTES} bytes",
                    r.colour
                ));
            }
        }
        Ok(())
    }

    /// The reservation of `colour`.
    pub fn of(&self, colour: Colour) -> Option<&Reservation> {
        self.reserved.iter().find(|r| r.colour == colour)
    }

    /// The person's reservation whose key is `key`.
    pub fn claimed_by(&self, key: &str) -> Option<&Reservation> {
        self.reserved
            .iter()
            .find(|r| r.bot.is_none() && !key.is_empty() && r.reserved_for == key)
    }
}

/// What a tournament's director asks of a room (its effects `StartRoom`, `PauseClock`,
/// `ResumeClock`, `Expel`). Each is idempotent: asked again once done, it answers the
/// same and changes nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DirectorCmd {
    /// Start the game now with the seated and bot colours, leaving `absent` out (their
    /// seats are freed if taken). Refused (`not_enough_players`) while a colour that is
    /// not absent is not seated, or with fewer players than the rule set needs.
    Start {
        /// Colours left empty.
        absent: Vec<Colour>,
    },
    /// Stop the turn clock of the running game, keeping what is left of it.
    PauseClock,
    /// Run the stopped clock again with what was left of it.
    ResumeClock,
    /// The seats of `colours` forfeit the running game (R-LEAVE, reason
    /// `disqualified`); it goes on without them.
    Expel {
        /// The expelled colours.
        colours: Vec<Colour>,
    },
}

/// The room's answer to a [`DirectorCmd`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectorAnswer {
    /// The room's game, once started.
    pub game_id: Option<Uuid>,
    /// The clock is paused now.
    pub paused: bool,
}
