//! Play: members' commands, actions through the engine with the clock's bookkeeping
//! (R-CLOCK, D-12), timeouts and their strikes, grace periods (R-LEAVE), abandonment.

use crate::core::{Core, Effect, EventsCommit, Then, Work};
use crate::{encode, ConnId, Member, Ms, Refusal, SeatCmd};
use parchis_engine::{Action, Colour, Dice, Expect, SeatStatus};
use parchis_protocol::{
    AbandonReason, Emote, ErrorCode, OnAbandon, RoomEvent, RoomStatus, ServerMessage,
};

impl Core {
    /// A fresh turn clock from `now` (unix ms).
    pub(super) fn fresh_deadline(&self, now: Ms) -> Ms {
        now + i64::from(self.settings.turn_clock_secs) * 1000
    }

    /// A member's command: membership checks, then (after an expired clock is applied)
    /// the command itself.
    pub(super) fn command(
        &mut self,
        conn: ConnId,
        member: Member,
        req: u64,
        seq: u64,
        cmd: SeatCmd,
        now: Ms,
    ) {
        let seat_id = match member {
            Member::Spectator => {
                return match cmd {
                    SeatCmd::Leave => self.then_do([Work::ReplyOk {
                        conn,
                        req,
                        drop_link: true,
                    }]),
                    // Spectators can never send emotes, in any room: nothing a spectator
                    // sends reaches the players.
                    SeatCmd::Emote(_) => self.reply_err(
                        conn,
                        req,
                        &Refusal::new(
                            ErrorCode::SpectatorCannotAct,
                            "spectators cannot send emotes",
                        ),
                    ),
                    _ => self.reply_err(conn, req, &Refusal::code(ErrorCode::SpectatorCannotAct)),
                };
            }
            Member::Player(id) => id,
        };
        let Some(seat) = self.seat_by_id(seat_id) else {
            let refusal = Refusal::new(ErrorCode::NotJoined, "you no longer hold a seat");
            return self.reply_err(conn, req, &refusal);
        };
        if seat.conn != Some(conn) {
            let refusal = Refusal::new(ErrorCode::NotJoined, "another connection holds this seat");
            return self.reply_err(conn, req, &refusal);
        }
        if cmd == SeatCmd::Leave {
            return self.leave(seat_id, conn, req, now);
        }
        if cmd == SeatCmd::Rematch {
            // Not checked against the seq: the others' rematch requests move it.
            return self.rematch(seat_id, conn, req, now);
        }
        if let SeatCmd::Emote(emote) = cmd {
            // Not checked against the seq either: emotes change nothing in the room.
            return self.emote(seat_id, conn, req, emote, now);
        }
        let checked = Work::Checked {
            conn,
            seat_id,
            req,
            seq,
            cmd,
        };
        // An expired clock is applied first (R-CLOCK): the command is then judged
        // against the next throw.
        if self.status == RoomStatus::Playing {
            self.then_do([Work::Timeout, checked]);
        } else {
            self.then_do([checked]);
        }
    }

    /// A seated player's quick emote: broadcast to everyone in the room (not part of the
    /// event stream, not stored), at most [`crate::emote_limit::EMOTE_BURST`] per seat
    /// in any [`crate::emote_limit::EMOTE_WINDOW_MS`]. Refused for a seat that
    /// abandoned the game.
    fn emote(&mut self, seat_id: u64, conn: ConnId, req: u64, emote: Emote, now: Ms) {
        let Some((colour, from)) = self
            .seat_by_id(seat_id)
            .filter(|s| !s.abandoned)
            .map(|s| (s.colour, s.account))
        else {
            let refusal = Refusal::new(
                ErrorCode::SpectatorCannotAct,
                "you abandoned the game: only players send emotes",
            );
            return self.reply_err(conn, req, &refusal);
        };
        if !self.emotes.allow(seat_id, now) {
            let refusal = Refusal::new(
                ErrorCode::RateLimited,
                format!(
                    "at most {} emotes per seat in {} s",
                    crate::emote_limit::EMOTE_BURST,
                    crate::emote_limit::EMOTE_WINDOW_MS / 1000
                ),
            );
            return self.reply_err(conn, req, &refusal);
        }
        let msg = ServerMessage::Emote {
            room: self.code.clone(),
            colour,
            emote,
        };
        self.emit(Effect::Emote {
            frame: encode(&msg),
            from,
        });
        self.reply_ok(conn, req);
    }

