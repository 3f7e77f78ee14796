//! WebSocket messages: [`ClientMessage`] (commands) and [`ServerMessage`] (replies and the
//! room's event stream), and the classifying parser [`parse_client_message`].
//!
//! Why one file of ~700 lines: it is the protocol's message catalogue, one documented
//! variant per message (`proto/README.md` follows the same order), plus its one parser.

use crate::dice::DiceInfo;
use crate::emote::{AwaySeat, Emote};
use crate::error::ErrorCode;
use crate::http::{BotLevel, RoomView};
use parchis_engine::{Action, ActionPreview, BoardState, Colour, Dice, Event, Location, Position};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a connection takes part in a room.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Holds a seat (colour) and plays.
    Player,
    /// Watches; can never act.
    Spectator,
}

/// A move the player to act chooses among the legal actions. Same JSON as the engine's
/// [`Action`] for these three kinds, so a client can send back an entry of
/// [`TurnInfo::legal`] as it is. Dice are never sent by clients: the server rolls them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Play {
    /// Bring a piece out of the nest (R-EXIT-1).
    Exit,
    /// Move `piece` (0..=3) by the unused die showing `die` (R-MOVE).
    Move {
        /// Piece index 0..=3.
        piece: u8,
        /// Value of the die played.
        die: u8,
        /// Pair play only: landing on a lone partner piece on a normal square, capture
        /// it (+20) rather than form a blockade. Omitted means false.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        capture: bool,
    },
    /// Take the pending bonus of `amount` squares with `piece` (R-BONUS).
    Bonus {
        /// Piece index 0..=3.
        piece: u8,
        /// 20 or 10: must equal the pending bonus.
        amount: u8,
        /// As for `move`: capture a lone partner piece (pair play).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        capture: bool,
    },
}

impl From<Play> for Action {
    fn from(p: Play) -> Action {
        match p {
            Play::Exit => Action::Exit,
            Play::Move {
                piece,
                die,
                capture,
            } => Action::Move {
                piece,
                die,
                capture,
            },
            Play::Bonus {
                piece,
                amount,
                capture,
            } => Action::Bonus {
                piece,
                amount,
                capture,
            },
        }
    }
}

