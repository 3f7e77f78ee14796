//! HTTP bodies (`/api/rooms`) and the room views shared with the WebSocket protocol.

use crate::error::ErrorCode;
use parchis_engine::{Colour, Outcome, Position, RuleSet};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn default_preset() -> String {
    "online".to_owned()
}
fn default_seats() -> u8 {
    4
}
fn default_clock() -> u32 {
    15
}
fn default_grace() -> u32 {
    60
}
fn default_timeouts() -> u8 {
    3
}
fn default_true() -> bool {
    true
}
fn default_bot_think() -> u32 {
    600
}
fn default_max_spectators() -> u32 {
    DEFAULT_MAX_SPECTATORS
}

/// Spectators a room allows unless its settings say otherwise.
pub const DEFAULT_MAX_SPECTATORS: u32 = 200;
/// The most spectators any room may allow (`max_spectators`).
pub const MAX_SPECTATORS: u32 = 1000;

/// A computer player's level (issue 7; the bots of `crates/bots`), weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BotLevel {
    /// A uniform legal action.
    Random,
    /// The best action one step ahead under a static evaluation (captures, safety,
    /// progress, blockades).
    Greedy,
    /// Searches its own throw and averages over the next player's throws.
    Expectimax,
}

/// What happens to the seat of a player who abandons during the game (R-LEAVE).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnAbandon {
    /// The reference behaviour (R-LEAVE): the player forfeits; their pieces leave the
    /// board (`abandoned` event).
    #[default]
    Forfeit,
    /// A bot of the room's level (`bots`, greedy if unset) takes over the seat and plays
    /// on (`bot_took_over` event).
    Bot,
}

/// Settings of a room, chosen at creation. Every field has a default, so `{}` is a valid
/// body for `POST /api/rooms`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoomSettings {
    /// The rule set, as a name accepted by [`RuleSet::from_name`]: a preset (`online`,
    /// `classic`, `pairs`, `parcheesi`, `parcheesi-strict`), for `classic` followed by any
    /// `+variant` (see [`RuleSet::VARIANTS`]), e.g. `classic+murcia-12+two-out`; the other
    /// presets take no variant (D-33). The server answers with the canonical name
    /// ([`RuleSet::name`]).
    #[serde(default = "default_preset")]
    pub preset: String,
    /// Number of seats, 2 to 4, within the rule set's player range (`pairs`: 4).
    #[serde(default = "default_seats")]
    #[schemars(range(min = 2, max = 4))]
    pub seats: u8,
    /// Seconds to roll and play each throw (R-CLOCK, D-12), 1 to 600.
    #[serde(default = "default_clock")]
    #[schemars(range(min = 1, max = 600))]
    pub turn_clock_secs: u32,
    /// Seconds a player may stay disconnected before abandoning (R-LEAVE), 1 to 3600.
    #[serde(default = "default_grace")]
    #[schemars(range(min = 1, max = 3600))]
    pub disconnect_grace_secs: u32,
    /// Consecutive timeouts after which a player has abandoned (R-LEAVE), 1 to 10.
    #[serde(default = "default_timeouts")]
    #[schemars(range(min = 1, max = 10))]
    pub timeouts_to_abandon: u8,
    /// Listed by `GET /api/rooms` while not started (and, if spectators may watch, by
    /// `GET /api/rooms?status=playing` while its game runs).
    #[serde(default = "default_true")]
    pub public: bool,
    /// Spectators may watch.
    #[serde(default = "default_true")]
    pub spectators: bool,
    /// Play against the computer: when the creator starts, every empty seat is filled by
    /// a bot of this level. `null` or absent: no bots (at least two people are needed).
    #[serde(default)]
    pub bots: Option<BotLevel>,
    /// What happens to an abandoned seat: `forfeit` (default, R-LEAVE) or `bot`.
    #[serde(default)]
    pub on_abandon: OnAbandon,
    /// How long a bot waits before each roll and move, in ms, 0 to 10000 (default 600),
    /// and less than the turn clock: bots act well within their clock.
    #[serde(default = "default_bot_think")]
    #[schemars(range(max = 10000))]
    pub bot_think_ms: u32,
    /// Spectators watching at once, 1 to 1000 (default 200); a `watch` beyond gets
    /// `too_many_spectators`.
    #[serde(default = "default_max_spectators")]
    #[schemars(range(min = 1, max = 1000))]
    pub max_spectators: u32,
    /// Spectators see the game this many throws behind (issue 27, "no help from the
    /// public"), 0 to 20 (default 0: live). On every channel a spectator can look at (the
    /// WebSocket stream, the room view, the games API and the export of a running game)
    /// an event is shown once `spectator_delay_throws` more throws have been made after
    /// it; the events before the game's first throw at once; everything at the game's
    /// end. Players of the game see everything at once.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub spectator_delay_throws: u8,
    /// A rated game (issue 26): only logged-in players may take a seat, at most one seat
    /// per account; no bots (`bots` must be absent and `on_abandon` `forfeit`). When the
    /// game ends (finished, or ended by abandonment) every seated player's rating in the
    /// rule set's pool is updated from the places (D-40). Default `false` (casual).
    #[serde(default, skip_serializing_if = "is_false")]
    pub rated: bool,
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The longest spectator delay a room takes, in throws.
pub const MAX_SPECTATOR_DELAY_THROWS: u8 = 20;