    /// Leaving: a lobby seat is freed; a player in a game abandons it (R-LEAVE).
    fn leave(&mut self, seat_id: u64, conn: ConnId, req: u64, now: Ms) {
        let reply = Work::ReplyOk {
            conn,
            req,
            drop_link: true,
        };
        match self.status {
            RoomStatus::Lobby => {
                self.free_seat(seat_id, "left", now);
                self.then_do([reply]);
            }
            RoomStatus::Playing => {
                let colour = self.seat_by_id(seat_id).map(|s| s.colour);
                match colour {
                    Some(colour) => self.then_do([
                        Work::Abandon {
                            colour,
                            reason: AbandonReason::Left,
                        },
                        reply,
                    ]),
                    None => self.then_do([reply]),
                }
            }
            RoomStatus::Finished => self.then_do([reply]),
        }
    }

    /// A command whose sender holds its seat, after an expired clock was applied.
    pub(super) fn checked_command(
        &mut self,
        conn: ConnId,
        seat_id: u64,
        req: u64,
        seq: u64,
        cmd: SeatCmd,
        now: Ms,
    ) {
        // A roll or play from a player whose turn it is not (the clock ran out and the
        // turn passed, say) is `not_your_turn`, whatever seq it was based on: that is the
        // reason it cannot be applied, and the documented code after a deadline.
        if matches!(cmd, SeatCmd::Roll | SeatCmd::Play(_)) && self.status == RoomStatus::Playing {
            if let Some(refusal) = self.seat_index(seat_id).and_then(|i| self.not_to_act(i)) {
                return self.reply_err(conn, req, &refusal);
            }
        }
        if seq != self.seq {
            let refusal = Refusal::new(
                ErrorCode::StaleSeq,
                format!(
                    "command based on seq {seq}; the room is at seq {}",
                    self.seq
                ),
            );
            return self.reply_err(conn, req, &refusal);
        }
        let Some(i) = self.seat_index(seat_id) else {
            return self.reply_err(conn, req, &Refusal::code(ErrorCode::NotJoined));
        };
        match cmd {
            SeatCmd::ChooseColour(c) => self.choose_colour(i, c, conn, req),
            SeatCmd::ClientSeed(seed) => match self.set_client_seed(i, seed) {
                Ok(()) => self.reply_ok(conn, req),
                Err(refusal) => self.reply_err(conn, req, &refusal),
            },
            SeatCmd::Start => self.start(i, conn, req, now, Vec::new()),
            SeatCmd::Roll | SeatCmd::Play(_) => match self.action_for(i, cmd) {
                Ok(action) => {
                    let then = Then::Reply { conn, req };
                    if let Err(refusal) = self.apply(action, Vec::new(), then, now) {
                        self.reply_err(conn, req, &refusal);
                    }
                }
                Err(refusal) => self.reply_err(conn, req, &refusal),
            },
            SeatCmd::Leave | SeatCmd::Rematch | SeatCmd::Emote(_) => self.reply_ok(conn, req),
        }
    }

    /// Why seat `i` may not act in the running game now (`not_your_turn`), if so.
    fn not_to_act(&self, i: usize) -> Option<Refusal> {
        let game = self.game.as_ref()?;
        if self.seats[i].abandoned {
            return Some(Refusal::new(
                ErrorCode::NotYourTurn,
                "you abandoned the game",
            ));
        }
        (game.turn() != self.seats[i].colour).then(|| {
            Refusal::new(
                ErrorCode::NotYourTurn,
                format!("it is {}'s turn", game.turn()),
            )
        })
    }

    /// The engine action for seat `i`'s `roll` or `play`, if it may act.
    fn action_for(&mut self, i: usize, cmd: SeatCmd) -> Result<Action, Refusal> {
        match self.status {
            RoomStatus::Lobby => return Err(Refusal::code(ErrorCode::GameNotStarted)),
            RoomStatus::Finished => return Err(Refusal::code(ErrorCode::GameOver)),
            RoomStatus::Playing => {}
        }
        if self.game.is_none() {
            return Err(Refusal::code(ErrorCode::GameNotStarted));
        }
        if self.paused.is_some() {
            return Err(Refusal::code(ErrorCode::ClockPaused));
        }
        if let Some(refusal) = self.not_to_act(i) {
            return Err(refusal);
        }
        match cmd {
            SeatCmd::Roll => {
                let dice = Dice::from_slice(&self.throw())
                    .map_err(|m| Refusal::new(ErrorCode::Internal, m))?;
                Ok(Action::Roll { dice })
            }
            SeatCmd::Play(p) => Ok(Action::from(p)),
            _ => Err(Refusal::code(ErrorCode::Internal)),
        }
    }