/// A command from a client. JSON object tagged by `"type"`.
///
/// `req` is a request id chosen by the client, unique per connection, echoed in the reply
/// (`ok` or `error`). `seq` is the latest room event sequence number the client has seen: a
/// command whose `seq` is not the room's latest is refused as `stale_seq`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    /// Take a seat in a room that has not started. Answered by `welcome` with a new token.
    Join {
        /// Request id.
        req: u64,
        /// Room code.
        room: String,
        /// Display name, 1 to 24 characters.
        name: String,
        /// The colour wanted; `null` or absent: the first free colour in board order.
        #[serde(default)]
        colour: Option<Colour>,
        /// This player's client seed for the fair dice (`docs/FAIR_DICE.md`): 1 to 64
        /// characters from `A-Z a-z 0-9 _ -`. Absent: the colour's name, unless a
        /// `client_seed` command sets one before the start.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_seed: Option<String>,
    },
    /// Watch a room as a spectator. Answered by `welcome` with a snapshot.
    Watch {
        /// Request id.
        req: u64,
        /// Room code.
        room: String,
    },
    /// Come back to a seat with the token from `welcome`, after `last_seq`. Answered by
    /// `welcome`, then the missed events in order (or a snapshot when they are too old).
    /// Takes over any other connection on that seat (closed 4000).
    ///
    /// Without `token`, on a logged-in connection (session cookie or bearer token): the
    /// seat this account holds in the room, from any device (issue 26). A guest without a
    /// token is refused `bad_token`, as is an account that holds no seat there.
    Resume {
        /// Request id.
        req: u64,
        /// Room code.
        room: String,
        /// The session token issued by `welcome`; absent: the logged-in account's seat.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
        /// The last event sequence number this client saw.
        last_seq: u64,
    },
    /// Take the seat reserved for you in a room whose seats are reserved (a quick
    /// pairing's room, a championship's match): with `ticket`, the seat of that quick
    /// pairing ticket (`POST /api/pairing`, guests and accounts alike); without, the seat
    /// reserved for the connection's logged-in account. Answered like `join`: `welcome`
    /// with a new seat token. Refused `seat_reserved` (no seat reserved for you there),
    /// `colour_taken` (claimed already: `resume` it), `game_started`, or `bad_request`
    /// (the room reserves no seats; a bad `client_seed`).
    Claim {
        /// Request id.
        req: u64,
        /// Room code.
        room: String,
        /// The quick-pairing ticket the seat was reserved for (1 to 64 characters).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ticket: Option<String>,
        /// This player's client seed for the fair dice, as in `join`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_seed: Option<String>,
    },
    /// Change colour before the start.
    ChooseColour {
        /// Request id.
        req: u64,
        /// Room code.
        room: String,
        /// Latest event seq seen.
        seq: u64,
        /// The colour wanted.
        colour: Colour,
    },
    /// Set or change your client seed for the fair dice before the start
    /// (`docs/FAIR_DICE.md`); answered by `ok`. Refused with `game_started` after it.
    ClientSeed {
        /// Request id.
        req: u64,
        /// Room code.
        room: String,
        /// Latest event seq seen.
        seq: u64,
        /// 1 to 64 characters from `A-Z a-z 0-9 _ -`.
        seed: String,
    },
    /// Start the game (creator only, at least two players).
    Start {
        /// Request id.
        req: u64,
        /// Room code.
        room: String,
        /// Latest event seq seen.
        seq: u64,
    },
    /// Ask the server to throw the dice for you (your turn, awaiting a roll).
    Roll {
        /// Request id.
        req: u64,
        /// Room code.
        room: String,
        /// Latest event seq seen.
        seq: u64,
    },
    /// Play one of the legal actions of the current throw.
    Play {
        /// Request id.
        req: u64,
        /// Room code.
        room: String,
        /// Latest event seq seen.
        seq: u64,
        /// The action.
        action: Play,
    },
    /// Leave the room: before the start the seat is freed; during the game this abandons
    /// (R-LEAVE). A spectator just stops watching. Never refused as stale.
    Leave {
        /// Request id.
        req: u64,
        /// Room code.
        room: String,
        /// Latest event seq seen (not checked).
        #[serde(default)]
        seq: u64,
    },
    /// After the game: ask for a rematch with the same seats and settings. It starts when
    /// every player still in the room has asked (bots always agree): `rematch`, then a
    /// new `game_started`. Never refused as stale.
    Rematch {
        /// Request id.
        req: u64,
        /// Room code.
        room: String,
        /// Latest event seq seen (not checked).
        #[serde(default)]
        seq: u64,
    },
    /// Send a quick emote to the room (seated players only; spectators are refused
    /// `spectator_cannot_act`, in every room). Answered by `ok`; everyone in the room
    /// (spectators too) gets [`ServerMessage::Emote`]. At most 3 per seat in any 10 s
    /// (`rate_limited`). Not part of the event stream, never stored, never checked
    /// against a `seq`.
    Emote {
        /// Request id.
        req: u64,
        /// Room code.
        room: String,
        /// Which emote, from the fixed list.
        emote: Emote,
    },
    /// Liveness check; answered by `pong`.
    Ping {
        /// Request id.
        req: u64,
    },
}

impl ClientMessage {
    /// The request id.
    pub fn req(&self) -> u64 {
        match self {
            ClientMessage::Join { req, .. }
            | ClientMessage::Watch { req, .. }
            | ClientMessage::Resume { req, .. }
            | ClientMessage::Claim { req, .. }
            | ClientMessage::ChooseColour { req, .. }
            | ClientMessage::ClientSeed { req, .. }
            | ClientMessage::Start { req, .. }
            | ClientMessage::Roll { req, .. }
            | ClientMessage::Play { req, .. }
            | ClientMessage::Leave { req, .. }
            | ClientMessage::Rematch { req, .. }
            | ClientMessage::Emote { req, .. }
            | ClientMessage::Ping { req } => *req,
        }
    }

    /// The room the command is for, if any.
    pub fn room(&self) -> Option<&str> {
        match self {
            ClientMessage::Join { room, .. }
            | ClientMessage::Watch { room, .. }
            | ClientMessage::Resume { room, .. }
            | ClientMessage::Claim { room, .. }
            | ClientMessage::ChooseColour { room, .. }
            | ClientMessage::ClientSeed { room, .. }
            | ClientMessage::Start { room, .. }
            | ClientMessage::Roll { room, .. }
            | ClientMessage::Play { room, .. }
            | ClientMessage::Leave { room, .. }
            | ClientMessage::Rematch { room, .. }
            | ClientMessage::Emote { room, .. } => Some(room),
            ClientMessage::Ping { .. } => None,
        }
    }

    /// The `type` strings of every client message.
    pub const TYPES: [&'static str; 13] = [
        "join",
        "watch",
        "resume",
        "claim",
        "choose_colour",
        "client_seed",
        "start",
        "roll",
        "play",
        "leave",
        "rematch",
        "emote",
        "ping",
    ];
}

