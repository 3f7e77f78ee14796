//! Championships (issue 27, `docs/TOURNAMENTS.md`): the request bodies of the tournament
//! routes and the answer of `POST /api/tournaments`. The tournament's settings and its
//! view (bracket or standings) are the director core's own types
//! (`parchis_tournament::Settings`, `TournamentView`); their schemas are
//! `proto/schema/tournament_settings.json` and `tournament_view.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `201` answer of `POST /api/tournaments`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TournamentCreated {
    /// The tournament's id (a UUID v7).
    pub id: String,
}

/// Body of `POST /api/tournaments/{id}/entries`: the logged-in player registers, with a
/// partner in a pairs tournament (who must confirm), alone otherwise.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterEntry {
    /// The partner's username (pairs only; any spelling the username key folds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner: Option<String>,
    /// The team's shown name, 1 to 60 characters (pairs only; default "A & B").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_name: Option<String>,
}

/// Body of `POST /api/tournaments/{id}/referees`: the organiser names a referee.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NameReferee {
    /// The referee's username.
    pub username: String,
}

/// Body of `POST /api/tournaments/{id}/matches/{match}/referee`: a referee's decision on
/// a match (stored and listed in the tournament's `referee_actions`). Reasons are 1 to
/// 300 characters, shown to everyone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum RefereeCommand {
    /// Stop the match's clock (the game's turn clock, or the no-show clock of its room).
    Pause,
    /// Run it again.
    Resume,
    /// Decide the match: `winner` goes through (in an individual knockout with several
    /// places through, `places` lists the entrants best first instead).
    Award {
        /// The winning entrant's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        winner: Option<u32>,
        /// The entrants best first (instead of `winner`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        places: Vec<u32>,
        /// Why.
        reason: String,
    },
    /// Disqualify an entrant of the match: its opponents advance.
    Disqualify {
        /// The entrant's id.
        entrant: u32,
        /// Why.
        reason: String,
    },
    /// Drop the match's room and game and play it again in a new room.
    Replay {
        /// Why.
        reason: String,
    },
}
