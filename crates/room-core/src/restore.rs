//! Restart recovery, the pure part: a stored seat and a stored game's log put back into
//! a new room's core (the driver, `parchis-room`'s `restore`, reads the store and starts
//! the actor).

use crate::core::{Core, Effect, EventsCommit, Seat, Then};
use crate::persist::{self, StoredSeat, Write};
use crate::replay::{LoggedEvent, Resumed};
use crate::seat::SeatBot;
use crate::Frame;
use crate::{encode, Ms};
use parchis_engine::{Colour, SeatStatus};
use parchis_protocol::{RoomEvent, RoomStatus};
use rand::Rng;
use std::collections::VecDeque;
use uuid::Uuid;

/// How far beyond a fresh full turn clock a restored game's stored deadline may lie and
/// still be kept (ms). A deadline is written at most a full clock after the moment it is
/// written, so one further ahead than this of this node's fresh clock was written by a
/// node whose wall clock ran ahead.
pub const DEADLINE_SKEW_MS: Ms = 1_000;

/// What became of a restored room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restored {
    /// It runs on.
    Running,
    /// It had already ended (a crash between its last event and the room's status, in a
    /// store written before game ends were one transaction): the room closes.
    Over,
}

impl Core {
    /// Puts back a stored seat: disconnected, with a fresh grace period (bots need none).
    pub fn restore_seat(&mut self, stored: StoredSeat, now: Ms) {
        let grace = i64::from(self.settings.disconnect_grace_secs) * 1000;
        let bot = stored.bot.map(|level| SeatBot::new(level, self.rng.gen()));
        self.seats.push(Seat {
            id: self.next_seat_id,
            colour: stored.colour,
            name: stored.name,
            // A bot seat's stored hash, if any, is the person it took over from: it reads
            // the result once the room is gone, but never resumes the seat.
            token_hash: if bot.is_some() {
                String::new()
            } else {
                stored.token_hash
            },
            creator: stored.creator,
            joined_at_ms: stored.joined_at_ms,
            conn: None,
            reattached: false,
            grace_until: bot.is_none().then_some(now + grace),
            abandoned: false,
            bot,
            client_seed: None,
            stale_seqs: false,
            rating: None,
            account: stored.account,
        });
        self.next_seat_id += 1;
        self.idle_since = None;
    }

    /// The stored seats were put back without a game: this lobby's event seq starts
    /// again at 0 (lobby events are not stored), so the seqs its players' clients saw
    /// before name other events here. Each restored seat's next `resume` gets a snapshot
    /// whatever its `last_seq`, and reattaches from before are refused (their clients
    /// resume or watch again).
    pub fn lobby_restored(&mut self) {
        self.lobby_restored = true;
        for seat in &mut self.seats {
            seat.stale_seqs = true;
        }
    }

