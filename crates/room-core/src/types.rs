//! The room's plain values shared by the core and its driver: connection ids, time as
//! unix ms, membership, refusals, seat commands, a bot's choice and the room's listing.

use parchis_engine::{Action, Colour};
use parchis_protocol::{ErrorCode, Play, RoomStatus, RoomSummary, ServerMessage};
use std::sync::Arc;
use uuid::Uuid;

/// Identifies one WebSocket connection.
pub type ConnId = u64;

/// A point in time or a duration, in unix milliseconds: the core's only notion of time.
pub type Ms = i64;

/// Serializes a server message once, for any number of queues ([`Frame`]).
pub fn encode(msg: &ServerMessage) -> Frame {
    // Serializing these plain types cannot fail; an empty frame would be harmless anyway.
    Frame::from(serde_json::to_string(msg).unwrap_or_default())
}

/// One server message serialised once (its JSON text), shared by every queue, history
/// and socket it goes to: a clone is a reference count, never a copy. The same buffer is
/// seen as text ([`Frame::as_str`], `Deref<Target = str>`) and as [`bytes::Bytes`]
/// ([`Frame::bytes`]), which a WebSocket text message takes without copying (the
/// server's socket writer).
#[derive(Clone)]
pub struct Frame {
    /// The JSON text.
    text: Arc<str>,
    /// The same buffer as `text` (its owner is a clone of `text`).
    bytes: bytes::Bytes,
}

/// The owner of a frame's [`bytes::Bytes`]: the frame's text itself.
struct SharedText(Arc<str>);

impl AsRef<[u8]> for SharedText {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl Frame {
    /// The frame's JSON text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The frame's bytes (UTF-8 JSON): a handle on the frame's own buffer, no copy.
    pub fn bytes(&self) -> bytes::Bytes {
        self.bytes.clone()
    }

    /// Whether `a` and `b` are the same frame (one serialisation, one buffer), not merely
    /// equal text.
    pub fn ptr_eq(a: &Frame, b: &Frame) -> bool {
        Arc::ptr_eq(&a.text, &b.text)
    }
}

impl From<Arc<str>> for Frame {
    /// The frame of `text` (no copy of it).
    fn from(text: Arc<str>) -> Frame {
        let bytes = bytes::Bytes::from_owner(SharedText(text.clone()));
        Frame { text, bytes }
    }
}

impl From<String> for Frame {
    /// The frame of `text` (moved into the frame's one buffer).
    fn from(text: String) -> Frame {
        Frame::from(Arc::<str>::from(text))
    }
}

impl From<&str> for Frame {
    /// The frame of a copy of `text`.
    fn from(text: &str) -> Frame {
        Frame::from(Arc::<str>::from(text))
    }
}

impl std::ops::Deref for Frame {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text
    }
}

impl AsRef<str> for Frame {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.text, f)
    }
}

impl std::fmt::Display for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq for Frame {
    /// Equal text (whether or not the same buffer: [`Frame::ptr_eq`]).
    fn eq(&self, other: &Frame) -> bool {
        self.text == other.text
    }
}

impl Eq for Frame {}

/// What a connection is in a room, as the room answered its join.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Member {
    /// Holds the seat with this id.
    Player(u64),
    /// Watches.
    Spectator,
}

/// What a connection was in a room, enough to attach it again on another node without
/// its token (`docs/CLUSTER.md`, "Routing": nodes trust each other; clients never send
/// this).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "as", content = "colour", rename_all = "snake_case")]
pub enum Reattach {
    /// The player of this seat.
    Player(Colour),
    /// A spectator.
    Spectator,
}

/// A refused command: code and text (and a rule id for illegal actions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Error code.
    pub code: ErrorCode,
    /// Human-readable text.
    pub message: String,
    /// Rule id for `illegal_action`.
    pub rule: Option<String>,
}

impl Refusal {
    /// A refusal with its own text.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
            rule: None,
        }
    }
    /// A refusal with the code's standard text.
    pub fn code(code: ErrorCode) -> Refusal {
        Refusal::new(code, code.describe())
    }
    /// The error frame answering request `req`.
    pub fn to_message(&self, req: Option<u64>) -> ServerMessage {
        ServerMessage::Error {
            req,
            code: self.code,
            message: self.message.clone(),
            rule: self.rule.clone(),
        }
    }
}

/// A command for a room the connection has joined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeatCmd {
    /// Change colour (lobby).
    ChooseColour(Colour),
    /// Set the client seed of the fair dice (lobby, `docs/FAIR_DICE.md`).
    ClientSeed(String),
    /// Start the game (creator).
    Start,
    /// Throw the dice.
    Roll,
    /// Play an action of the current throw.
    Play(Play),
    /// Leave the room.
    Leave,
    /// Ask for a rematch after the game ([`crate::rematch`]).
    Rematch,
    /// Send a quick emote to the room (seated players; limited per seat).
    Emote(parchis_protocol::Emote),
}

/// The action a bot chose on a blocking thread, with the bot itself handed back.
pub struct BotChoice {
    /// The room seq the choice was computed for: dropped if the room moved on.
    pub seq: u64,
    /// The bot's seat.
    pub colour: Colour,
    /// The chosen action.
    pub action: Action,
    /// The bot, back to its seat.
    pub brain: Box<dyn parchis_bots::Bot + Send>,
}

impl std::fmt::Debug for BotChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotChoice")
            .field("seq", &self.seq)
            .field("colour", &self.colour)
            .field("action", &self.action)
            .finish_non_exhaustive()
    }
}

/// Light public facts about a room, readable without asking the actor.
#[derive(Clone, Debug)]
pub struct Listing {
    /// Lifecycle.
    pub status: RoomStatus,
    /// Listed publicly.
    pub public: bool,
    /// Spectators may watch (`settings.spectators`).
    pub spectators_allowed: bool,
    /// Summary for `GET /api/rooms`.
    pub summary: RoomSummary,
    /// The room's game, once started.
    pub game_id: Option<Uuid>,
    /// Absolute deadline of the running turn clock (unix ms, R-CLOCK), `None` when no
    /// clock runs. The games API reports it for a game in progress: the store's copy is
    /// written at the start and on restore only, not on every throw.
    pub deadline_ms: Option<i64>,
    /// Seats with a connection attached (the `parchis_room_connections` gauge).
    pub connected_players: u32,
}
