//! The spectator delay's rule and its buffer, as plain values (the room's use of them
//! is [`crate::delay`], whose docs state the rule).

use crate::Frame;
use parchis_engine::{Event, Game};
use parchis_protocol::RoomEvent;
use std::collections::VecDeque;

/// Whether `event` is a throw of the game (a `dice_rolled` engine event; opening rolls
/// are not).
pub fn is_throw(event: &RoomEvent) -> bool {
    matches!(
        event,
        RoomEvent::Game {
            event: Event::DiceRolled { .. },
            ..
        }
    )
}

/// How many of a running game's `events` (its log in order, from `game_started` on)
/// spectators may see with a delay of `throws` throws: the length of the visible prefix
/// (the module's rule). `throws == 0`: all of them.
pub fn visible_prefix<'a>(events: impl IntoIterator<Item = &'a RoomEvent>, throws: u8) -> usize {
    let counts: Vec<u64> = events
        .into_iter()
        .scan(0u64, |t, e| {
            *t += u64::from(is_throw(e));
            Some(*t)
        })
        .collect();
    let total = counts.last().copied().unwrap_or(0);
    counts
        .iter()
        .take_while(|&&t| throws == 0 || t == 0 || t + u64::from(throws) <= total)
        .count()
}

/// One frame held back from the spectators.
#[derive(Debug)]
struct Held {
    seq: u64,
    /// Throws up to and including this event.
    throws: u64,
    frame: Frame,
    /// The game its frame's position shows, for a positioned frame.
    game: Option<Game>,
}

/// What the spectators of a delayed game have been shown, and what is held back.
#[derive(Debug, Default)]
pub struct SpectatorDelay {
    /// Throws made in the current game.
    throws: u64,
    held: VecDeque<Held>,
    /// The last seq let out to spectators while frames are held.
    pub(crate) shown_seq: u64,
    /// The game as of the last positioned frame let out.
    pub(crate) shown_game: Option<Game>,
}

impl SpectatorDelay {
    /// A new game starts (position `start`, before its first event of seq `seq + 1`).
    pub(crate) fn restart(&mut self, seq: u64, start: Game) {
        *self = SpectatorDelay {
            shown_seq: seq,
            shown_game: Some(start),
            ..SpectatorDelay::default()
        };
    }

    /// A restored game goes on from `game` after seq `seq`, with `throws` throws made
    /// before it (non-zero once any was: the events after it are then no start).
    pub(crate) fn resume(&mut self, seq: u64, game: Game, throws: u64) {
        self.restart(seq, game);
        self.throws = throws;
    }

    /// Keeps `frame` (event `seq`, a throw or not, with the game its position shows).
    pub(crate) fn hold(&mut self, seq: u64, throw: bool, frame: Frame, game: Option<Game>) {
        self.throws += u64::from(throw);
        self.held.push_back(Held {
            seq,
            throws: self.throws,
            frame,
            game,
        });
    }

    /// The held frames the rule lets out now, oldest first.
    pub(crate) fn release(&mut self, delay: u8) -> Vec<Frame> {
        let mut out = Vec::new();
        while let Some(h) = self.held.front() {
            if h.throws != 0 && h.throws + u64::from(delay) > self.throws {
                break;
            }
            if let Some(h) = self.held.pop_front() {
                self.let_out(&h);
                out.push(h.frame);
            }
        }
        out
    }

    /// Every held frame, oldest first (the game is over).
    pub(crate) fn release_all(&mut self) -> Vec<Frame> {
        let held = std::mem::take(&mut self.held);
        held.into_iter()
            .map(|h| {
                self.let_out(&h);
                h.frame
            })
            .collect()
    }

    fn let_out(&mut self, h: &Held) {
        self.shown_seq = h.seq;
        if h.game.is_some() {
            self.shown_game = h.game;
        }
    }

    /// Whether frames are held back (spectators are behind).
    pub fn is_holding(&self) -> bool {
        !self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parchis_engine::{Colour, Dice};

    fn roll() -> RoomEvent {
        RoomEvent::Game {
            event: Event::DiceRolled {
                colour: Colour::Yellow,
                dice: Dice::from_slice(&[3, 4]).expect("dice"),
                doubles_in_row: 0,
            },
            throw: Some(0),
        }
    }

    fn turn() -> RoomEvent {
        RoomEvent::Turn {
            colour: Colour::Yellow,
            deadline_ms: 0,
        }
    }

    #[test]
    fn the_visible_prefix_ends_n_throws_behind() {
        // start, turn | roll1, turn | roll2, turn | roll3
        let log = [turn(), turn(), roll(), turn(), roll(), turn(), roll()];
        assert_eq!(visible_prefix(&log, 0), 7);
        // Two throws behind: throw 1 and what followed it are shown after throw 3.
        assert_eq!(visible_prefix(&log, 2), 4);
        assert_eq!(visible_prefix(&log, 3), 2, "only the start before throw 1");
        assert_eq!(visible_prefix(&log, 20), 2);
        assert_eq!(visible_prefix(&log[..2], 3), 2);
        assert_eq!(visible_prefix(&[] as &[RoomEvent], 3), 0);
    }

    #[test]
    fn held_frames_come_out_n_throws_later() {
        let mut d = SpectatorDelay::default();
        let f = |s: &str| -> Frame { Frame::from(s) };
        d.hold(1, false, f("start"), None);
        assert_eq!(d.release(2), vec![f("start")], "before any throw");
        d.hold(2, true, f("r1"), None);
        d.hold(3, false, f("m1"), None);
        assert!(d.release(2).is_empty());
        d.hold(4, true, f("r2"), None);
        assert!(d.release(2).is_empty());
        d.hold(5, true, f("r3"), None);
        assert_eq!(d.release(2), vec![f("r1"), f("m1")]);
        assert_eq!(d.shown_seq, 3);
        assert_eq!(d.release_all(), vec![f("r2"), f("r3")]);
        assert!(!d.is_holding());
    }
}
