//! Bodies of the stored-games API: `GET /api/games` (paged list), `GET /api/games/{id}`,
//! `GET /api/games/{id}/replay`.

use crate::http::{BoardView, BotLevel};
use crate::messages::RoomEvent;
use parchis_engine::{Action, BoardState, Colour, Event, Location, RuleSet};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why a stored game ended (`games.reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GameEndReason {
    /// A colour (or team) brought its pieces to the goal (R-WIN).
    Completed,
    /// Every other player abandoned (R-LEAVE): the last one wins by forfeit.
    Abandoned,
    /// An administrator closed the room; no winner.
    ClosedByAdmin,
}

impl GameEndReason {
    /// The stored text: `completed`, `abandoned`, `closed_by_admin`.
    pub fn as_str(self) -> &'static str {
        match self {
            GameEndReason::Completed => "completed",
            GameEndReason::Abandoned => "abandoned",
            GameEndReason::ClosedByAdmin => "closed_by_admin",
        }
    }

    /// The reason stored as `text`, if it is one of the three.
    pub fn parse(text: &str) -> Option<GameEndReason> {
        [
            GameEndReason::Completed,
            GameEndReason::Abandoned,
            GameEndReason::ClosedByAdmin,
        ]
        .into_iter()
        .find(|r| r.as_str() == text)
    }
}

/// How a finished game's result came about (`result.reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResultReason {
    /// Four pieces in the goal (R-WIN).
    Goal,
    /// Every other player abandoned (R-LEAVE, D-5).
    Forfeit,
    /// Closed by an administrator: no winner.
    ClosedByAdmin,
}

/// The stored result of a finished game: the engine's outcome, or no winner when an
/// administrator closed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GameResult {
    /// The winning colour; `null` for a closed game.
    #[serde(default)]
    pub winner: Option<Colour>,
    /// How it ended.
    pub reason: ResultReason,
    /// The winner's partner, in pair play.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner: Option<Colour>,
}

/// Summary of one stored game (`GET /api/games`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GameSummary {
    /// Game id (UUID v7: ordered by creation).
    pub id: String,
    /// Room code.
    pub room: String,
    /// The rule set's canonical name (e.g. `classic+murcia-12`).
    pub preset: String,
    /// When the game started (unix ms).
    pub created_at_ms: i64,
    /// When it finished (unix ms); `null` while it runs.
    pub finished_at_ms: Option<i64>,
    /// The result; `null` while it runs.
    pub result: Option<GameResult>,
    /// Why it ended; `null` while it runs.
    pub reason: Option<GameEndReason>,
    /// Absolute deadline of the running turn clock (unix ms), if any.
    pub deadline_ms: Option<i64>,
    /// The fair dice (`docs/FAIR_DICE.md`): scheme, mode, commitment, client seeds,
    /// dice per throw, and the server seed once the game is over; `null` for games
    /// stored before fair dice.
    #[serde(default)]
    pub dice: Option<crate::dice::GameDice>,
}

/// Body of `GET /api/games`: one page, newest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GameList {
    /// The games of this page, newest first (`created_at_ms`, then `id`, descending).
    pub games: Vec<GameSummary>,
    /// Pass as `cursor` to get the next (older) page; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// One seated player of a stored game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GamePlayer {
    /// The seat's colour.
    pub colour: Colour,
    /// Display name.
    pub name: String,
    /// Whether this player created the room.
    pub creator: bool,
    /// The bot playing this seat (its level), `null` for a person.
    pub bot: Option<BotLevel>,
}

/// One stored event of a game, with its room seq.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StoredEvent {
    /// The event's seq in the room's event stream.
    pub seq: i64,
    /// When it happened (unix ms).
    pub at_ms: i64,
    /// The event exactly as sent on the WebSocket.
    pub event: RoomEvent,
}

/// Body of `GET /api/games/{id}`: the game with its players and every event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GameDetail {
    /// The game.
    #[serde(flatten)]
    pub game: GameSummary,
    /// Seated players, in joining order.
    pub players: Vec<GamePlayer>,
    /// Every stored event, by ascending seq.
    pub events: Vec<StoredEvent>,
}

/// A piece's move in a step, for the viewer's last-move marks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StepMove {
    /// The piece's colour.
    pub colour: Colour,
    /// Where it stood.
    pub from: Location,
    /// Where it landed.
    pub to: Location,
    /// Ring squares where it captured.
    pub captures: Vec<Location>,
}

/// One step of a replay: an action and what it did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayStep {
    /// Who acted; `null` for step 0 (the start).
    pub colour: Option<Colour>,
    /// The action; `null` for step 0.
    pub action: Option<Action>,
    /// The dice thrown, on a roll step.
    pub dice: Option<Vec<u8>>,
    /// The engine events the action caused, in order (the log of the step).
    pub log: Vec<Event>,
    /// The pieces it moved.
    pub moves: Vec<StepMove>,
    /// The game state after the step, without the rule set (which is the replay's
    /// `rules`, the same on every step): `Position::from_state(rules, position)` is the
    /// whole position.
    pub position: BoardState,
}

/// Body of `GET /api/games/{id}/replay`: a stored game step by step, for a replay viewer
/// that draws positions and knows no rules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GameReplay {
    /// The game.
    pub game: GameSummary,
    /// Its players (colour, name, creator, bot level).
    pub players: Vec<GamePlayer>,
    /// The game's rule set (from its `game_started` position), once for every step.
    pub rules: RuleSet,
    /// The board's marked squares, for drawing.
    pub board: BoardView,
    /// Step 0 is the start; then one step per action.
    pub steps: Vec<ReplayStep>,
}

/// `result` filter of `GET /api/games`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResultFilter {
    /// Games still running.
    Running,
    /// Any finished game.
    Finished,
    /// Finished with `reason` `completed`.
    Completed,
    /// Finished with `reason` `abandoned`.
    Abandoned,
    /// Finished with `reason` `closed_by_admin`.
    ClosedByAdmin,
}

/// Query of `GET /api/games`; every field optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GamesQuery {
    /// Only this room's games (room codes are read case-insensitively, `O`→`0`…).
    pub room: Option<String>,
    /// Only games of this rule set (any spelling of its name; compared canonically).
    pub rules: Option<String>,
    /// Only games with this result.
    pub result: Option<ResultFilter>,
    /// Only games started at or after this time (unix ms).
    pub since: Option<i64>,
    /// Page size, 1 to 100 (default 20).
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// Default page size of `GET /api/games`.
pub const GAMES_PAGE_DEFAULT: u32 = 20;
/// Largest page size of `GET /api/games`.
pub const GAMES_PAGE_MAX: u32 = 100;