impl Default for RoomSettings {
    fn default() -> Self {
        RoomSettings {
            preset: default_preset(),
            seats: default_seats(),
            turn_clock_secs: default_clock(),
            disconnect_grace_secs: default_grace(),
            timeouts_to_abandon: default_timeouts(),
            public: true,
            spectators: true,
            bots: None,
            on_abandon: OnAbandon::Forfeit,
            bot_think_ms: default_bot_think(),
            max_spectators: default_max_spectators(),
            spectator_delay_throws: 0,
            rated: false,
        }
    }
}

impl RoomSettings {
    /// Checks the ranges; the error text is for the client.
    pub fn validate(&self) -> Result<(), String> {
        if !(2..=4).contains(&self.seats) {
            return Err(format!("seats must be 2 to 4, got {}", self.seats));
        }
        if !(1..=600).contains(&self.turn_clock_secs) {
            return Err(format!(
                "turn_clock_secs must be 1 to 600, got {}",
                self.turn_clock_secs
            ));
        }
        if !(1..=3600).contains(&self.disconnect_grace_secs) {
            return Err(format!(
                "disconnect_grace_secs must be 1 to 3600, got {}",
                self.disconnect_grace_secs
            ));
        }
        if !(1..=10).contains(&self.timeouts_to_abandon) {
            return Err(format!(
                "timeouts_to_abandon must be 1 to 10, got {}",
                self.timeouts_to_abandon
            ));
        }
        if self.bot_think_ms > 10_000
            || u64::from(self.bot_think_ms) >= u64::from(self.turn_clock_secs) * 1000
        {
            return Err(format!(
                "bot_think_ms must be 0 to 10000 and shorter than the turn clock, got {}",
                self.bot_think_ms
            ));
        }
        if !(1..=MAX_SPECTATORS).contains(&self.max_spectators) {
            return Err(format!(
                "max_spectators must be 1 to {MAX_SPECTATORS}, got {}",
                self.max_spectators
            ));
        }
        if self.spectator_delay_throws > MAX_SPECTATOR_DELAY_THROWS {
            return Err(format!(
                "spectator_delay_throws must be 0 to {MAX_SPECTATOR_DELAY_THROWS}, got {}",
                self.spectator_delay_throws
            ));
        }
        if self.rated && self.bots.is_some() {
            return Err("a rated room takes no bots: leave bots unset".to_string());
        }
        if self.rated && self.on_abandon == OnAbandon::Bot {
            return Err("a rated room takes no bots: on_abandon must be forfeit".to_string());
        }
        let rules = self.rules()?;
        if self.seats < rules.min_players || self.seats > rules.max_players {
            return Err(format!(
                "{} plays with {} to {} players; seats must be in that range, got {}",
                rules.name(),
                rules.min_players,
                rules.max_players,
                self.seats
            ));
        }
        Ok(())
    }

    /// The rule set named by `preset`, validated; the error names the conflict (a variant
    /// on a preset it was not written for included, D-33). For a new room.
    pub fn rules(&self) -> Result<RuleSet, String> {
        RuleSet::from_name(self.preset.trim())
    }

    /// The rule set of settings read back from the store: as [`RoomSettings::rules`], but
    /// a room created before D-33 with a variant on another preset than `classic` still
    /// reads ([`RuleSet::from_stored_name`]).
    pub fn stored_rules(&self) -> Result<RuleSet, String> {
        RuleSet::from_stored_name(self.preset.trim())
    }
}

/// The teams of pair play (seed 004): yellow+red against blue+green.
pub const TEAMS: [[Colour; 2]; 2] = [[Colour::Yellow, Colour::Red], [Colour::Blue, Colour::Green]];

