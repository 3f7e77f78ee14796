//! A seat of the room and the bot that may play it: plain values the core, the lobby,
//! the bots and the persistence mapping all read.

use crate::{ConnId, Ms};
use parchis_bots::Bot;
use parchis_engine::Colour;
use parchis_protocol::BotLevel;
use std::sync::Mutex;

/// One seat of the room.
#[derive(Debug)]
pub struct Seat {
    /// Stable id within the room (1, 2, …).
    pub id: u64,
    /// Its colour.
    pub colour: Colour,
    /// Display name.
    pub name: String,
    /// SHA-256 hex of the session token; empty for bots.
    pub token_hash: String,
    /// Created the room (starts the game).
    pub creator: bool,
    /// Unix ms.
    pub joined_at_ms: Ms,
    /// The connection holding it.
    pub conn: Option<ConnId>,
    /// That connection came by a reattach (it continues one attached before, here or on
    /// an earlier owner), not by a join or resume here: a later reattach may replace it.
    pub reattached: bool,
    /// End of the disconnection grace period (unix ms, R-LEAVE).
    pub grace_until: Option<Ms>,
    /// Out of the game.
    pub abandoned: bool,
    /// A bot plays this seat (it has no connection, no grace period and no token).
    pub bot: Option<SeatBot>,
    /// The client seed chosen for the fair dice; `None`: the default.
    pub client_seed: Option<String>,
    /// Put back with a lobby rebuilt from the store, whose event seq started again at 0:
    /// the seqs its client saw belong to the room before, so its next `resume` gets a
    /// snapshot whatever `last_seq` it names, and a reattach is refused (the client
    /// resumes). Cleared by that resume.
    pub stale_seqs: bool,
    /// The account of the logged-in player holding it (its name is their username);
    /// `None` for a guest or a bot.
    pub account: Option<uuid::Uuid>,
    /// The account's display rating in the room's pool when it took the seat (issue 26):
    /// `None` for a guest, a bot or an account with no game in that pool. A room restored
    /// from the store reads it again ([`crate::Core::set_account_ratings`]).
    pub rating: Option<i64>,
}

/// A bot playing a seat.
pub struct SeatBot {
    /// Its level.
    pub level: BotLevel,
    /// `None` while it thinks off-thread. In a mutex only to make the room `Sync` (it is
    /// reached through `&mut`, never locked).
    brain: Mutex<Option<Box<dyn Bot + Send>>>,
}

impl std::fmt::Debug for SeatBot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeatBot")
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

impl SeatBot {
    /// A bot of `level` seeded with `seed`.
    pub fn new(level: BotLevel, seed: u64) -> SeatBot {
        SeatBot {
            level,
            brain: Mutex::new(Some(bot_kind(level).build(seed))),
        }
    }

    pub(crate) fn brain(&mut self) -> &mut Option<Box<dyn Bot + Send>> {
        self.brain.get_mut().unwrap_or_else(|e| e.into_inner())
    }
}

/// The bots crate's level for a wire level.
pub fn bot_kind(level: BotLevel) -> parchis_bots::BotLevel {
    match level {
        BotLevel::Random => parchis_bots::BotLevel::Random,
        BotLevel::Greedy => parchis_bots::BotLevel::Greedy,
        BotLevel::Expectimax => parchis_bots::BotLevel::Expectimax,
    }
}
