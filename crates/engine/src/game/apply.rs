//! Applying actions: the public turn procedure (roll, move, bonus moves, timeouts,
//! abandonment), the repeat rules and the third-repeat penalty, with errors that name the
//! rule (reference §2 and the §3 matrix).

use super::*;

impl Game {
    // ----- applying actions ------------------------------------------------------------

    /// Applies `action` and returns the new state with the events it caused, in order.
    /// An illegal action returns an [`ActionError`] naming the violated rule; `self` is
    /// never changed.
    pub fn apply(&self, action: &Action) -> Result<(Game, Vec<Event>), ActionError> {
        let mut g = *self;
        let events = g.play(action)?;
        Ok((g, events))
    }

    /// Applies `action` in place and returns its events. On error the game is unchanged.
    pub fn play(&mut self, action: &Action) -> Result<Vec<Event>, ActionError> {
        let mut events = Vec::new();
        let mut next = *self;
        next.play_into(action, &mut events)?;
        *self = next;
        Ok(events)
    }

    pub(super) fn play_into(
        &mut self,
        action: &Action,
        ev: &mut Vec<Event>,
    ) -> Result<(), ActionError> {
        use ErrorKind as K;
        if let Stage::Finished(o) = self.stage {
            return Err(ActionError::new(
                K::GameOver,
                "R-WIN",
                format!("the game is over: {} won", o.winner),
            ));
        }
        match *action {
            Action::Abandon { colour } => return self.abandon(colour, ev),
            Action::Timeout => return self.timeout(ev),
            Action::Roll { dice } => return self.roll(dice, ev),
            _ => {}
        }
        if !matches!(self.stage, Stage::Move(_)) {
            return Err(ActionError::new(
                K::AwaitingRoll,
                "R-ROLL",
                format!("{} must roll the dice first", self.turn),
            ));
        }
        // A position read from outside may not be settled yet (a live game always is):
        // what cannot be played is forfeited first, with its events, as `legal_actions`
        // assumes. Errors are explained on the position as the player saw it.
        let seen = *self;
        if matches!(self.stage, Stage::Move(t) if t.nbonus > 0) {
            self.forfeit_bonus_if_stuck(ev, &mut Steps::new());
        }
        let (Stage::Move(t), Stage::Move(t0)) = (self.stage, seen.stage) else {
            return Err(ActionError::new(
                K::AwaitingRoll,
                "R-ROLL",
                "no throw is being played",
            ));
        };
        let as_seen = || {
            seen.action_to_step(action, &t0)
                .map(|s0| seen.diagnose(s0, &seen.legal_steps()))
        };
        let step = match self.action_to_step(action, &t) {
            Ok(step) => step,
            Err(e) => return Err(as_seen().unwrap_or(e)),
        };
        let Some(node) = self.check_legal(step) else {
            return Err(as_seen().unwrap_or_else(|_| self.diagnose(step, &self.legal_steps())));
        };
        *self = node;
        self.exec(step, None, ev);
        self.settle(ev);
        Ok(())
    }

    /// The settled node when `step` is legal (the same answer as membership in
    /// [`Game::legal_steps`], but only the step's own play and the best play are
    /// searched, and the best stops at the first play reaching the upper bound).
    pub(super) fn check_legal(&self, step: Step) -> Option<Game> {
        let mut node = *self;
        let mut steps = Steps::new();
        node.forfeit_bonus_if_stuck(&mut Discard, &mut steps);
        if !steps.as_slice().contains(&step) {
            return None;
        }
        let remaining = match node.stage {
            Stage::Move(t) => t.remaining() as u16,
            _ => 0,
        };
        let counted = node.pending_count();
        let top = node.best(counted);
        if node.all_or_none_blocked(top) {
            return None;
        }
        let mine = Self::child_value(&node, step, None, remaining, counted);
        let top = node.key(top);
        if mine.is_none() || node.key(mine) != top {
            return None;
        }
        // D-18: when an exit starts a best play, only exits may be played first.
        if !matches!(step, Step::Exit(_)) {
            let exit_first = steps.as_slice().iter().any(|&s| {
                matches!(s, Step::Exit(_))
                    && node.key(Self::child_value(&node, s, None, remaining, counted)) == top
            });
            if exit_first {
                return None;
            }
        }
        Some(node)
    }

