//! The stored events of a tournament. Its state is a pure fold of them
//! ([`crate::state::Tournament::from_entries`]): a restarted director replays its log
//! and carries on. Every decision that took randomness or a search (the seeding, each
//! round's tables) is stored as its result, so a replay never depends on how the draw is
//! computed.

use crate::ids::{EntrantId, MatchId, Ms, Player};
use crate::seating::Seat;
use crate::settings::Settings;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The format version of stored [`Entry`]s; the fold refuses any other.
pub const EVENT_FORMAT: u16 = 1;

/// One stored event with its format version and time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// [`EVENT_FORMAT`] when written.
    pub v: u16,
    /// When it was decided (unix ms).
    pub at: Ms,
    /// What happened.
    pub event: Event,
}

impl Entry {
    /// `event` at `at`, in the current format.
    pub fn new(at: Ms, event: Event) -> Entry {
        Entry {
            v: EVENT_FORMAT,
            at,
            event,
        }
    }
}

/// A table of a drawn round, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DrawnTable {
    /// The match's id.
    pub id: MatchId,
    /// Position in the round (bracket order in a knockout).
    pub table: u32,
    /// Its entrants, best seed (knockout) or best ranked (swiss) first.
    pub entrants: Vec<EntrantId>,
    /// The reserved seats ([`crate::seating::seats`]); empty for a bye.
    pub seats: Vec<Seat>,
    /// No game: its entrants go through (too few to play, or a swiss bye).
    pub bye: bool,
}

/// How a match was decided.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum How {
    /// Its game was played to the end.
    Played {
        /// The game.
        game_id: Uuid,
    },
    /// Too few entrants were left to play (no-shows, disqualifications): those left go
    /// through.
    Forfeit,
    /// A referee awarded it.
    Awarded {
        /// The referee.
        by: Uuid,
        /// Shown to everyone.
        reason: String,
    },
}

/// Something that happened to a tournament.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The tournament was created (always the first event).
    Created {
        /// Its id.
        id: Uuid,
        /// The organiser's account.
        organiser: Uuid,
        /// The organiser's username (absent from logs stored before names were kept).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        organiser_name: String,
        /// Its settings (valid at creation).
        settings: Settings,
        /// The seed of its randomness (the seeding's tie-breaks), drawn by the caller.
        seed: [u8; 32],
    },
    /// The organiser named a referee.
    RefereeNamed {
        /// The referee's account.
        account: Uuid,
        /// The referee's username (absent from logs stored before names were kept).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        name: String,
    },
    /// An entrant registered; a team waits for its partner's confirmation.
    Registered {
        /// Its id.
        entrant: EntrantId,
        /// Shown name.
        name: String,
        /// Its players (the registrant first).
        players: Vec<Player>,
        /// Complete (individual, or a team whose partner confirmed).
        confirmed: bool,
    },
    /// The partner of a team confirmed.
    PartnerConfirmed {
        /// The team.
        entrant: EntrantId,
    },
    /// An entrant withdrew before the close (either partner may).
    Withdrawn {
        /// The entrant.
        entrant: EntrantId,
    },
    /// Registration closed (deadline or organiser) and the seeding was made.
    Closed {
        /// The organiser, when closed early by hand.
        by: Option<Uuid>,
        /// Teams still waiting for their partner, left out of the draw.
        dropped: Vec<EntrantId>,
        /// Bot entrants added by `bot_fill`: id, name and players.
        bots: Vec<(EntrantId, String, Vec<Player>)>,
        /// Every drawn entrant, best seed first.
        seeds: Vec<EntrantId>,
        /// Rounds to play (knockout: to the final; swiss: as set, or fewer for few
        /// entrants).
        rounds: u32,
    },
    /// Registration closed with fewer than two entrants: nothing is played.
    Cancelled {
        /// Why, for the page.
        reason: String,
    },
    /// A round's tables were drawn.
    RoundDrawn {
        /// The round (1-based).
        round: u32,
        /// Its tables.
        tables: Vec<DrawnTable>,
    },
    /// A round started: its matches' rooms are to be created.
    RoundStarted {
        /// The round.
        round: u32,
    },
    /// A match's room exists (the driver created it); the no-show clock runs.
    RoomOpened {
        /// The match.
        id: MatchId,
        /// Its room code.
        room: String,
    },
    /// A match's room was reported open when the match no longer wanted it (decided or
    /// replayed while its creation was in flight): it is to be closed.
    RoomUnwanted {
        /// Its room code.
        room: String,
    },
    /// A superseded room (of a match replayed, awarded or forfeited) was closed.
    RoomClosed {
        /// Its room code.
        room: String,
    },
    /// A player took its reserved seat.
    Seated {
        /// The match.
        id: MatchId,
        /// The player's account.
        account: Uuid,
    },
    /// Entrants not seated when the no-show time ran out forfeit the match.
    NoShow {
        /// The match.
        id: MatchId,
        /// The absent entrants.
        absent: Vec<EntrantId>,
    },
    /// A match's game started.
    GameStarted {
        /// The match.
        id: MatchId,
        /// The game.
        game_id: Uuid,
    },
    /// A match was decided.
    Decided {
        /// The match.
        id: MatchId,
        /// Its entrants still in it, best first (the first is the winner); absent and
        /// disqualified entrants are not listed.
        places: Vec<EntrantId>,
        /// How.
        how: How,
    },
    /// A referee paused a match's clock.
    Paused {
        /// The match.
        id: MatchId,
        /// The referee.
        by: Uuid,
    },
    /// A referee resumed a match's clock.
    Resumed {
        /// The match.
        id: MatchId,
        /// The referee.
        by: Uuid,
    },
    /// A referee disqualified an entrant (seed 004: "el equipo que reciba ayuda del
    /// público podrá ser DESCALIFICADO").
    Disqualified {
        /// The entrant.
        entrant: EntrantId,
        /// The referee.
        by: Uuid,
        /// Shown to everyone.
        reason: String,
    },
    /// A referee ordered a match replayed: a new room, a new game.
    ReplayOrdered {
        /// The match.
        id: MatchId,
        /// The referee.
        by: Uuid,
        /// Shown to everyone.
        reason: String,
    },
    /// The last round was decided.
    Finished {
        /// The champion (none when nobody was left to win).
        champion: Option<EntrantId>,
    },
}