/// Why a player abandoned (R-LEAVE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AbandonReason {
    /// Sent `leave`.
    Left,
    /// Stayed disconnected longer than the grace period.
    Disconnected,
    /// Timed out the configured number of turns in a row.
    Timeouts,
    /// Expelled by the tournament's referee (disqualified, issue 27): the seat forfeits;
    /// no bot takes it over.
    Disqualified,
}

/// One entry of a room's event stream. Every entry has its own `seq` in
/// [`ServerMessage::Event`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RoomEvent {
    /// A player took a seat.
    PlayerJoined {
        /// The seat.
        colour: Colour,
        /// Display name.
        name: String,
        /// The player is the creator.
        creator: bool,
        /// A bot took the seat (filled at the start): its level. Absent for a person.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bot: Option<BotLevel>,
    },
    /// A player changed colour before the start.
    ColourChanged {
        /// Old colour.
        from: Colour,
        /// New colour.
        to: Colour,
    },
    /// A player left before the start: the seat is free.
    PlayerLeft {
        /// The freed colour.
        colour: Colour,
    },
    /// The creator role passed to another player (the creator left).
    CreatorChanged {
        /// The new creator.
        colour: Colour,
    },
    /// One round of the opening roll that decides who plays first (R-FIRST), for rule
    /// sets whose first player is not the creator: each colour in `rolls` threw the rule
    /// set's dice (the value is their total). A tie for the best value leaves `first`
    /// null and the tied colours roll again in a further `opening_roll`. Sent just before
    /// `game_started`.
    OpeningRoll {
        /// Each rolling colour's value, in seat order.
        rolls: Vec<OpeningRollEntry>,
        /// The colour that plays first, once decided; null on a tie.
        first: Option<Colour>,
    },
    /// The game started; `first` rolls first (R-FIRST): the creator (`online`) or the
    /// winner of the opening roll.
    GameStarted {
        /// Game id (UUID).
        game_id: String,
        /// Who rolls first.
        first: Colour,
        /// The initial state.
        position: Position,
        /// The fair dice (`docs/FAIR_DICE.md`): scheme, mode, the commitment to the
        /// server seed and every seat's client seed, fixed from now on. Absent only in
        /// games stored before fair dice existed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dice: Option<Box<DiceInfo>>,
    },
    /// A new throw's clock (R-CLOCK, D-12): `colour` must roll and play before
    /// `deadline_ms` (absolute server time, unix ms).
    Turn {
        /// Who acts.
        colour: Colour,
        /// Absolute deadline, unix ms.
        deadline_ms: i64,
    },
    /// A player abandoned (R-LEAVE); the engine events follow.
    Abandoned {
        /// Who.
        colour: Colour,
        /// Why.
        reason: AbandonReason,
    },
    /// A player abandoned (R-LEAVE) in a room with `on_abandon: bot`: instead of
    /// forfeiting, a bot of `level` now plays the seat. The old session token no longer
    /// resumes it.
    BotTookOver {
        /// The seat.
        colour: Colour,
        /// The bot's level.
        level: BotLevel,
        /// Why the player abandoned.
        reason: AbandonReason,
    },
    /// The referee stopped the turn clock of `colour` (a tournament game): `remaining_ms`
    /// of its throw's clock are kept; nobody may roll or play (`clock_paused`) until
    /// `clock_resumed`. Stored with the game, so a restart keeps the pause.
    ClockPaused {
        /// Whose clock stopped (the player to act).
        colour: Colour,
        /// What was left of the throw's clock (ms).
        remaining_ms: i64,
    },
    /// The referee ran the clock again: `colour` has until `deadline_ms` (now plus what
    /// was left at the pause); a `turn` event with the same deadline follows.
    ClockResumed {
        /// Whose clock runs.
        colour: Colour,
        /// The new absolute deadline, unix ms.
        deadline_ms: i64,
    },
    /// After the game, `colour` asked for a rematch ([`ClientMessage::Rematch`]).
    RematchWanted {
        /// Who asked.
        colour: Colour,
    },
    /// Every player still in the room agreed: a new game with the same seats and settings
    /// starts (its `opening_roll`s and `game_started` follow). Seats that had abandoned
    /// are freed first (`player_left`).
    Rematch,
    /// An engine event (dice rolled, piece moved, timed out, game won…).
    Game {
        /// The engine event.
        event: Event,
        /// For `dice_rolled`: the throw's number in the game (`docs/FAIR_DICE.md`),
        /// opening rolls included, counted from 0. Absent for other events.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        throw: Option<u64>,
    },
    /// The game is over (whatever ended it): the server seed is revealed, so anyone can
    /// check every throw against the commitment of `game_started` (`docs/FAIR_DICE.md`).
    DiceRevealed {
        /// The server seed, 64 lower-case hex digits.
        server_seed: String,
    },
}

