//! The spectator delay (issue 27, "no help from the public"): with
//! `settings.spectator_delay_throws` = N > 0, spectators see a running game N throws
//! behind its players.
//!
//! The rule, one for every channel (this module's [`visible_prefix`] is used by the live
//! stream here and by the games API and export of a running game): an event of a game
//! is shown to spectators once it has been followed by N more throws. With `t(e)` the
//! number of throws (in-game `dice_rolled` events) up to and including `e`, and `T` the
//! throws made so far, `e` is shown when `t(e) == 0` (the start: the position and who
//! plays first, nothing a player could be helped with) or `t(e) + N <= T`. `t` never
//! decreases along the log, so what is shown is always a prefix of it. At the game's end
//! everything is shown.
//!
//! Live, the room sends every event frame to its players at once and keeps it here for
//! the spectators (`SpectatorDelay::hold`) until the rule lets it out
//! (`SpectatorDelay::release`); the spectators' welcome (`seq` and snapshot) is the
//! game as of the last frame let out. Lobby events, and everything once the game is
//! over, go to everyone at once.

use crate::core::{Core, Effect};
pub use crate::held::{is_throw, visible_prefix, SpectatorDelay};
use crate::replay::{Before, LoggedEvent};
use crate::ConnId;
use crate::Frame;
use parchis_engine::Game;
use parchis_protocol::{RoomStatus, RoomView};

impl Core {
    /// Whether the room's spectators are shown the game late now: a delay is set and a
    /// game runs.
    pub(crate) fn delaying(&self) -> bool {
        self.settings.spectator_delay_throws > 0
            && self.status == RoomStatus::Playing
            && self.game.is_some_and(|g| g.outcome().is_none())
    }

    /// A new game starts at `start` (its first event follows the current seq).
    pub(crate) fn delay_game_started(&mut self, start: Game) {
        self.delay.restart(self.seq, start);
    }

    /// Sends event `frame` (seq `seq`, a throw or not) of a delayed game to the players at once and
    /// keeps it for the spectators; then lets out to the spectators what is due.
    pub(crate) fn delay_frame(&mut self, seq: u64, throw: bool, frame: Frame, game: Option<Game>) {
        for conn in self.player_conns() {
            self.emit(Effect::Send {
                conn,
                frame: frame.clone(),
            });
        }
        self.delay.hold(seq, throw, frame, game);
        let due = self.delay.release(self.settings.spectator_delay_throws);
        self.send_spectators(due);
    }

    /// The game is over (or closed): the spectators get every held frame now.
    pub(crate) fn delay_flush(&mut self) {
        let held = self.delay.release_all();
        self.send_spectators(held);
    }

    fn send_spectators(&mut self, frames: Vec<Frame>) {
        let spectators: Vec<ConnId> = self.spectators.clone();
        for frame in frames {
            for &conn in &spectators {
                self.emit(Effect::Send {
                    conn,
                    frame: frame.clone(),
                });
            }
        }
    }

    /// The last event seq spectators have been shown.
    pub fn spectator_seq(&self) -> u64 {
        if self.delay.is_holding() {
            self.delay.shown_seq
        } else {
            self.seq
        }
    }

    /// The room as spectators may see it (`watch`'s welcome, `GET /api/rooms/{code}`):
    /// with frames held back, the game as of the last one let out (its seq, position, no
    /// clock); else [`Core::view`].
    pub fn spectator_view(&self) -> RoomView {
        let mut view = self.view();
        if self.delay.is_holding() {
            view.seq = self.delay.shown_seq;
            if let (Some(game), Some(shown)) = (view.game.as_mut(), self.delay.shown_game) {
                game.position = shown.to_position();
                game.deadline_ms = None;
                game.outcome = None;
            }
        }
        view
    }

    /// The history frames after `last_seq` that spectators may have.
    pub(crate) fn spectator_missed(&self, last_seq: u64) -> Vec<Frame> {
        let shown = self.spectator_seq();
        self.history
            .iter()
            .filter(|(seq, _)| *seq > last_seq && *seq <= shown)
            .map(|(_, f)| f.clone())
            .collect()
    }

    /// A restored running game's delay, from its stored `log` (the frames of its
    /// events, `frame_of`, by seq), the games its positioned events show (`positions`)
    /// and `before`: the game before the events it holds (the start, or the snapshot a
    /// restore read from: then at least the delay's throws follow it, so what spectators
    /// were shown is at or after it).
    pub(crate) fn delay_restored(
        &mut self,
        log: &[LoggedEvent],
        positions: &[(u64, Game)],
        before: &Before,
        frame_of: impl Fn(&LoggedEvent, Option<&Game>) -> Frame,
    ) {
        self.delay.resume(before.seq, before.game, before.throws);
        if self.settings.spectator_delay_throws == 0 {
            return;
        }
        for e in log.iter().filter(|e| e.seq > before.seq) {
            let game = positions
                .binary_search_by_key(&e.seq, |(seq, _)| *seq)
                .ok()
                .map(|i| positions[i].1);
            let frame = frame_of(e, game.as_ref());
            self.delay.hold(e.seq, is_throw(&e.event), frame, game);
        }
        let _ = self.delay.release(self.settings.spectator_delay_throws);
    }
}
