//! Changing the state: relocating pieces, captures, bonus moves earned, reaching the goal,
//! victory, and executing one planned step (reference §2, §3).

use super::*;

impl Game {
    // ----- mutation ----------------------------------------------------------------

    /// Moves piece `g` to progress `to`, keeping arrival order (D-6); returns the
    /// event for a blockade it leaves, if any.
    pub(super) fn relocate(&mut self, g: usize, to: u8) -> Option<Event> {
        let mut opened = None;
        let k = g / PIECES;
        let from = self.gid_pos(g);
        let from_cell = cell(k, from);
        if from_cell != 0 && self.occ[from_cell] == 2 {
            let (n, occ) = self.occupants(from_cell, g);
            if n == 1 {
                let was_blockade = self.is_blockade(from_cell);
                self.late &= !(1 << occ[0]);
                if was_blockade {
                    opened = Some(Event::BlockadeOpened {
                        colour: Colour::ALL[k],
                        at: Location::from_progress(Colour::ALL[k], from),
                    });
                }
            }
        }
        if from_cell != 0 {
            self.occ[from_cell] -= 1;
        }
        self.pos[k][g % PIECES] = to;
        self.late &= !(1 << g);
        let to_cell = cell(k, to);
        if to_cell != 0 {
            if self.occ[to_cell] == 1 {
                self.late |= 1 << g;
            }
            self.occ[to_cell] += 1;
        }
        opened
    }

    pub(super) fn capture(&mut self, victim: usize, by: usize) -> Event {
        let vk = victim / PIECES;
        let square = Location::from_progress(Colour::ALL[vk], self.gid_pos(victim));
        let other = cell(vk, self.gid_pos(victim));
        let (n, occ) = self.occupants(other, victim);
        if n == 1 {
            self.late &= !(1 << occ[0]);
        }
        self.occ[other] -= 1;
        self.pos[vk][victim % PIECES] = NEST;
        self.late &= !(1 << victim);
        if self.last_moved.map(PieceId::gid) == Some(victim) {
            self.last_moved = None; // D-7: it is in the nest, no longer the last moved
        }
        Event::PieceCaptured {
            colour: Colour::ALL[vk],
            piece: (victim % PIECES) as u8,
            square: match square {
                Location::Ring(s) => s,
                _ => 0,
            },
            by: Colour::ALL[by],
        }
    }

    pub(super) fn earn_bonus<S: Sink>(&mut self, amount: u8, reason: BonusReason, sink: &mut S) {
        if amount == 0 {
            return;
        }
        if let Stage::Move(t) = &mut self.stage {
            t.push_bonus(amount);
        }
        sink.push(Event::BonusEarned {
            colour: self.turn,
            amount,
            reason,
        });
    }

    /// After colour `k`'s piece reached the goal: victory, a finishing place, or the
    /// goal bonus (R-WIN, R-BONUS).
    pub(super) fn reached_goal<S: Sink>(&mut self, k: usize, sink: &mut S) {
        let all_in = self.pos[k].iter().all(|&p| p == GOAL);
        if !all_in {
            self.earn_bonus(self.rules.goal_bonus, BonusReason::Goal, sink);
            return;
        }
        let colour = Colour::ALL[k];
        match self.rules.game_end {
            GameEnd::FirstToFinish => self.finish(
                Outcome {
                    winner: colour,
                    reason: WinReason::Goal,
                    partner: None,
                },
                sink,
            ),
            GameEnd::FirstTeam => {
                if self.places[k] == 0 {
                    self.places[k] = self.next_place();
                    sink.push(Event::PlayerFinished {
                        colour,
                        place: self.places[k],
                    });
                }
                let mate = partner(k);
                if self.pos[mate].iter().all(|&p| p == GOAL) {
                    self.finish(
                        Outcome {
                            winner: Colour::ALL[mate],
                            reason: WinReason::Goal,
                            partner: Some(colour),
                        },
                        sink,
                    );
                } else if self.rules.goal_bonus_for_last_piece {
                    self.earn_bonus(self.rules.goal_bonus, BonusReason::Goal, sink);
                }
            }
            GameEnd::PlayOn => {
                self.places[k] = self.next_place();
                sink.push(Event::PlayerFinished {
                    colour,
                    place: self.places[k],
                });
                self.seats[k] = SeatStatus::Finished;
                let left: Vec<usize> = (0..COLOURS)
                    .filter(|&c| self.seats[c] == SeatStatus::Playing)
                    .collect();
                if left.len() <= 1 {
                    if let Some(&last) = left.first() {
                        self.places[last] = self.next_place();
                    }
                    self.finish_by_places(k, sink);
                } else if let Stage::Move(t) = &mut self.stage {
                    t.done = true; // seed 001: "deja de lanzar el dado y pasa turno"
                }
            }
        }
    }

    pub(super) fn next_place(&self) -> u8 {
        self.places.iter().copied().max().unwrap_or(0) + 1
    }

    /// Ends the game by places (play-on, or nobody left playing): the colour placed
    /// first wins by the goal; `k` when no place is given.
    pub(super) fn finish_by_places<S: Sink>(&mut self, k: usize, sink: &mut S) {
        let winner = (0..COLOURS).find(|&c| self.places[c] == 1).unwrap_or(k);
        self.finish(
            Outcome {
                winner: Colour::ALL[winner],
                reason: WinReason::Goal,
                partner: None,
            },
            sink,
        );
    }

