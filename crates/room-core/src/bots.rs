//! Bots: seats played by the computer — their think time, their turns (rolls through the
//! room's dice, moves chosen off-thread by a [`BotJob`]), and bots taking over abandoned
//! seats (`on_abandon: bot`).

use crate::core::{BotJob, Core, Effect, Staged, Then, Work};
use crate::persist::{self, Write};
use crate::seat::bot_kind;
pub use crate::seat::SeatBot;
use crate::{BotChoice, Ms};
use parchis_engine::{Action, Colour, Dice, Expect};
use parchis_protocol::{AbandonReason, BotLevel, RoomEvent, RoomStatus};
use rand::Rng;

impl Core {
    /// The seat of the bot to act, while the game runs.
    pub(super) fn bot_to_act(&self) -> Option<usize> {
        // Bots wait, like everyone, while the referee holds the clock.
        if self.status != RoomStatus::Playing || self.paused.is_some() {
            return None;
        }
        let game = self.game.as_ref()?;
        if matches!(game.expect(), Expect::Finished(_)) {
            return None;
        }
        let turn = game.turn();
        self.seats
            .iter()
            .position(|s| s.colour == turn && s.bot.is_some() && !s.abandoned)
    }

    /// Starts the think time of the bot to act, if any (and forgets it otherwise).
    pub(super) fn schedule_bot(&mut self, now: Ms) {
        match self.bot_to_act() {
            None => self.bot_due = None,
            Some(_) if self.bot_due.is_none() && !self.bot_thinking => {
                let mut think = i64::from(self.settings.bot_think_ms);
                if self.nobody_attached() && self.director.is_none() {
                    // Nobody watches: bots alone do not race through their game. A
                    // tournament director's room is exempt: its bots keep the
                    // tournament's think time (`bot_fill.think_ms`), for the bracket
                    // waits on them whether anyone watches or not (docs/TOURNAMENTS.md).
                    think = think.max(self.limits.min_unwatched_bot_think_ms);
                }
                self.bot_due = Some(now + think);
            }
            Some(_) => {}
        }
    }

    /// The bot to act acts: it rolls through the normal roll path (the room's dice), or
    /// its move is searched off-thread ([`Effect::Think`]); the choice comes back as
    /// [`Input::BotChose`](crate::Input::BotChose).
    pub(super) fn bot_act(&mut self, now: Ms) {
        let Some(i) = self.bot_to_act() else { return };
        let Some(game) = self.game else { return };
        let colour = self.seats[i].colour;
        match game.expect() {
            Expect::Roll { .. } => match Dice::from_slice(&self.throw()) {
                Ok(dice) => {
                    let action = Action::Roll { dice };
                    if let Err(e) = self.apply(action, Vec::new(), Then::Bot { colour }, now) {
                        crate::note!(
                            self,
                            Warn,
                            "bot roll not applied",
                            "colour={colour} error={}",
                            e.message
                        );
                    }
                }
                Err(_) => crate::note!(self, Warn, "bot roll: bad dice", "colour={colour}"),
            },
            Expect::Move { .. } => {
                let legal = game.legal_actions();
                if legal.is_empty() {
                    return;
                }
                let Some(brain) = self.seats[i].bot.as_mut().and_then(|b| b.brain().take()) else {
                    return;
                };
                self.bot_thinking = true;
                self.emit(Effect::Think(BotJob {
                    seq: self.seq,
                    colour,
                    game,
                    legal,
                    brain,
                }));
            }
            Expect::Finished(_) => {}
        }
    }

    /// A bot's choice is back: the bot returns to its seat, and (after an expired clock
    /// is applied) the action is applied like a person's if the room is still where the
    /// bot looked at it.
    pub(super) fn bot_chose(&mut self, choice: BotChoice) {
        let BotChoice {
            seq,
            colour,
            action,
            brain,
        } = choice;
        self.bot_thinking = false;
        if let Some(bot) = self
            .seats
            .iter_mut()
            .find(|s| s.colour == colour)
            .and_then(|s| s.bot.as_mut())
        {
            *bot.brain() = Some(brain);
        }
        let apply = Work::BotApply {
            seq,
            colour,
            action,
        };
        if self.status == RoomStatus::Playing {
            self.then_do([Work::Timeout, apply]);
        } else {
            self.then_do([apply]);
        }
    }

    /// Applies a bot's choice unless the room moved on since it looked.
    pub(super) fn bot_apply(&mut self, seq: u64, colour: Colour, action: Action, now: Ms) {
        let still = self.bot_to_act().map(|i| self.seats[i].colour) == Some(colour);
        if seq != self.seq || !still {
            crate::note!(
                self,
                Debug,
                "stale bot choice dropped",
                "colour={colour} seq={seq} now={}",
                self.seq
            );
            return;
        }
        if let Err(e) = self.apply(action, Vec::new(), Then::Bot { colour }, now) {
            crate::note!(
                self,
                Warn,
                "bot action not applied",
                "colour={colour} action={action} error={}",
                e.message
            );
        }
    }

    /// `on_abandon: bot`: a bot takes over seat `i` instead of the player forfeiting. If
    /// its event cannot be stored, the player forfeits instead.
    pub(super) fn bot_take_over(&mut self, i: usize, reason: AbandonReason, now: Ms) {
        let level = self.settings.bots.unwrap_or(BotLevel::Greedy);
        let colour = self.seats[i].colour;
        let event = RoomEvent::BotTookOver {
            colour,
            level,
            reason,
        };
        let seed = self.rng.gen();
        let staged = Staged::TakeOver {
            seat_id: self.seats[i].id,
            level,
            reason,
            seed,
            event: event.clone(),
            at_ms: now,
        };
        // The seat's row as the bot's (with the person's token hash: once the room is
        // gone, that token still learns how the game ended), stored with the event.
        let mut record = persist::seat_record(&self.code, &self.seats[i]);
        record.bot = Some(bot_kind(level).name().to_owned());
        match self.game_id {
            Some(game_id) => {
                let (events, piece) =
                    self.log_write(self.seq + 1, now, std::slice::from_ref(&event), false);
                let write = Write::Batch(vec![
                    Write::Append {
                        game_id,
                        after_seq: self.seq,
                        events,
                        piece,
                    },
                    Write::UpsertSeat(record),
                ]);
                self.stage(write, staged);
            }
            // A takeover happens in a game only.
            None => drop(staged),
        }
    }

    /// The takeover is stored: the bot sits down, the old token stops resuming the seat.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn take_over_stored(
        &mut self,
        seat_id: u64,
        level: BotLevel,
        reason: AbandonReason,
        seed: u64,
        event: RoomEvent,
        at_ms: Ms,
    ) {
        self.broadcast_events(vec![event], at_ms, None);
        self.emit(Effect::Publish);
        let Some(i) = self.seat_index(seat_id) else {
            return;
        };
        let seat = &mut self.seats[i];
        let colour = seat.colour;
        seat.bot = Some(SeatBot::new(level, seed));
        // The stored seat (written with the event) keeps the person's token hash with the
        // bot's level: once the room is gone, that token still learns how the game ended
        // (`ws::finished_game`). A bot seat never resumes by token, restored or not
        // (`Core::restore_seat`). The old session token no longer resumes the seat.
        seat.token_hash = String::new();
        seat.grace_until = None;
        // A connection still on the seat (the leaver awaiting its `ok`, or a player who
        // timed out) watches from now on.
        if let Some(conn) = seat.conn.take() {
            self.spectators.push(conn);
        }
        self.obs
            .bot_took_over(&self.code, self.game_id, colour, level, reason);
        self.presence();
    }
}