/// One colour's value in an [`RoomEvent::OpeningRoll`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OpeningRollEntry {
    /// Who rolled.
    pub colour: Colour,
    /// The total of the dice thrown (1–6 with one die, 2–12 with two).
    pub value: u8,
    /// The throw's number in the game (`docs/FAIR_DICE.md`): the opening roll's throws
    /// come first, from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throw: Option<u64>,
    /// The dice thrown (their total is `value`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dice: Vec<u8>,
}

/// What the player to act must do now, sent to that player only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TurnInfo {
    /// Room code.
    pub room: String,
    /// The room's latest event seq: base your next command on it.
    pub seq: u64,
    /// Your colour.
    pub colour: Colour,
    /// `true`: send `roll`; `false`: send `play` with one of `legal`.
    pub must_roll: bool,
    /// The dice of the current throw, once rolled.
    pub dice: Option<Dice>,
    /// Which dice are already used.
    pub used: [bool; 2],
    /// A pending bonus move (squares), played before any die.
    pub bonus: Option<u8>,
    /// The legal actions (empty while awaiting the roll).
    pub legal: Vec<Action>,
    /// What each legal action does, in the order of `legal` (computed by the engine,
    /// [`parchis_engine::Game::preview`]): the piece, its path, captures, bonus, goal and
    /// the position after it. Clients draw these; they need no rules of their own.
    #[serde(default)]
    pub previews: Vec<ActionPreview>,
    /// Absolute deadline of this throw, unix ms.
    pub deadline_ms: i64,
}

/// A message from the server. JSON object tagged by `"type"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// Answer to `join`, `watch` and `resume`.
    Welcome {
        /// The request id.
        req: u64,
        /// Room code.
        room: String,
        /// Player or spectator.
        role: Role,
        /// Your colour (players).
        colour: Option<Colour>,
        /// Session token (players): keep it to `resume`. Sent once; the server keeps only
        /// its SHA-256.
        token: Option<String>,
        /// The room's latest event seq.
        seq: u64,
        /// The room's state; `null` on a `resume` whose missed events follow as `event`s.
        snapshot: Option<Box<RoomView>>,
    },
    /// A command was applied.
    Ok {
        /// The request id.
        req: u64,
        /// The room's latest event seq after the command.
        seq: u64,
    },
    /// A command was refused; nothing changed.
    Error {
        /// The request id, when the frame could be read that far.
        req: Option<u64>,
        /// Stable code.
        code: ErrorCode,
        /// Human-readable text.
        message: String,
        /// The rule id of the reference (`R-EXIT-1`…) for `illegal_action`.
        rule: Option<String>,
    },
    /// One entry of the room's event stream, in `seq` order with no gaps.
    Event {
        /// Room code.
        room: String,
        /// This event's seq.
        seq: u64,
        /// Server time, unix ms.
        at_ms: i64,
        /// The event.
        event: RoomEvent,
        /// The whole game state after this event, without the rule set (which
        /// `game_started` and the room view carry, and which does not change), sent on
        /// the last event of each batch that changes the game (a roll, a move and what it
        /// set off, a timeout, an abandonment). Clients draw it as it is. Absent on other
        /// events.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        position: Option<Box<BoardState>>,
        /// For a `piece_moved` game event: every square the piece stepped on, in order,
        /// the landing square last (the bounce included, R-BOUNCE), for drawing the move.
        /// Absent on other events.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        path: Vec<Location>,
    },
    /// Your turn: what to do and the legal actions (player to act only).
    YourTurn(TurnInfo),
    /// Who is connected and how many watch. Not part of the event stream.
    Presence {
        /// Room code.
        room: String,
        /// The room's latest event seq (unchanged by presence).
        seq: u64,
        /// Seated colours with a live connection.
        connected: Vec<Colour>,
        /// Spectators watching.
        spectators: u32,
        /// Seated players whose connection dropped, with the time their seat is given up
        /// unless they come back (R-LEAVE): clients show a countdown. Omitted when empty.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        away: Vec<AwaySeat>,
    },
    /// A seated player sent a quick emote ([`ClientMessage::Emote`]), to everyone in the
    /// room. Not part of the event stream (no `seq`, not stored, not replayed on
    /// `resume`).
    Emote {
        /// Room code.
        room: String,
        /// Who sent it.
        colour: Colour,
        /// Which emote.
        emote: Emote,
    },
    /// A seated player's account was renamed by an administrator (issue 26): the seat of
    /// `colour` shows `name` from now on. Not part of the event stream (no `seq`; a
    /// snapshot or the room view carries the new name).
    Renamed {
        /// Room code.
        room: String,
        /// The renamed player's seat.
        colour: Colour,
        /// The account's new username.
        name: String,
    },
    /// A seated player's rating changed while they sat here (issue 26): a rated game they
    /// played in another room ended, or an administrator reset their ratings. The seat
    /// of `colour` shows `rating` from now on (a seat's `rating` in a snapshot or the
    /// room view). Not part of the event stream (no `seq`; a snapshot or the room view
    /// carries the new rating).
    Rating {
        /// Room code.
        room: String,
        /// The player's seat.
        colour: Colour,
        /// The account's display rating in the room's pool now; absent when it has none
        /// there.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rating: Option<i64>,
    },
    /// Answer to `ping`.
    Pong {
        /// The request id.
        req: u64,
    },
    /// The server is about to close this connection with `code` (see `proto/README.md`).
    Closing {
        /// WebSocket close code.
        code: u16,
        /// Why.
        reason: String,
    },
}

