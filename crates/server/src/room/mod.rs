//! Rooms: one sequential actor per room owns its seats, spectators, event history and
//! [`parchis_engine::Game`], and is the only code that changes them.
//!
//! The room is split the way quinn-proto splits QUIC from its driver:
//!
//! * [`core`] is the room as a pure state machine. It takes an [`Input`] (a connection's
//!   command, a timer tick, a bot's choice) and the current time as a value (unix ms), and
//!   returns [`Effect`]s: persist these records, send this frame to that connection,
//!   broadcast this frame, answer this join, run this bot's search, wake me at T. No tokio,
//!   no store, no sockets, no clock inside. Its parts: [`lobby`] (seats before the start,
//!   the start), [`play`] (commands, actions, clocks, abandonment), [`bots`] (bot seats and
//!   their turns), [`fanout`] (members, history, resume windows, presence) and [`view`]
//!   (snapshots and listings).
//! * [`persist`] is the one typed mapping between the room's values and the store's
//!   records (stored events carry a format version); [`replay`] is the one function that
//!   turns a stored log back into a [`parchis_engine::Game`] and the room's log state,
//!   used by [`restore`], by the export in `http.rs` and by the tests.
//! * [`actor`] is the thin tokio task: it owns the connections' queues and the store
//!   handle, executes the effects in order and keeps the write-ahead rule: a
//!   [`Effect::Persist`] is always the last effect of a batch, and the core emits nothing
//!   of that step (no broadcast, no reply) until the actor reports the write durable.
//! * [`doubt`] decides a write whose commit got no answer against the stored room; when
//!   the stored room is ahead of the live one, [`rebuild`] brings the room back from it
//!   (on a single node; in cluster mode the lease is released and the room adopted again).
//!
//! Connections send [`RoomCmd`]s through a bounded channel; joins and views are answered on
//! a oneshot, everything else goes to the connections' outbound queues, in order.

pub mod actor;
pub mod admin;
pub mod bots;
pub mod core;
pub mod create;
pub mod doubt;
pub mod effect;
pub mod fanout;
pub mod link;
pub mod lobby;
mod owed;
pub mod persist;
pub mod play;
pub mod reattach;
pub mod rebuild;
pub mod rematch;
pub mod replay;
pub mod restore;
pub mod view;

pub use self::core::{Core, Effect, Input, RoomInit};
pub use self::create::create;
pub use self::link::{ConnLink, Kick, Unwritten};
pub use self::replay::{replay, LoggedEvent, ReplayError, Replayed};
pub use self::restore::{restore, RestoreError, Restored};

use parchis_engine::{Action, Colour};
use parchis_protocol::{ErrorCode, Play, RoomStatus, RoomSummary, ServerMessage};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::sync::{mpsc, oneshot, watch};
use uuid::Uuid;

/// Identifies one WebSocket connection.
pub type ConnId = u64;

/// A point in time or a duration, in unix milliseconds: the core's only notion of time.
pub type Ms = i64;

/// Current unix time in milliseconds (read by the actor, never by the core).
pub fn now_ms() -> Ms {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Serializes a server message once, for any number of queues.
pub fn encode(msg: &ServerMessage) -> Arc<str> {
    // Serializing these plain types cannot fail; an empty frame would be harmless anyway.
    Arc::from(serde_json::to_string(msg).unwrap_or_default())
}

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
    /// Ask for a rematch after the game ([`rematch`]).
    Rematch,
}

/// Messages to a room actor.
#[derive(Debug)]
pub enum RoomCmd {
    /// Take a seat.
    Join {
        /// The connection.
        link: ConnLink,
        /// Request id.
        req: u64,
        /// Display name.
        name: String,
        /// Wanted colour.
        colour: Option<Colour>,
        /// Client seed for the fair dice, if given.
        client_seed: Option<String>,
        /// The outcome.
        reply: oneshot::Sender<Result<Member, Refusal>>,
    },
    /// Watch.
    Watch {
        /// The connection.
        link: ConnLink,
        /// Request id.
        req: u64,
        /// The outcome.
        reply: oneshot::Sender<Result<Member, Refusal>>,
    },
    /// Come back to a seat.
    Resume {
        /// The connection.
        link: ConnLink,
        /// Request id.
        req: u64,
        /// Session token.
        token: String,
        /// Last seq seen.
        last_seq: u64,
        /// The outcome.
        reply: oneshot::Sender<Result<Member, Refusal>>,
    },
    /// Cluster mode: a connection that was a member on another node (or before a lost
    /// frame) comes back as `reattach`, having seen every event up to `last_seq`
    /// ([`Input::Reattach`]: no `welcome`, only the missed events).
    Reattach {
        /// The connection.
        link: ConnLink,
        /// What it was.
        reattach: Reattach,
        /// Last event seq it was sent.
        last_seq: u64,
        /// The connection it was here before, if any (the same client: forgotten
        /// quietly).
        replaces: Option<ConnId>,
        /// The outcome.
        reply: oneshot::Sender<Result<Member, Refusal>>,
    },
    /// A command from a member; answered on its outbound queue.
    Command {
        /// The connection.
        conn: ConnId,
        /// Its membership.
        member: Member,
        /// Request id.
        req: u64,
        /// The seq it was based on.
        seq: u64,
        /// What to do.
        cmd: SeatCmd,
        /// When the connection read the command (for the action latency metric).
        received: tokio::time::Instant,
    },
    /// The connection closed.
    Detach {
        /// The connection.
        conn: ConnId,
    },
    /// The room's public state.
    View {
        /// Where to answer.
        reply: oneshot::Sender<parchis_protocol::RoomView>,
    },
    /// A bot finished thinking (sent by the room's own blocking task).
    BotChose(BotChoice),
    /// Admin: the room with its connections.
    Inspect {
        /// Where to answer.
        reply: oneshot::Sender<parchis_protocol::AdminRoom>,
    },
    /// Admin: close the room (a running game ends `closed_by_admin`).
    Close {
        /// Where to answer.
        reply: oneshot::Sender<parchis_protocol::AdminCloseRoom>,
    },
    /// Cluster mode: this node lost the room's lease. The room stops at once without
    /// writing anything, deregisters and moves its connections to the new owner
    /// (`docs/CLUSTER.md`, "Ownership").
    Stop {
        /// Why, for the log.
        why: &'static str,
    },
    /// Cluster mode drain: between two inputs the room stops writing, deregisters,
    /// releases its lease and answers with its local connections (the drain has another
    /// node adopt the room and moves them there).
    Handoff {
        /// Where the connections go.
        reply: oneshot::Sender<Vec<crate::cluster::routing::Rehomed>>,
    },
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

/// A handle on a running room actor.
#[derive(Clone, Debug)]
pub struct RoomHandle {
    code: Arc<str>,
    tx: mpsc::Sender<RoomCmd>,
    listing: watch::Receiver<Listing>,
}

impl RoomHandle {
    /// The room code.
    pub fn code(&self) -> &str {
        &self.code
    }
    /// The command channel.
    pub fn sender(&self) -> &mpsc::Sender<RoomCmd> {
        &self.tx
    }
    /// The latest listing facts.
    pub fn listing(&self) -> Listing {
        self.listing.borrow().clone()
    }
}

#[cfg(test)]
mod tests;