    pub(super) fn action_to_step(&self, action: &Action, t: &Throw) -> Result<Step, ActionError> {
        use ErrorKind as K;
        let colour = self.mover();
        let bonus_due = self.bonus_due(t);
        match *action {
            Action::Exit => {
                if bonus_due {
                    return Err(self.bonus_first(t));
                }
                if t.second_exit {
                    return Ok(Step::Exit(0)); // D-32: the first 5's second piece
                }
                let mask = self
                    .exit_parts(t)
                    .ok_or_else(|| Refusal::NoFive.into_error(colour, 0))?;
                Ok(Step::Exit(mask))
            }
            Action::Move {
                piece,
                die,
                capture,
            } => {
                if piece as usize >= PIECES {
                    return Err(Refusal::NoSuchPiece.into_error(colour, piece));
                }
                if bonus_due {
                    return Err(self.bonus_first(t));
                }
                if t.second_exit {
                    return Err(ActionError::new(
                        K::NotAllowed,
                        "D-32",
                        "the first 5's second piece comes out now (exit); the 5 moves nothing else",
                    ));
                }
                let d = t
                    .unused()
                    .find(|&(_, v)| v == die)
                    .map(|(i, _)| i)
                    .ok_or_else(|| {
                        ActionError::new(
                            K::DieNotAvailable,
                            "R-MOVE",
                            format!(
                                "no unused die shows {die} (unused: {:?})",
                                t.unused().map(|(_, v)| v).collect::<Vec<_>>()
                            ),
                        )
                    })?;
                Ok(Step::Move(piece, d as u8, capture))
            }
            Action::Bonus {
                piece,
                amount,
                capture,
            } => {
                if piece as usize >= PIECES {
                    return Err(Refusal::NoSuchPiece.into_error(colour, piece));
                }
                match (t.pending_bonus(), t.bonus_slot(amount)) {
                    (None, _) => Err(ActionError::new(
                        K::Bonus,
                        "R-BONUS",
                        format!("{colour} has no bonus move pending"),
                    )),
                    (Some(_), _) if !bonus_due => Err(ActionError::new(
                        K::Bonus,
                        "D-4",
                        "bonus moves are played after every die in this rule set",
                    )),
                    (Some(_), None) => Err(ActionError::new(
                        K::Bonus,
                        "R-BONUS",
                        format!(
                            "no pending bonus of {amount} squares (pending: {:?})",
                            t.pending()
                        ),
                    )),
                    (Some(_), Some(slot)) => Ok(Step::Bonus(piece, slot as u8, capture)),
                }
            }
            Action::Roll { .. } | Action::Timeout | Action::Abandon { .. } => Err(
                ActionError::new(K::AwaitingMove, "R-MOVE", "unexpected action"),
            ),
        }
    }

    pub(super) fn bonus_first(&self, t: &Throw) -> ActionError {
        ActionError::new(
            ErrorKind::Bonus,
            "R-BONUS",
            format!(
                "a bonus move of {} squares must be played first (D-4)",
                t.pending_bonus().unwrap_or(0)
            ),
        )
    }

    /// Names the rule an action breaks, given the legal steps: first what makes the
    /// step impossible on its own, else why another play ranks above it.
    pub(super) fn diagnose(&self, step: Step, sc: &Scoring) -> ActionError {
        self.raw_refusal(step)
            .unwrap_or_else(|| Self::not_allowed(step, sc))
    }

    /// Why `step` cannot be played at all in this position (R-MOVE, R-EXIT-1, R-BONUS,
    /// seed 004's partner choice, D-29), or `None` when it could be.
    fn raw_refusal(&self, step: Step) -> Option<ActionError> {
        let k = self.mover_index();
        let colour = Colour::ALL[k];
        // Raw feasibility is judged on the position as the player saw it (before any
        // automatic forfeit of an impossible bonus).
        let raw = |i: u8, n: u8, capture: bool| -> Option<ActionError> {
            match self.plan_move(k, i as usize, n) {
                Err(r) => Some(r.into_error(colour, i)),
                Ok(l) if capture && l.partner.is_none() => {
                    Some(Refusal::NoPartnerChoice.into_error(colour, i))
                }
                Ok(l) if !capture && l.must_take => Some(
                    Refusal::PairOffSafe(Location::from_progress(colour, l.to))
                        .into_error(colour, i),
                ),
                Ok(_) => None,
            }
        };
        match (step, self.stage) {
            (Step::Exit(_), _) => self.plan_exit(k).err().map(|r| r.into_error(colour, 0)),
            (Step::Move(i, d, capture), Stage::Move(t)) => {
                raw(i, self.steps_for(k, t.parts[d as usize], &t), capture)
            }
            (Step::Bonus(i, slot, capture), Stage::Move(t)) => {
                if !self.bonus_taker(self.pos[k][i as usize]) {
                    Some(Refusal::NotATaker.into_error(colour, i))
                } else {
                    raw(
                        i,
                        t.pending().get(slot as usize).copied().unwrap_or(0),
                        capture,
                    )
                }
            }
            (_, _) => Some(Refusal::NoFive.into_error(colour, 0)),
        }
    }