/// A frame that is not a valid [`ClientMessage`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ParseError {
    /// `bad_json`, `unknown_type`, `missing_field` or `bad_request`.
    pub code: ErrorCode,
    /// Human-readable text.
    pub message: String,
    /// The request id, when the frame had a numeric `req`.
    pub req: Option<u64>,
}

/// Parses a text frame, classifying failures: not JSON (`bad_json`), no or unknown `type`
/// (`unknown_type`), a required field missing (`missing_field`), anything else invalid
/// (`bad_request`).
pub fn parse_client_message(text: &str) -> Result<ClientMessage, ParseError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ParseError {
        code: ErrorCode::BadJson,
        message: format!("not valid JSON: {e}"),
        req: None,
    })?;
    let req = value.get("req").and_then(|r| r.as_u64());
    let Some(obj) = value.as_object() else {
        return Err(ParseError {
            code: ErrorCode::BadJson,
            message: "a message is a JSON object".into(),
            req,
        });
    };
    match obj.get("type").and_then(|t| t.as_str()) {
        None => {
            return Err(ParseError {
                code: ErrorCode::UnknownType,
                message: "the message has no string field \"type\"".into(),
                req,
            })
        }
        Some(t) if !ClientMessage::TYPES.contains(&t) => {
            return Err(ParseError {
                code: ErrorCode::UnknownType,
                message: format!(
                    "unknown message type {t:?}; expected one of {}",
                    ClientMessage::TYPES.join(", ")
                ),
                req,
            })
        }
        Some(_) => {}
    }
    serde_json::from_value(value).map_err(|e| {
        let text = e.to_string();
        let code = if text.starts_with("missing field") {
            ErrorCode::MissingField
        } else {
            ErrorCode::BadRequest
        };
        ParseError {
            code,
            message: text,
            req,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_bad_input() {
        let e = |s: &str| parse_client_message(s).err().map(|e| e.code);
        assert_eq!(e("not json"), Some(ErrorCode::BadJson));
        assert_eq!(e("[1,2]"), Some(ErrorCode::BadJson));
        assert_eq!(e(r#"{"req":1}"#), Some(ErrorCode::UnknownType));
        assert_eq!(e(r#"{"type":"fly","req":1}"#), Some(ErrorCode::UnknownType));
        assert_eq!(
            e(r#"{"type":"roll","req":1,"room":"X"}"#),
            Some(ErrorCode::MissingField)
        );
        assert_eq!(
            e(r#"{"type":"choose_colour","req":1,"room":"X","seq":0,"colour":"pink"}"#),
            Some(ErrorCode::BadRequest)
        );
        let err = parse_client_message(r#"{"type":"roll","req":7}"#).err();
        assert_eq!(err.and_then(|e| e.req), Some(7));
    }

    #[test]
    fn play_matches_engine_action_json() {
        let msg = parse_client_message(
            r#"{"type":"play","req":3,"room":"AB","seq":9,"action":{"type":"move","piece":2,"die":4}}"#,
        );
        let Ok(ClientMessage::Play { action, .. }) = msg else {
            panic!("not a play: {msg:?}");
        };
        let a: Action = action.into();
        assert_eq!(
            a,
            Action::Move {
                piece: 2,
                die: 4,
                capture: false
            }
        );
        assert_eq!(
            serde_json::to_value(a).ok(),
            serde_json::to_value(action).ok()
        );
    }
}