    /// Puts back a replayed game (`log` is the stored log it was replayed from: the
    /// whole game, or its events after the snapshot a restore read from, which are then
    /// all the history has, `docs/STORAGE.md`; `stored_deadline` the games table's copy). The player to act gets a fresh full
    /// clock from `now` (R-CLOCK: nobody loses a throw because a server died or a room
    /// moved, however little of the old clock was left, and every seat comes back
    /// disconnected), announced by a new `turn` event (the returned effects store it
    /// first). A stored deadline between that fresh one and [`DEADLINE_SKEW_MS`] beyond
    /// it is kept as it is; one further ahead can only come from an owner whose wall clock
    /// ran ahead of this node's, and is replaced by a fresh clock from this node's (issue
    /// 25: a skewed clock does not carry over a takeover).
    pub fn restore_game(
        &mut self,
        id: Uuid,
        log: &[LoggedEvent],
        replayed: Resumed,
        stored_deadline: Option<Ms>,
        now: Ms,
    ) -> (Restored, Vec<Effect>) {
        let game = replayed.game;
        // The game's own rule set (from its `game_started` position) is authoritative.
        self.rules = *game.rules();
        for seat in &mut self.seats {
            if game.seat(seat.colour) != SeatStatus::Playing {
                seat.abandoned = true;
                seat.grace_until = None;
            }
        }
        self.seq = replayed.seq;
        self.history = self.frames(log, &replayed.positions);
        let code = self.code.clone();
        self.delay_restored(log, &replayed.positions, &replayed.before, |e, after| {
            encode(&crate::frames::event_message(
                &code,
                e.seq,
                e.at_ms,
                e.event.clone(),
                after,
            ))
        });
        self.game_id = Some(id);
        self.game = Some(game);
        if let Some(outcome) = game.outcome() {
            self.status = RoomStatus::Finished;
            self.deadline = None;
            for seat in &mut self.seats {
                seat.grace_until = None;
            }
            let rated = self.rated_result(&game);
            let end = persist::game_end(
                id,
                &self.code,
                self.seq,
                Vec::new(),
                None,
                &outcome,
                now,
                rated,
            );
            let reason = persist::reason_text(&outcome);
            let preset = self.settings.preset.clone();
            self.obs
                .game_finished(&self.code, id, &preset, reason, Some(outcome.winner));
            return (
                Restored::Over,
                vec![Effect::Store(Write::End(Box::new(end)))],
            );
        }
        self.status = RoomStatus::Playing;
        // The referee's pause outlives a restart: no clock runs until the resume.
        if let Some(paused) = replayed.paused {
            self.paused = Some(paused);
            self.deadline = None;
            return (Restored::Running, Vec::new());
        }
        // The last `turn` event is authoritative (it is written with the action); the
        // games table's column is a convenience copy that may lag behind it.
        let fresh = self.fresh_deadline(now);
        match replayed.last_turn_deadline.or(stored_deadline) {
            Some(ms) if ms >= fresh && ms <= fresh + DEADLINE_SKEW_MS => {
                self.deadline = Some(ms);
                (Restored::Running, Vec::new())
            }
            stored => {
                if let Some(ms) = stored.filter(|ms| *ms > fresh + DEADLINE_SKEW_MS) {
                    crate::note!(
                        self,
                        Warn,
                        "stored turn deadline beyond a full clock: the previous owner's clock ran ahead; a fresh clock from this node's",
                        "stored_deadline_ms={ms} fresh_deadline_ms={fresh} ahead_ms={}",
                        ms - fresh
                    );
                }
                (
                    Restored::Running,
                    self.fresh_clock(id, game.turn(), fresh, now),
                )
            }
        }
    }

    /// Time the server was down (or the room had no owner) is not held against the player
    /// to act, nor is the time it takes them to reconnect: a fresh full clock (deadline
    /// `deadline`), however much of the old one was left, announced by a `turn` event
    /// stored first, and the games table's copy of the deadline.
    fn fresh_clock(&mut self, id: Uuid, turn: Colour, deadline: Ms, now: Ms) -> Vec<Effect> {
        let turn = RoomEvent::Turn {
            colour: turn,
            deadline_ms: deadline,
        };
        self.stage_events(EventsCommit {
            game: None,
            events: vec![turn],
            at_ms: now,
            deadline: Some(deadline),
            turn: false,
            action: None,
            thrown: false,
            then: Then::Nothing,
        });
        let mut effects = std::mem::take(&mut self.out);
        effects.insert(
            0,
            Effect::Store(Write::SetDeadline {
                game_id: id,
                deadline_ms: Some(deadline),
            }),
        );
        effects
    }

    /// The last `history_len` events of `log` as the frames sent for them: a positioned
    /// event's frame carries the game `positions` (from [`replay`]) has for its seq, as the
    /// live frame did; a log written before positioned events were marked has none.
    fn frames(
        &self,
        log: &[LoggedEvent],
        positions: &[(u64, parchis_engine::Game)],
    ) -> VecDeque<(u64, Frame)> {
        let skip = log.len().saturating_sub(self.history_len);
        log[skip..]
            .iter()
            .map(|e| {
                let after = positions
                    .binary_search_by_key(&e.seq, |(seq, _)| *seq)
                    .ok()
                    .map(|i| &positions[i].1);
                let frame = encode(&crate::frames::event_message(
                    &self.code,
                    e.seq,
                    e.at_ms,
                    e.event.clone(),
                    after,
                ));
                (e.seq, frame)
            })
            .collect()
    }
}
