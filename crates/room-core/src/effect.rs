//! The core's interface: the [`Input`]s it takes and the [`Effect`]s it asks of its
//! driver.

use crate::persist::Write;
use crate::reserved::{DirectorAnswer, DirectorCmd};
use crate::Frame;
use crate::{BotChoice, ConnId, Member, Ms, Refusal, SeatCmd};
use parchis_engine::{Action, Colour, Game};
use parchis_protocol::ErrorCode;
use parchis_records::WriteFailure;

/// Something that happened to the room.
#[derive(Debug)]
pub enum Input {
    /// A connection asks for a seat; `token` is the fresh session token it will get.
    Join {
        /// The connection.
        conn: ConnId,
        /// Request id.
        req: u64,
        /// Display name.
        name: String,
        /// Wanted colour.
        colour: Option<Colour>,
        /// Client seed for the fair dice, if given (`docs/FAIR_DICE.md`).
        client_seed: Option<String>,
        /// The account of a logged-in player (`name` is then its username), `None` for a
        /// guest.
        account: Option<uuid::Uuid>,
        /// The account's display ratings by pool name (empty for a guest): the seat shows
        /// its room's pool's ([`parchis_protocol::SeatView::rating`]).
        ratings: std::collections::BTreeMap<String, i64>,
        /// The new session token (made by the caller: the core has no entropy of its own).
        token: String,
    },
    /// A connection asks to watch.
    Watch {
        /// The connection.
        conn: ConnId,
        /// Request id.
        req: u64,
    },
    /// A connection comes back to its seat.
    Resume {
        /// The connection.
        conn: ConnId,
        /// Request id.
        req: u64,
        /// Session token; empty: the seat of `account`.
        token: String,
        /// Last seq it saw.
        last_seq: u64,
        /// The logged-in player's account: with an empty `token`, the seat it holds
        /// (issue 26: resumed from another device). Ignored with a token.
        account: Option<uuid::Uuid>,
    },
    /// Cluster mode: a connection comes back without its token (relayed from another
    /// node, or after a lost frame): a player to its seat (a connection still on it is
    /// replaced, as on resume), anyone else, or a seat now played by a bot or abandoned,
    /// as a spectator. It gets the events after `last_seq` from the history, with no
    /// `welcome`; when they are no longer there it is refused (`room_unavailable`) and
    /// must reconnect and `resume`.
    Reattach {
        /// The connection.
        conn: ConnId,
        /// What it was in the room.
        reattach: crate::Reattach,
        /// The last event seq it was sent.
        last_seq: u64,
        /// The connection the same client had here before (a relay that lost a frame):
        /// forgotten without a word, its seat not left.
        replaces: Option<ConnId>,
    },
    /// A member's command.
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
    },
    /// The connection went away.
    Detach {
        /// The connection.
        conn: ConnId,
    },
    /// Time passed: clocks, grace periods and bots due at `now` act.
    Timers,
    /// The room could write nothing for a while (a write in doubt stood, then was found
    /// not applied: `room/actor_doubt.rs`): the player to act gets a fresh full clock
    /// (R-CLOCK), announced by a `turn` event, unless the clock left ends later.
    ClockOwed,
    /// A bot's search finished.
    BotChose(BotChoice),
    /// A connection claims the seat reserved for `key` in a director's room
    /// ([`crate::reserved`]); answered like a `join` ([`Effect::Reply`]).
    Claim {
        /// The connection.
        conn: ConnId,
        /// Request id.
        req: u64,
        /// The reservation's `reserved_for` key (an account id, from the session).
        key: String,
        /// Client seed for the fair dice, if given.
        client_seed: Option<String>,
        /// The new session token (made by the caller).
        token: String,
    },
    /// The tournament's director commands the room; answered by [`Effect::Directed`].
    Director(DirectorCmd),
}

/// A bot's search to run off the room's thread; its result comes back as
/// [`Input::BotChose`].
pub struct BotJob {
    /// The room seq the search is for.
    pub seq: u64,
    /// The bot's colour.
    pub colour: Colour,
    /// The position.
    pub game: Game,
    /// The legal actions to choose from.
    pub legal: Vec<Action>,
    /// The bot.
    pub brain: Box<dyn parchis_bots::Bot + Send>,
}

impl std::fmt::Debug for BotJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotJob")
            .field("seq", &self.seq)
            .field("colour", &self.colour)
            .finish_non_exhaustive()
    }
}