    /// Applies `action` to the game: engine check (an illegal action is refused here and
    /// nothing changes), clock bookkeeping, then the write-ahead commit of its events
    /// (after `prelude`); `then` runs once they are stored.
    pub(super) fn apply(
        &mut self,
        action: Action,
        prelude: Vec<RoomEvent>,
        then: Then,
        now: Ms,
    ) -> Result<(), Refusal> {
        let Some(game) = self.game else {
            return Err(Refusal::code(ErrorCode::GameNotStarted));
        };
        let (next, engine_events) = game.apply(&action).map_err(|e| Refusal {
            code: ErrorCode::IllegalAction,
            message: e.message.clone(),
            rule: Some(e.rule.to_owned()),
        })?;
        let mut events = prelude;
        // A roll uses up the next throw number once durable (docs/FAIR_DICE.md).
        let thrown = matches!(action, Action::Roll { .. });
        let throw = thrown.then(|| self.dice.next());
        events.extend(engine_events.into_iter().map(|event| {
            RoomEvent::Game {
                throw: matches!(event, parchis_engine::Event::DiceRolled { .. })
                    .then_some(throw)
                    .flatten(),
                event,
            }
        }));
        // A new throw gets a fresh clock (R-CLOCK, D-12), except when someone else's
        // abandonment leaves the current throw as it was.
        let new_throw = match (next.expect(), &action) {
            (Expect::Roll { colour }, Action::Abandon { .. }) => {
                colour != game.turn() || !matches!(game.expect(), Expect::Roll { .. })
            }
            (Expect::Roll { .. }, _) => true,
            _ => false,
        };
        let mut deadline = self.deadline;
        // While the referee holds the clock (an expelled seat's abandon), no clock runs:
        // the resume gives the player to act what was left at the pause.
        if new_throw && self.paused.is_none() {
            let d = self.fresh_deadline(now);
            events.push(RoomEvent::Turn {
                colour: next.turn(),
                deadline_ms: d,
            });
            deadline = Some(d);
        }
        if next.outcome().is_some() {
            deadline = None;
        }
        // The new deadline is durable with the action: the `turn` event carries it, and
        // recovery reads it from there.
        self.stage_events(EventsCommit {
            game: Some(next),
            events,
            at_ms: now,
            deadline,
            turn: true,
            action: Some(action),
            thrown,
            then,
        });
        Ok(())
    }

    /// What a committed step does next.
    pub(super) fn then_ok(&mut self, then: Then, _now: Ms) {
        match then {
            Then::Reply { conn, req } => {
                // Events durable and their frames queued; the reply goes next.
                self.emit(crate::Effect::Acted { conn, req });
                self.reply_ok(conn, req);
            }
            Then::Timeout { colour } => {
                let n = self
                    .game
                    .map(|g| g.consecutive_timeouts(colour))
                    .unwrap_or(0);
                self.obs.turn_timed_out(&self.code, self.game_id, colour, n);
                if n >= self.settings.timeouts_to_abandon {
                    self.then_do([Work::Abandon {
                        colour,
                        reason: AbandonReason::Timeouts,
                    }]);
                }
            }
            Then::Abandon { colour, reason } => {
                self.obs.abandoned(&self.code, self.game_id, colour, reason);
                if let Some(seat) = self.seats.iter_mut().find(|s| s.colour == colour) {
                    seat.abandoned = true;
                    seat.grace_until = None;
                }
                self.emit(crate::Effect::Publish);
            }
            Then::Paused { colour, remaining } => {
                self.paused = Some((colour, remaining));
                self.emit(crate::Effect::Publish);
            }
            Then::Resumed => {
                self.paused = None;
                self.emit(crate::Effect::Publish);
            }
            Then::Bot { .. } | Then::Nothing => {}
        }
    }

    /// What a step whose write failed does instead (the room is as it was); a command
    /// it carried is answered `refusal`.
    pub(super) fn then_failed(&mut self, then: Then, refusal: &Refusal, now: Ms) {
        match then {
            Then::Reply { conn, req } => {
                self.reply_err(conn, req, refusal);
            }
            Then::Timeout { .. } => {
                crate::note!(self, Warn, "timeout not applied; retrying in 1 s", "");
                if self.deadline.is_some() {
                    self.deadline = Some(now + crate::core::TIMEOUT_RETRY_MS);
                }
            }
            Then::Abandon { colour, .. } => {
                crate::note!(self, Warn, "abandon not applied", "colour={colour}");
            }
            Then::Bot { colour } => {
                crate::note!(self, Warn, "bot action not applied", "colour={colour}");
            }
            Then::Paused { .. } | Then::Resumed | Then::Nothing => {}
        }
    }