    /// Why a step that is possible on its own is not among the legal ones: the ranking
    /// rule (R-BLOCK, R-DOUBLES, R-EXIT-1, D-2, R-OPEN, D-28) another play wins by.
    fn not_allowed(step: Step, sc: &Scoring) -> ActionError {
        let (node, legal) = (&sc.node, sc.legal.as_slice());
        let scored = || sc.raw.as_slice().iter().zip(sc.values);
        let top = scored().filter_map(|(_, v)| v).max().unwrap_or(0);
        let mine = scored().find(|(s, _)| **s == step).and_then(|(_, v)| v);
        let allowed = legal
            .iter()
            .map(|&s| node.step_to_action(s).to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let (rule, why) = match mine {
            None => (
                "R-BLOCK",
                "the two pieces of a blockade may not move on together to a new square",
            ),
            Some(_) if node.all_or_none_blocked(Some(top)) || legal.is_empty() => (
                "R-DOUBLES",
                "the doubles bonus is played with all four parts or not at all",
            ),
            Some(m)
                if m / W_EXIT < top / W_EXIT
                    || legal.iter().any(|s| matches!(s, Step::Exit(_))) =>
            {
                ("R-EXIT-1", "a piece must come out of the nest first")
            }
            Some(m) if (m % W_EXIT) / W_DIE < (top % W_EXIT) / W_DIE => (
                "D-2",
                "another play uses more dice (must play as many dice as possible)",
            ),
            Some(m) if (m % W_DIE) / W_OPEN < (top % W_DIE) / W_OPEN => {
                ("R-OPEN", "this throw must open a blockade")
            }
            Some(m) if node.in_bonus_phase() && m % BONUS_BITS < top % BONUS_BITS => (
                "D-28",
                "another order of the pending bonus moves plays more of them",
            ),
            Some(_) => (
                "D-2",
                "when only one die can be played it must be the larger",
            ),
        };
        ActionError::new(
            ErrorKind::NotAllowed,
            rule,
            format!("{why}; legal now: {allowed}"),
        )
    }

    /// Advances past forfeited bonuses and unplayable dice, ending the throw when it is
    /// over (R-MUST, R-BONUS, R-DOUBLES).
    ///
    /// Invariant (R-BONUS, D-28, D-30): the throw never ends while a pending bonus can
    /// be played, and every pending bonus it ends with is reported as forfeited.
    pub(super) fn settle(&mut self, ev: &mut Vec<Event>) {
        let mut buf = Steps::new();
        loop {
            let Stage::Move(t0) = self.stage else {
                return;
            };
            if t0.done {
                self.forfeit_all_bonuses(ev);
                self.end_throw(ev);
                return;
            }
            if self.forfeit_bonus_if_stuck(ev, &mut buf) {
                // Raw steps always include a legal one, except where some plays are
                // forbidden outright (blockades moving on together; the all-or-none bonus).
                let may_be_empty = self.rules.no_moving_blockade_together || t0.bonus14;
                if !may_be_empty || !self.legal_steps().legal.is_empty() {
                    return;
                }
                if let Stage::Move(t) = self.stage {
                    if t.remaining() > 0 && t.nbonus > 0 {
                        // No play of the dice is allowed: they are lost, the bonuses'
                        // turn comes (D-30).
                        self.lose_dice(ev);
                        continue;
                    }
                }
            }
            if let Stage::Move(t) = self.stage {
                if let Some(d) = t.remaining_dice() {
                    ev.push(Event::NoLegalMove {
                        colour: self.turn,
                        dice: d,
                    });
                }
                // Only bonuses that no legal play can take are left (every play forbidden).
                self.forfeit_all_bonuses(ev);
                self.end_throw(ev);
            }
            return;
        }
    }

    pub(super) fn end_throw(&mut self, ev: &mut Vec<Event>) {
        let Stage::Move(t) = self.stage else {
            return;
        };
        self.prev_unplayed = self.rules.third_repeat_needs_played_second && t.used_count() == 0;
        let again = !t.done
            && self.is_repeat(&t.dice)
            && !(t.bonus14
                && self.rules.doubles_bonus == DoublesBonus::AsManyAsPossible
                && t.used_count() < t.nparts as usize);
        if again {
            // R-DOUBLES, D-9: roll again, even when no die could be played.
            self.stage = Stage::Roll;
            ev.push(Event::RollAgain { colour: self.turn });
        } else {
            self.timeouts[self.turn.index()] = 0;
            self.pass_turn(ev);
        }
    }

    /// A throw that earns another throw (R-DOUBLES; a six with one die).
    pub(super) fn is_repeat(&self, dice: &Dice) -> bool {
        match self.rules.roll_again_on {
            RollAgainOn::Doubles => dice.is_doubles(),
            RollAgainOn::Six => dice.values().first() == Some(&6),
        }
    }

    /// The next active colour after `from` in the turn direction (R-ORDER).
    pub(super) fn next_colour(&self, from: Colour) -> Colour {
        let step = match self.rules.turn_direction {
            TurnDirection::Clockwise => COLOURS - 1,
            TurnDirection::CounterClockwise => 1,
        };
        let mut k = from.index();
        for _ in 0..COLOURS {
            k = (k + step) % COLOURS;
            if self.seats[k] == SeatStatus::Playing {
                return Colour::ALL[k];
            }
        }
        from
    }

    pub(super) fn pass_turn(&mut self, ev: &mut Vec<Event>) {
        let from = self.turn;
        let to = self.next_colour(from);
        self.turn = to;
        self.stage = Stage::Roll;
        self.doubles = 0;
        self.last_moved = None;
        self.prev_unplayed = false;
        ev.push(Event::TurnPassed { from, to });
    }

    pub(super) fn roll(&mut self, dice: Dice, ev: &mut Vec<Event>) -> Result<(), ActionError> {
        use ErrorKind as K;
        if !matches!(self.stage, Stage::Roll) {
            return Err(ActionError::new(
                K::AwaitingMove,
                "R-MOVE",
                format!("{} has already rolled; play a legal move", self.turn),
            ));
        }
        if dice.len() != self.rules.dice as usize {
            return Err(ActionError::new(
                K::BadDice,
                "R-ROLL",
                format!(
                    "this rule set throws {} dice, got {}",
                    self.rules.dice,
                    dice.len()
                ),
            ));
        }
        let colour = self.turn;
        let mk = self.mover_index();
        let repeat = self.is_repeat(&dice);
        if repeat {
            self.doubles += 1;
        }
        ev.push(Event::DiceRolled {
            colour,
            dice,
            doubles_in_row: self.doubles,
        });
        if repeat && self.doubles >= 3 && self.rules.third_repeat != ThirdRepeat::None {
            self.third_repeat_penalty(mk, ev);
            self.timeouts[colour.index()] = 0;
            self.pass_turn(ev);
            return Ok(());
        }
        let mut t = Throw::new(dice);
        if dice.is_doubles()
            && self.rules.doubles_bonus != DoublesBonus::None
            && self.pos[mk].iter().all(|&p| p != NEST)
        {
            // Seeds 002/003: tops and bottoms, 14 squares in four parts.
            let (a, b) = (dice.values()[0], 7 - dice.values()[0]);
            t.parts = [a, a, b, b];
            t.nparts = 4;
            t.bonus14 = true;
        }
        let forces_open = match self.rules.open_on {
            OpenOn::Doubles => dice.is_doubles(),
            OpenOn::Six => dice.values().first() == Some(&6),
            OpenOn::Never => false,
        };
        let track_together = self.rules.no_moving_blockade_together && dice.is_doubles();
        if forces_open || track_together {
            // R-OPEN, D-15: every blockade with one of the mover's pieces, home column included.
            for i in 0..PIECES {
                let c = cell(mk, self.pos[mk][i]);
                if c == 0 || !self.is_blockade(c) {
                    continue;
                }
                let g = mk * PIECES + i;
                let (n, occ) = self.occupants(c, g);
                if n == 1 && (occ[0] / PIECES != mk || occ[0] > g) {
                    t.open.push(g, occ[0], c);
                }
            }
            t.must_open = forces_open && t.open.len > 0;
        }
        self.stage = Stage::Move(t);
        self.settle(ev);
        Ok(())
    }

    /// R-THIRD: the third repeat in a row is not played; a piece goes to the nest. `k`
    /// is the colour whose pieces the thrower moves (a finished pair player moves the
    /// partner's); the event names the thrower (`self.turn`) and, apart, the colour of
    /// the piece sent home when it is not the thrower's.
    pub(super) fn third_repeat_penalty(&mut self, k: usize, ev: &mut Vec<Event>) {
        let colour = self.turn;
        let victim: Option<PieceId> = match self.rules.third_repeat {
            // The last moved piece, whatever its colour (a finished pair player moves the
            // partner's pieces): nothing goes home when it is in the home column or goal.
            ThirdRepeat::LastMovedToNest => self.last_moved.filter(|id| {
                let p = self.pos[id.colour.index()][id.piece as usize];
                (EXIT..=LAST_RING).contains(&p)
                    && !(self.rules.third_repeat_needs_played_second && self.prev_unplayed)
            }),
            ThirdRepeat::MostAdvancedToNest => (0..PIECES)
                .filter(|&i| self.pos[k][i] != NEST && self.pos[k][i] != GOAL)
                .max_by_key(|&i| self.pos[k][i])
                .map(|i| PieceId {
                    colour: Colour::ALL[k],
                    piece: i as u8,
                }),
            ThirdRepeat::None => None,
        };
        let from = victim.map(|id| self.location(id));
        if let Some(id) = victim {
            self.relocate(id.gid(), NEST);
        }
        ev.push(Event::ThirdDoublesPenalty {
            colour,
            piece: victim.map(|id| id.piece),
            from,
            piece_colour: victim.map(|id| id.colour).filter(|&c| c != colour),
        });
    }

    pub(super) fn timeout(&mut self, ev: &mut Vec<Event>) -> Result<(), ActionError> {
        let colour = self.turn;
        let k = colour.index();
        self.timeouts[k] = self.timeouts[k].saturating_add(1);
        ev.push(Event::TimedOut {
            colour,
            consecutive: self.timeouts[k],
        });
        self.forfeit_all_bonuses(ev); // R-CLOCK: pending bonuses are lost with the turn
        self.pass_turn(ev);
        Ok(())
    }

    pub(super) fn abandon(
        &mut self,
        colour: Colour,
        ev: &mut Vec<Event>,
    ) -> Result<(), ActionError> {
        let k = colour.index();
        if !matches!(self.seats[k], SeatStatus::Playing | SeatStatus::Finished) {
            return Err(ActionError::new(
                ErrorKind::NotPlaying,
                "R-LEAVE",
                format!("{colour} is not playing in this game"),
            ));
        }
        let was_playing = self.seats[k] == SeatStatus::Playing;
        self.seats[k] = SeatStatus::Abandoned;
        for i in 0..PIECES {
            if self.pos[k][i] != NEST {
                self.relocate(k * PIECES + i, NEST);
            }
        }
        ev.push(Event::PlayerAbandoned { colour });
        if self.turn == colour && was_playing {
            self.forfeit_all_bonuses(ev); // R-LEAVE: the throw ends with the player
        }
        let active = self.active_colours();
        let one_team_left = self.rules.teams
            && !active.is_empty()
            && active
                .iter()
                .all(|c| c.index() % 2 == active[0].index() % 2);
        if active.len() == 1 || one_team_left {
            let winner = active[0];
            let mate = active.iter().copied().find(|c| *c != winner);
            self.finish(
                Outcome {
                    winner,
                    reason: WinReason::Forfeit,
                    partner: mate,
                },
                ev,
            );
        } else if active.is_empty() {
            self.finish_by_places(k, ev);
        } else if self.turn == colour && was_playing {
            self.pass_turn(ev);
        }
        Ok(())
    }
}