/// What the actor must do, in order.
#[derive(Debug)]
pub enum Effect {
    /// Queue this frame for one connection.
    Send {
        /// The connection.
        conn: ConnId,
        /// Encoded JSON.
        frame: Frame,
    },
    /// Queue this frame for every attached connection.
    Broadcast {
        /// Encoded JSON.
        frame: Frame,
    },
    /// Queue a seat's emote for every attached connection but those whose player blocked
    /// the seat's account (the connection's mutes, issue 26).
    Emote {
        /// Encoded JSON.
        frame: Frame,
        /// The sending seat's account (`None`: a guest, muted by nobody).
        from: Option<uuid::Uuid>,
    },
    /// The connection of the current join, watch or resume is now a member: deliver to it.
    Attach {
        /// The connection.
        conn: ConnId,
    },
    /// Stop delivering to this connection.
    Forget {
        /// The connection.
        conn: ConnId,
    },
    /// Close this connection with a WebSocket close code.
    Kick {
        /// The connection.
        conn: ConnId,
        /// Close code.
        code: u16,
        /// Reason text.
        reason: String,
    },
    /// The answer to the current join, watch or resume.
    Reply(Result<Member, Refusal>),
    /// Make this durable, then call [`crate::Core::persisted`]. Always the last effect of a batch.
    Persist(Write),
    /// A best-effort write: a failure is logged and changes nothing in the room.
    Store(Write),
    /// Run a bot's search.
    Think(BotJob),
    /// The room's listing changed.
    Publish,
    /// The command `req` of `conn` was an action, applied and answered `ok` (the actor
    /// measures its latency).
    Acted {
        /// The connection.
        conn: ConnId,
        /// Its request id.
        req: u64,
    },
    /// `conn` left the room: its `leave` is stored and answered `ok` (the gateway
    /// unjoins its session only now: a refused leave keeps it joined).
    Left {
        /// The connection.
        conn: ConnId,
    },
    /// Call [`crate::Core::handle`] with [`Input::Timers`] at this time (unix ms), or never.
    Wake(Option<Ms>),
    /// The answer to the current [`Input::Director`], once what it changed is durable.
    Directed(Result<DirectorAnswer, Refusal>),
}

/// Why the durable write of an [`Effect::Persist`] failed, as the driver reports it to
/// [`crate::Core::persisted`]: the step is not applied. Nothing of the write was stored,
/// except for [`WriteFailure::Ambiguous`], where it may have been (the actor then looks
/// at the stored room, `room/actor_doubt.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteFailed {
    /// The store's message, for logs.
    pub message: String,
    /// What the failure means (`parchis_records::StoreError::write_failure`): the command
    /// that waited for the write is answered by it ([`WriteFailed::refusal`]).
    pub kind: WriteFailure,
}

/// The text of the refusal of a command whose write found the database unreachable.
pub const STORE_UNREACHABLE: &str =
    "the server cannot reach its database right now: nothing was applied; send it again in a moment";

/// The text of the refusal of a command whose write found no free database connection.
pub const STORE_BUSY: &str =
    "the server is busy right now: nothing was applied; send it again in a moment";

/// The text of the refusal of a command whose transaction the database rolled back for a
/// reason of the moment (serialization failure, deadlock, statement timeout).
pub const STORE_TRANSIENT: &str =
    "the database could not store it this time: nothing was applied; send it again";

/// The text of the refusal of a command whose write's outcome is unknown (the database's
/// answer to its commit was lost and the log could not be read yet).
pub const STORE_AMBIGUOUS: &str = "the server lost its database's answer: the command may have \
     been applied; if it was, its events reach you when the room is back (after a reconnect \
     and resume at the latest); sending it again is safe";

/// The text of the refusal of a command that a room stopping to be rebuilt from its
/// stored state did not carry out (`RoomEnd::Rebuild`).
pub const STORE_REBUILD: &str = "the room is being rebuilt from its stored log: nothing of \
     this command was applied; send it again in a moment";

impl WriteFailed {
    /// A failure with `message` that a retry would not mend ([`WriteFailure::Other`]).
    pub fn other(message: impl Into<String>) -> WriteFailed {
        WriteFailed {
            message: message.into(),
            kind: WriteFailure::Other,
        }
    }

    /// What the command that waited for the write is answered: `room_unavailable` with
    /// [`STORE_UNREACHABLE`], [`STORE_BUSY`] or [`STORE_TRANSIENT`] (retryable, nothing
    /// applied), `outcome_unknown` with [`STORE_AMBIGUOUS`], else `internal`.
    pub fn refusal(&self) -> Refusal {
        let text = match self.kind {
            WriteFailure::Unreachable => STORE_UNREACHABLE,
            WriteFailure::Busy => STORE_BUSY,
            WriteFailure::Transient => STORE_TRANSIENT,
            WriteFailure::Ambiguous => {
                return Refusal::new(ErrorCode::OutcomeUnknown, STORE_AMBIGUOUS)
            }
            WriteFailure::Other => return Refusal::code(ErrorCode::Internal),
        };
        Refusal::new(ErrorCode::RoomUnavailable, text)
    }
}

impl std::fmt::Display for WriteFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(kind: WriteFailure) -> (ErrorCode, String) {
        let r = WriteFailed {
            message: "store message".into(),
            kind,
        }
        .refusal();
        (r.code, r.message)
    }

    #[test]
    fn each_failure_class_is_answered_with_its_own_text() {
        let unavailable = |text: &str| (ErrorCode::RoomUnavailable, text.to_owned());
        assert_eq!(
            answer(WriteFailure::Unreachable),
            unavailable(STORE_UNREACHABLE)
        );
        assert_eq!(answer(WriteFailure::Busy), unavailable(STORE_BUSY));
        assert_eq!(
            answer(WriteFailure::Transient),
            unavailable(STORE_TRANSIENT)
        );
        assert_eq!(
            answer(WriteFailure::Ambiguous),
            (ErrorCode::OutcomeUnknown, STORE_AMBIGUOUS.to_owned())
        );
        assert!(
            !STORE_AMBIGUOUS.contains("nothing was applied"),
            "an unknown outcome is not 'nothing was applied'"
        );
        assert_eq!(answer(WriteFailure::Other).0, ErrorCode::Internal);
        assert_eq!(
            answer(WriteFailure::Other).0,
            WriteFailed::other("x").refusal().code
        );
    }
}