/// The team (index into [`TEAMS`]) of `colour`.
pub fn team_of(colour: Colour) -> u8 {
    match colour {
        Colour::Yellow | Colour::Red => 0,
        Colour::Blue | Colour::Green => 1,
    }
}

/// Body of `POST /api/rooms`: the room settings.
pub type CreateRoomRequest = RoomSettings;

/// Answer to `POST /api/rooms` (201 Created).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CreateRoomResponse {
    /// The room code: 10 characters of Crockford base32 (50 random bits).
    pub code: String,
    /// A URL to share with the other players.
    pub invite_url: String,
    /// The settings in force, defaults filled in.
    pub settings: RoomSettings,
}

/// Lifecycle of a room.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoomStatus {
    /// Players are joining; no game yet.
    #[default]
    Lobby,
    /// A game is running.
    Playing,
    /// The game is over.
    Finished,
}

/// One public room in `GET /api/rooms`: not yet started, or (with `?status=playing`) a
/// game in progress that spectators may watch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoomSummary {
    /// Room code.
    pub code: String,
    /// Lifecycle: `lobby` in the default list, `playing` in `?status=playing`.
    #[serde(default)]
    pub status: RoomStatus,
    /// The rule set's name (preset and variants, e.g. `classic+murcia-12`).
    pub preset: String,
    /// Seats in the room.
    pub seats: u8,
    /// Seats taken.
    pub taken: u8,
    /// Seats free.
    pub free: u8,
    /// Colours still free.
    pub free_colours: Vec<Colour>,
    /// Seconds since the room was created.
    pub age_secs: u64,
    /// Spectators watching.
    pub spectators: u32,
    /// Seconds to roll and play each throw (the room's clock, R-CLOCK).
    #[serde(default = "default_clock")]
    pub turn_clock_secs: u32,
    /// Spectators may watch the room.
    #[serde(default = "default_true")]
    pub spectators_allowed: bool,
    /// A rated room (issue 26): only logged-in players, ratings updated at the end.
    #[serde(default)]
    pub rated: bool,
    /// The seated players, in seat order (issue 26: the lobby shows who waits).
    #[serde(default)]
    pub players: Vec<ListedPlayer>,
}

/// A seated player as the room listing shows it ([`RoomSummary::players`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListedPlayer {
    /// The seat's colour.
    pub colour: Colour,
    /// The shown name (a logged-in player's is their username).
    pub name: String,
    /// The account's username, for a logged-in player; `null` for a guest or a bot.
    #[serde(default)]
    pub username: Option<String>,
    /// A bot plays the seat.
    #[serde(default)]
    pub bot: bool,
    /// The player's display rating in the room's pool, as in [`SeatView::rating`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<i64>,
}

/// Body of `GET /api/rooms` (and `GET /api/rooms?status=playing`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoomList {
    /// Public rooms in the lobby (or, with `?status=playing`, public games in progress
    /// open to spectators), oldest first.
    pub rooms: Vec<RoomSummary>,
}

/// A seated player, as everyone sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SeatView {
    /// The seat's colour.
    pub colour: Colour,
    /// Display name.
    pub name: String,
    /// This player created the room (starts the game, rolls first).
    pub creator: bool,
    /// A connection is attached to this seat.
    pub connected: bool,
    /// The player abandoned the game (R-LEAVE).
    pub abandoned: bool,
    /// Pair play only: the seat's team, 0 (yellow+red) or 1 (blue+green).
    #[serde(default)]
    pub team: Option<u8>,
    /// A bot plays this seat (filled at the start, or took over an abandoned seat):
    /// its level; `null` for a person.
    #[serde(default)]
    pub bot: Option<BotLevel>,
    /// The seat's connection dropped: unix ms at which it is given up unless its player
    /// comes back (as [`crate::AwaySeat::until_ms`]). Absent while connected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub away_until_ms: Option<i64>,
    /// A logged-in player's display rating in the room's pool (the rule set's name), as
    /// when they took the seat, read again when a game of the room ends and when the room
    /// is restored; absent for a guest, a bot or an account with no game in that pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<i64>,
}

/// The running or finished game of a room.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GameView {
    /// Game id (UUID).
    pub game_id: String,
    /// The whole game state (see `proto/POSITION.md`).
    pub position: Position,
    /// Absolute deadline of the current throw (unix ms), while the game runs.
    pub deadline_ms: Option<i64>,
    /// The result, once finished.
    pub outcome: Option<Outcome>,
}