    /// [`Input::ClockOwed`](crate::Input::ClockOwed): nothing could be written for a
    /// while, the player's own commands included, so the player to act gets a fresh
    /// full clock from `now` (R-CLOCK: nobody loses a throw to a server fault), stored
    /// and announced by a `turn` event, like a restore's. Nothing when no game runs or
    /// the clock left ends at least as late.
    pub(super) fn clock_owed(&mut self, now: Ms) {
        let (Some(game), Some(deadline)) = (self.game, self.deadline) else {
            return;
        };
        if self.status != RoomStatus::Playing || game.outcome().is_some() {
            return;
        }
        let fresh = self.fresh_deadline(now);
        if deadline >= fresh {
            return;
        }
        crate::note!(
            self,
            Info,
            "a fresh clock after a write in doubt",
            "colour={} deadline_ms={fresh}",
            game.turn()
        );
        self.stage_events(EventsCommit {
            game: None,
            events: vec![RoomEvent::Turn {
                colour: game.turn(),
                deadline_ms: fresh,
            }],
            at_ms: now,
            deadline: Some(fresh),
            turn: true,
            action: None,
            thrown: false,
            then: Then::Nothing,
        });
    }

    /// The turn clock ran out (if it did by `now`): the engine's timeout (R-CLOCK).
    pub(super) fn timeout_if_due(&mut self, now: Ms) {
        if self.deadline.is_none_or(|d| d > now) {
            return;
        }
        let Some(game) = self.game else { return };
        let colour = game.turn();
        if let Err(e) = self.apply(Action::Timeout, Vec::new(), Then::Timeout { colour }, now) {
            crate::note!(
                self,
                Warn,
                "timeout refused by the engine",
                "error={}",
                e.message
            );
            self.deadline = Some(now + crate::core::TIMEOUT_RETRY_MS);
        }
    }

    /// A disconnected seat's grace period ended (R-LEAVE): freed in the lobby, abandoned
    /// in a game.
    pub(super) fn grace_expired(&mut self, seat_id: u64, now: Ms) {
        let Some(i) = self.seat_index(seat_id) else {
            return;
        };
        if self.seats[i].grace_until.is_none_or(|g| g > now) {
            return;
        }
        self.seats[i].grace_until = None;
        if self.seats[i].conn.is_some() {
            return;
        }
        let colour = self.seats[i].colour;
        match self.status {
            RoomStatus::Lobby => {
                self.free_seat(seat_id, "grace_expired", now);
            }
            RoomStatus::Playing => {
                self.then_do([Work::Abandon {
                    colour,
                    reason: AbandonReason::Disconnected,
                }]);
            }
            RoomStatus::Finished => {}
        }
    }

    /// A seat leaves the game: a bot takes over (`on_abandon: bot`) or it forfeits.
    pub(super) fn abandon(&mut self, colour: Colour, reason: AbandonReason, now: Ms) {
        let Some(game) = self.game else { return };
        if game.outcome().is_some() || game.seat(colour) != SeatStatus::Playing {
            return;
        }
        if self.settings.on_abandon == OnAbandon::Bot {
            if let Some(i) = self
                .seats
                .iter()
                .position(|s| s.colour == colour && s.bot.is_none())
            {
                return self.bot_take_over(i, reason, now);
            }
        }
        self.forfeit(colour, reason, now);
    }

    /// A seat forfeits: the engine's abandon, announced by `abandoned`.
    pub(super) fn forfeit(&mut self, colour: Colour, reason: AbandonReason, now: Ms) {
        let Some(game) = self.game else { return };
        if game.outcome().is_some() || game.seat(colour) != SeatStatus::Playing {
            return;
        }
        let prelude = vec![RoomEvent::Abandoned { colour, reason }];
        let then = Then::Abandon { colour, reason };
        if let Err(e) = self.apply(Action::Abandon { colour }, prelude, then, now) {
            crate::note!(
                self,
                Warn,
                "abandon not applied",
                "colour={colour} error={}",
                e.message
            );
        }
    }
}
