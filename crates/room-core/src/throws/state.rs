//! What the encoder and the decoder both track along a packed log, updated by the same
//! rules on both sides so that an op means the same thing to both: the next seq, the time
//! of the last event, the game (to expand an action into its engine events) and the next
//! throw number (`docs/FAIR_DICE.md`).

use crate::replay::LoggedEvent;
use crate::Ms;
use parchis_engine::{Colour, Event, Game};
use parchis_protocol::RoomEvent;

/// Op kinds: the low 5 bits of an op's first byte.
pub mod kind {
    /// Any room event as its JSON (the fallback): varint length, JSON bytes.
    pub const LITERAL: u8 = 0;
    /// Action `roll`: one byte, die 1 in the low nibble, die 2 (0: none) in the high one.
    pub const ROLL: u8 = 1;
    /// Action `exit`.
    pub const EXIT: u8 = 2;
    /// Action `move`: one byte, piece (bits 0-1), capture (bit 2), die (bits 3-6).
    pub const MOVE: u8 = 3;
    /// Action `bonus`: piece and capture as for `MOVE`, then the amount (one byte).
    pub const BONUS: u8 = 4;
    /// Action `timeout` (R-CLOCK).
    pub const TIMEOUT: u8 = 5;
    /// Action `abandon`: the colour (R-LEAVE).
    pub const ABANDON: u8 = 6;
    /// Room event `turn`: the colour, then the deadline less the event's time (zigzag).
    pub const TURN: u8 = 7;
    /// Room event `game_started`: id (16 bytes), first colour, seated colours, rule set,
    /// dice (the position is the engine's start of those).
    pub const GAME_STARTED: u8 = 8;
    /// Room event `dice_revealed`: the server seed's 32 bytes.
    pub const DICE_REVEALED: u8 = 9;
    /// No event: the next `dice_rolled` is throw number (varint).
    pub const THROW: u8 = 10;
    /// No event (format 2): the state both sides keep, as it is at this point
    /// (the `snapshot` module): varint length, then the snapshot's bytes. A restore starts
    /// from the last one instead of the log's start.
    pub const SNAPSHOT: u8 = 11;
}

/// A snapshot is written once this many throws were made since the last one (or the
/// start), after the next positioned op (the end of a batch): a restore replays at most
/// about this many throws (plus the spectator delay's, `docs/STORAGE.md`).
pub const SNAPSHOT_EVERY: u64 = 64;

/// Bit of an op's first byte: the last event the op stands for is positioned (its live
/// frame carried the game after its batch).
pub const POSITIONED: u8 = 0x20;
/// Bit of an op's first byte: a zigzag varint follows, the change of time (ms) from the
/// previous event to this op's events.
pub const TIMED: u8 = 0x40;
/// The low bits of an op's first byte: its kind.
pub const KIND_MASK: u8 = 0x1f;

/// The state both sides keep along a log.
#[derive(Clone, Debug)]
pub struct State {
    /// The seq the next event gets.
    pub next_seq: u64,
    /// The time of the last event (unix ms).
    pub at_ms: Ms,
    /// The game after every event so far, while the log has been actions only; `None`
    /// before `game_started` and after an engine event stored as JSON (then actions are
    /// stored as JSON too).
    pub game: Option<Game>,
    /// The number the next `dice_rolled` carries.
    pub next_throw: u64,
    /// The deadline of the last `turn` event (unix ms), as [`crate::replay()`] reads it.
    pub deadline: Option<Ms>,
    /// The referee's pause in force (a `clock_paused` after the last `turn`): the colour
    /// and what was left of its clock (ms), as [`crate::replay()`] reads it.
    pub paused: Option<(Colour, Ms)>,
    /// Throws expanded from actions since the last snapshot (or the start).
    pub rolls: u64,
    /// Whether this log writes snapshots (format 2 on; a format-1 log goes on without).
    pub snapshots: bool,
}

impl State {
    /// The state before the first event of a log whose first seq is `first_seq`, at
    /// `at_ms`.
    /// `snapshots`: whether the log's format has them (2 on).
    pub fn new(first_seq: u64, at_ms: Ms, snapshots: bool) -> State {
        State {
            next_seq: first_seq,
            at_ms,
            game: None,
            next_throw: 0,
            deadline: None,
            paused: None,
            rolls: 0,
            snapshots,
        }
    }

    /// Whether a snapshot is due after an op whose last event is positioned (`true`):
    /// the log has snapshots, the game is followed and not over, and
    /// [`SNAPSHOT_EVERY`] throws were made since the last one. Both sides decide it by
    /// this rule, so packing whole or in pieces writes the same bytes.
    pub fn snapshot_due(&self, positioned: bool) -> bool {
        positioned
            && self.snapshots
            && self.rolls >= SNAPSHOT_EVERY
            && self.game.is_some_and(|g| g.outcome().is_none())
    }

    /// The room events an action's engine events are sent as: `dice_rolled` carries the
    /// next throw number.
    pub fn wrap(&mut self, produced: Vec<Event>) -> Vec<RoomEvent> {
        produced
            .into_iter()
            .map(|event| {
                let throw = matches!(event, Event::DiceRolled { .. }).then(|| {
                    let t = self.next_throw;
                    self.next_throw += 1;
                    self.rolls += 1;
                    t
                });
                RoomEvent::Game { event, throw }
            })
            .collect()
    }

    /// Takes in an event that was not expanded from an action (stored by its own op):
    /// its seq and time, the throws it numbers, and the game it starts or leaves.
    pub fn observe(&mut self, e: &LoggedEvent) {
        self.next_seq = e.seq + 1;
        self.at_ms = e.at_ms;
        match &e.event {
            RoomEvent::GameStarted {
                first, position, ..
            } => {
                let seats: Vec<_> = position.players.iter().map(|p| p.colour).collect();
                self.game = Game::new(position.rules, &seats, *first).ok();
            }
            RoomEvent::OpeningRoll { rolls, .. } => {
                if let Some(t) = rolls.iter().filter_map(|r| r.throw).max() {
                    self.next_throw = t + 1;
                }
            }
            RoomEvent::Turn { deadline_ms, .. } => {
                self.deadline = Some(*deadline_ms);
                self.paused = None;
            }
            RoomEvent::ClockPaused {
                colour,
                remaining_ms,
            } => self.paused = Some((*colour, *remaining_ms)),
            RoomEvent::Game { throw, .. } => {
                // An engine event stored as JSON: the game is no longer followed.
                self.game = None;
                if let Some(t) = throw {
                    self.next_throw = t + 1;
                }
            }
            _ => {}
        }
    }
}