/// One colour's square on the board ([`BoardView`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ColourSquare {
    /// The colour.
    pub colour: Colour,
    /// A ring square, 1..=68.
    pub square: u8,
}

/// The board's marked squares, for drawing it (reference §1), so clients copy no board
/// rules: the safe squares and each colour's exit square and last ring square (after
/// which it turns into its home column).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BoardView {
    /// Ring squares (1..=68) that are safe squares (R-SAFE), ascending.
    pub safe_squares: Vec<u8>,
    /// Each colour's exit square (R-EXIT-1), in board order.
    pub exit_squares: Vec<ColourSquare>,
    /// Each colour's last ring square before its home column, in board order.
    pub last_ring_squares: Vec<ColourSquare>,
}

impl Default for BoardView {
    /// The standard four-colour board of the engine ([`parchis_engine::is_safe`],
    /// [`Colour::exit_square`], [`Colour::last_ring_square`]).
    fn default() -> Self {
        let per = |f: fn(Colour) -> u8| {
            Colour::ALL
                .iter()
                .map(|&colour| ColourSquare {
                    colour,
                    square: f(colour),
                })
                .collect()
        };
        BoardView {
            safe_squares: (1..=parchis_engine::RING)
                .filter(|&n| parchis_engine::is_safe(n))
                .collect(),
            exit_squares: per(Colour::exit_square),
            last_ring_squares: per(Colour::last_ring_square),
        }
    }
}

/// A room's public state: `GET /api/rooms/{code}`, and the snapshot sent on joining.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoomView {
    /// Room code.
    pub code: String,
    /// Settings.
    pub settings: RoomSettings,
    /// The full rule set in force (every point of the rule matrix), named by
    /// `settings.preset`.
    pub rules: RuleSet,
    /// Pair play only: the teams, `[["yellow","red"],["blue","green"]]`; empty otherwise.
    #[serde(default)]
    pub teams: Vec<Vec<Colour>>,
    /// Lifecycle.
    pub status: RoomStatus,
    /// Seated players in joining order.
    pub seats: Vec<SeatView>,
    /// Spectators watching.
    pub spectators: u32,
    /// The room's latest event sequence number.
    pub seq: u64,
    /// Unix ms of creation.
    pub created_at_ms: i64,
    /// The game, once started.
    pub game: Option<GameView>,
    /// The board's marked squares, for drawing.
    #[serde(default)]
    pub board: BoardView,
    /// The fair dice (`docs/FAIR_DICE.md`): the commitment from the lobby on, the
    /// client seeds once the game has started, the server seed once it is over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dice: Option<crate::dice::DiceInfo>,
    /// Present only in a room whose seats are reserved for specific players (a quick
    /// pairing's room, a championship's match): nobody else can join it (no invite
    /// link), the colours are assigned (no colour change) and nobody starts it by hand.
    /// Absent in an ordinary room.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved: Option<ReservedView>,
}

/// The reservations of a room run by the server (`RoomView.reserved`):
/// `{"seats": [{"colour": "red", "name": "Hugo"}, …], "starts_when_seated": true}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReservedView {
    /// Every reserved seat, in board order (claimed or not; compare with
    /// `RoomView.seats` to see which are still waiting for their player).
    pub seats: Vec<ReservedSeat>,
    /// The game starts by itself once every reserved player has claimed their seat (a
    /// quick pairing's room, which is closed instead if the claim wait runs out);
    /// `false`: a tournament's director starts it.
    pub starts_when_seated: bool,
}

/// One reserved seat of [`ReservedView`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReservedSeat {
    /// The colour.
    pub colour: Colour,
    /// The name the seat will show (the reserved player's display name: a guest's chosen
    /// name, an account's username, an entrant's name, or a bot's).
    pub name: String,
    /// A bot takes this seat at the start (nobody claims it). Absent: `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bot: bool,
}

/// Body of every HTTP error answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HttpError {
    /// Stable error code.
    pub code: ErrorCode,
    /// Human-readable text.
    pub message: String,
}

/// Body of `GET /readyz`: `200` with `{"status":"ready"}`, or `503` with
/// `{"status":"unavailable","reason":"…"}` when the store does not answer a cheap query.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Readiness {
    /// `ready` or `unavailable`.
    pub status: ReadinessStatus,
    /// Why the server is not ready (absent when ready): the store's error, for operators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Whether the server can take traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadinessStatus {
    /// Every dependency answered.
    Ready,
    /// A dependency did not answer; see `reason`.
    Unavailable,
}