    pub(super) fn finish<S: Sink>(&mut self, o: Outcome, sink: &mut S) {
        self.forfeit_all_bonuses(sink); // the game is over: nothing more is played
        self.stage = Stage::Finished(o);
        self.turn = o.winner;
        sink.push(Event::GameWon {
            winner: o.winner,
            reason: o.reason,
            partner: o.partner,
        });
    }

    pub(super) fn exec<S: Sink>(&mut self, step: Step, hint: Option<Landing>, sink: &mut S) {
        let k = self.mover_index();
        let Stage::Move(mut t) = self.stage else {
            return;
        };
        match step {
            Step::Exit(mask) => {
                let Ok((i, victim, bonus)) = self.plan_exit(k) else {
                    return;
                };
                if mask == 0 {
                    // D-32: the first 5's second piece, now that the bonus is played.
                    t.second_exit = false;
                    self.stage = Stage::Move(t);
                    self.exit_piece(k, i, victim, bonus, sink);
                    return;
                }
                // Variant `two-out` (seed 001 "al sacar el primer 5"): the colour's first 5
                // of the game brings out two pieces, room permitting (D-23).
                let first_five = self.rules.two_out_on_first_five && self.first_five[k];
                self.first_five[k] = false;
                for d in 0..4 {
                    if mask & (1 << d) != 0 {
                        t.used[d] = true;
                    }
                }
                self.stage = Stage::Move(t);
                self.exit_piece(k, i, victim, bonus, sink);
                if first_five {
                    let earned = matches!(self.stage, Stage::Move(t) if t.nbonus > 0);
                    if earned && self.rules.two_out_bonus_between_exits {
                        // D-32 (D-4): the bonus the first exit earned is played at once;
                        // the second piece comes out after it (`Step::Exit(0)`).
                        if let Stage::Move(t) = &mut self.stage {
                            t.second_exit = true;
                        }
                    } else if let Ok((j, victim, bonus)) = self.plan_exit(k) {
                        // The second exit is an exit like any other: it captures as
                        // R-EXIT-CAPTURE says, and is barred only by two own pieces (or an
                        // empty nest).
                        self.exit_piece(k, j, victim, bonus, sink);
                    }
                }
            }
            Step::Move(i, d, take) => {
                t.used[d as usize] = true;
                self.stage = Stage::Move(t);
                let n = self.steps_for(k, t.parts[d as usize], &t);
                let die = t.parts[d as usize];
                self.exec_move(k, i as usize, n, MoveKind::Die, Some(die), take, hint, sink);
            }
            Step::Bonus(i, slot, take) => {
                let n = t.take_bonus(slot as usize).unwrap_or(0);
                self.stage = Stage::Move(t);
                self.exec_move(k, i as usize, n, MoveKind::Bonus, None, take, hint, sink);
            }
        }
    }

    /// Brings nest piece `i` of colour `k` out onto its exit square, capturing `victim`
    /// first (R-EXIT-1, R-EXIT-CAPTURE; `bonus`: the capture earns the capture bonus).
    pub(super) fn exit_piece<S: Sink>(
        &mut self,
        k: usize,
        i: usize,
        victim: Option<usize>,
        bonus: bool,
        sink: &mut S,
    ) {
        let captured = victim.map(|v| self.capture(v, k));
        self.relocate(k * PIECES + i, EXIT);
        self.note_moved(k, i);
        sink.push(Event::PieceExited {
            colour: Colour::ALL[k],
            piece: i as u8,
            square: exit_square(k),
        });
        if let Some(e) = captured {
            sink.push(e);
            if bonus {
                self.earn_bonus(self.rules.capture_bonus, BonusReason::Capture, sink);
            }
        }
    }

    /// Records piece `i` of colour `k` as the last moved (R-THIRD, D-16, D-21), once the
    /// turn has a repeat: before that, R-THIRD can never apply in this turn.
    #[inline]
    pub(super) fn note_moved(&mut self, k: usize, i: usize) {
        if self.doubles > 0 {
            self.last_moved = Some(PieceId {
                colour: Colour::ALL[k],
                piece: i as u8,
            });
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn exec_move<S: Sink>(
        &mut self,
        k: usize,
        i: usize,
        n: u8,
        by: MoveKind,
        die: Option<u8>,
        take_partner: bool,
        hint: Option<Landing>,
        sink: &mut S,
    ) {
        let colour = Colour::ALL[k];
        let l = match hint {
            Some(l) => l,
            None => match self.plan_move(k, i, n) {
                Ok(l) => l,
                Err(_) => return,
            },
        };
        let from = Location::from_progress(colour, self.pos[k][i]);
        let opened = self.relocate(k * PIECES + i, l.to);
        self.note_moved(k, i);
        sink.push(Event::PieceMoved {
            colour,
            piece: i as u8,
            from,
            to: Location::from_progress(colour, l.to),
            steps: n,
            by,
            bounced: l.bounced,
            die: die.filter(|&d| d != n),
        });
        if let Some(e) = opened {
            sink.push(e);
        }
        let victim = l
            .capture
            .or(l.partner.filter(|_| take_partner))
            .map(usize::from);
        if let Some(v) = victim {
            let e = self.capture(v, self.turn.index());
            sink.push(e);
            self.earn_bonus(self.rules.capture_bonus, BonusReason::Capture, sink);
        } else if l.to == GOAL {
            self.reached_goal(k, sink);
        }
    }
}
