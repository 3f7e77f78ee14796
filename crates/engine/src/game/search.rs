//! Step generation and the must-play search (R-MUST, the bonus rules, opening blockades):
//! which steps of a throw are legal, found by replaying steps on copies of the state.

use super::*;

impl Game {
    // ----- step generation and the must-play search ---------------------------------

    pub(super) fn raw_steps(&self, out: &mut Steps) {
        self.for_each_step(|st, hint| {
            out.push_with(st, hint);
            true
        });
    }

    /// Whether a bonus move must be played before anything else now.
    #[inline]
    pub(super) fn bonus_due(&self, t: &Throw) -> bool {
        t.nbonus > 0 && (self.rules.bonus_timing == BonusTiming::Immediately || t.remaining() == 0)
    }

    /// Whether this node is past the dice, playing the bonuses after them (D-4 `after
    /// dice` timing): only there does the number of bonus moves played count (D-28).
    #[inline]
    pub(super) fn in_bonus_phase(&self) -> bool {
        match self.stage {
            Stage::Move(t) => {
                self.rules.bonus_timing == BonusTiming::AfterDice && self.bonus_due(&t)
            }
            _ => false,
        }
    }

    /// The part of a play's value that the choice at this node compares: the bonus
    /// count only in the bonus phase (D-28), never while dice remain (D-2, D-14).
    #[inline]
    pub(super) fn key(&self, v: Option<u16>) -> Option<u16> {
        if self.in_bonus_phase() {
            v
        } else {
            v.map(|v| v / BONUS_BITS)
        }
    }

    /// Calls `f` with every step possible right now, before the must-play filters,
    /// until `f` returns false. (D-13 is handled by the search, which tries every order.)
    #[inline]
    pub(super) fn for_each_step(&self, mut f: impl FnMut(Step, Option<Landing>) -> bool) {
        let Stage::Move(t) = self.stage else { return };
        if t.done {
            return;
        }
        let k = self.mover_index();
        if self.bonus_due(&t) {
            // D-28: the pending bonuses may be played in any order (one step per amount).
            let pending = t.pending();
            for (slot, &amount) in pending.iter().enumerate() {
                if pending[..slot].contains(&amount) {
                    continue;
                }
                let slot = slot as u8;
                for i in 0..PIECES {
                    let p = self.pos[k][i];
                    if !self.bonus_taker(p) {
                        continue;
                    }
                    if let Ok(l) = self.plan_move(k, i, amount) {
                        if !l.must_take && !f(Step::Bonus(i as u8, slot, false), Some(l)) {
                            return;
                        }
                        if l.partner.is_some() && !f(Step::Bonus(i as u8, slot, true), Some(l)) {
                            return;
                        }
                    }
                }
            }
            return;
        }
        if t.second_exit {
            // D-32: once the bonus is played, the first 5's second piece comes out.
            if self.plan_exit(k).is_ok() {
                f(Step::Exit(0), None);
            }
            return;
        }
        if t.remaining() == 0 {
            return;
        }
        if let Some(mask) = self.exit_parts(&t) {
            if self.plan_exit(k).is_ok() && !f(Step::Exit(mask), None) {
                return;
            }
        }
        let v = t.part_values();
        for (d, part) in t.unused() {
            if (0..d).any(|e| !t.used[e] && v[e] == part) {
                continue; // an equal unused part comes first: one step is enough
            }
            let n = self.steps_for(k, part, &t);
            for i in 0..PIECES {
                if let Ok(l) = self.plan_move(k, i, n) {
                    if !l.must_take && !f(Step::Move(i as u8, d as u8, false), Some(l)) {
                        return;
                    }
                    if l.partner.is_some() && !f(Step::Move(i as u8, d as u8, true), Some(l)) {
                        return;
                    }
                }
            }
        }
    }

    pub(super) fn bonus_taker(&self, p: u8) -> bool {
        match self.rules.bonus_takers {
            BonusTakers::RingOnly => (EXIT..=LAST_RING).contains(&p),
            BonusTakers::OutOfNestAndGoal => p != NEST && p != GOAL,
        }
    }

    /// Settles what cannot be played (R-BONUS, D-30): with bonuses waiting for the dice
    /// (after-dice timing) and no die playable, the dice are lost (`no_legal_move`) and
    /// the bonuses' turn comes; bonuses that no piece can take, in any order, are
    /// forfeited (`bonus_forfeited`). Returns whether the throw still has a step to play;
    /// `buf` holds the raw steps.
    pub(super) fn forfeit_bonus_if_stuck<S: Sink>(
        &mut self,
        sink: &mut S,
        buf: &mut Steps,
    ) -> bool {
        loop {
            *buf = Steps::new();
            let Stage::Move(mut t) = self.stage else {
                return false;
            };
            self.raw_steps(buf);
            if !buf.is_empty() {
                return true;
            }
            if t.nbonus == 0 || t.done {
                return false;
            }
            if !self.bonus_due(&t) {
                self.lose_dice(sink);
                continue;
            }
            if let Some(amount) = t.pop_bonus() {
                self.stage = Stage::Move(t);
                sink.push(Event::BonusForfeited {
                    colour: self.turn,
                    amount,
                });
            }
        }
    }

    /// D-30: the unused dice cannot be played while bonuses wait for them: they are
    /// lost (reported as `no_legal_move`) and the pending bonuses become due.
    pub(super) fn lose_dice<S: Sink>(&mut self, sink: &mut S) {
        if let Stage::Move(mut t) = self.stage {
            if let Some(d) = t.remaining_dice() {
                sink.push(Event::NoLegalMove {
                    colour: self.turn,
                    dice: d,
                });
            }
            t.dice_lost = true;
            self.stage = Stage::Move(t);
        }
    }

    /// Reports every pending bonus as forfeited and clears them: the throw ends with
    /// them unplayed (R-BONUS; R-CLOCK, R-LEAVE, R-WIN, D-27).
    pub(super) fn forfeit_all_bonuses<S: Sink>(&mut self, sink: &mut S) {
        if let Stage::Move(mut t) = self.stage {
            while let Some(amount) = t.pop_bonus() {
                sink.push(Event::BonusForfeited {
                    colour: self.turn,
                    amount,
                });
            }
            self.stage = Stage::Move(t);
        }
    }

    /// Value of `step` itself. `counted`: how many of the pending bonuses, from the
    /// first, are those the choice being searched compares (see [`Game::counted_after`]).
    pub(super) fn step_value(&self, step: Step, counted: u8) -> u16 {
        match step {
            // The first 5's second piece (D-32) is no choice: like the second piece of
            // an exit without a bonus between, it adds nothing.
            Step::Exit(0) => 0,
            Step::Exit(mask) => W_EXIT + W_DIE * mask.count_ones() as u16,
            Step::Move(..) => W_DIE,
            // D-28: after the dice, play as many of the pending bonuses as any order can —
            // of those pending at the choice, not of the bonuses earned on the way.
            Step::Bonus(_, slot, _)
                if self.rules.bonus_timing == BonusTiming::AfterDice && slot < counted =>
            {
                W_BONUS
            }
            Step::Bonus(..) => 0,
        }
    }

    /// D-28 compares the orders of the bonuses pending at the choice: they are the first
    /// `counted` of the pending list (bonuses earned later are appended after them). After
    /// `step`, how many of the pending bonuses are still among them.
    #[inline]
    pub(super) fn counted_after(step: Step, counted: u8) -> u8 {
        match step {
            Step::Bonus(_, slot, _) if slot < counted => counted - 1,
            _ => counted,
        }
    }

    /// The bonuses a choice at this node compares (D-28): every bonus pending now.
    #[inline]
    pub(super) fn pending_count(&self) -> u8 {
        match self.stage {
            Stage::Move(t) => t.nbonus,
            _ => 0,
        }
    }

    pub(super) fn step_parts(step: Step) -> u16 {
        match step {
            Step::Exit(m) => m.count_ones() as u16,
            Step::Move(..) => 1,
            Step::Bonus(..) => 0,
        }
    }

    /// Value of the end of a play: `None` when it moves a blockade on together
    /// (seeds 002/003); otherwise R-OPEN satisfied and the larger-die preference.
    pub(super) fn leaf_value(&self) -> Option<u16> {
        let Stage::Move(t) = self.stage else {
            return Some(0);
        };
        let mut v = 0;
        if t.open.len > 0 {
            let mut open = false;
            for (idx, &(a, b)) in t.open.as_slice().iter().enumerate() {
                let (a, b) = (a as usize, b as usize);
                let ca = cell(a / PIECES, self.gid_pos(a));
                let together = ca != 0 && ca == cell(b / PIECES, self.gid_pos(b));
                if !together {
                    open = true;
                } else if self.rules.no_moving_blockade_together && ca != t.open.cells[idx] as usize
                {
                    return None;
                }
            }
            if open && t.must_open {
                v += W_OPEN;
            }
        }
        if self.rules.one_die_playable == OneDiePlayable::Larger
            && t.nparts == 2
            && t.used_count() == 1
        {
            let used = if t.used[0] { t.parts[0] } else { t.parts[1] };
            v += W_LARGER * used as u16;
        }
        Some(v)
    }

    /// Value of taking `s` from `node` and then playing as well as possible; `counted` as
    /// in [`Game::step_value`].
    pub(super) fn child_value(
        node: &Game,
        s: Step,
        hint: Option<Landing>,
        remaining: u16,
        counted: u8,
    ) -> Option<u16> {
        let mut child = *node;
        child.exec(s, hint, &mut Discard);
        let over = match child.stage {
            Stage::Finished(_) => true,
            Stage::Move(t) => t.done,
            Stage::Roll => false,
        };
        if over {
            // D-14: a play that wins (or finishes the player) counts as using every die.
            let used = Self::step_parts(s).min(remaining);
            let open = (node.open_required()) as u16 * W_OPEN;
            Some(node.step_value(s, counted) + W_DIE * (remaining - used) + open)
        } else {
            child
                .best(Self::counted_after(s, counted))
                .map(|b| node.step_value(s, counted) + b)
        }
    }

    /// An upper bound of [`Game::best`] at this node: every remaining part played, as
    /// many exits as the dice and the nest allow, R-OPEN satisfied, the larger die.
    pub(super) fn bound(&self) -> u16 {
        let Stage::Move(t) = self.stage else { return 0 };
        let k = self.mover_index();
        let nest = self.pos[k].iter().filter(|&&p| p == NEST).count() as u16;
        let fives = t.unused().filter(|&(_, v)| v == 5).count() as u16;
        let sum5 =
            (t.remaining() == 2 && t.nparts == 2 && !t.bonus14 && t.parts[0] + t.parts[1] == 5)
                as u16;
        let exits = (fives + sum5).min(nest);
        W_EXIT * exits
            + W_DIE * t.remaining() as u16
            + self.open_required() as u16 * W_OPEN
            // The larger-die preference only scores plays that leave a die unplayed,
            // which never beat playing every remaining die: it matters at leaves only.
            + if self.rules.one_die_playable == OneDiePlayable::Larger && t.remaining() == 0 {
                W_LARGER * 6
            } else {
                0
            }
    }

    /// Best value over all plays continuing from this position (D-14 order of filters),
    /// stopping as soon as a play reaches the upper bound. `None`: every play is
    /// forbidden. `counted`: the first pending bonuses whose playing counts (D-28; at
    /// the node where the choice is made, [`Game::pending_count`]).
    pub(super) fn best(&self, counted: u8) -> Option<u16> {
        let mut node = *self;
        let mut counted = counted;
        loop {
            let Stage::Move(mut t) = node.stage else {
                return node.leaf_value();
            };
            let remaining = t.remaining() as u16;
            // In the bonus phase every order of the bonuses is searched (D-28); before
            // it, the search stops at the first play reaching the bound (bonus count aside).
            let bonus_phase = node.in_bonus_phase();
            let bound = node.bound() / BONUS_BITS;
            let mut best: Option<u16> = None;
            let mut any = false;
            node.for_each_step(|s, hint| {
                any = true;
                let v = Self::child_value(&node, s, hint, remaining, counted);
                best = best.max(v);
                bonus_phase || best.is_none_or(|b| b / BONUS_BITS < bound)
            });
            if any {
                // When every continuation is forbidden, stopping here is the play.
                return best.or_else(|| node.leaf_value());
            }
            if t.nbonus == 0 || t.done {
                return node.leaf_value();
            }
            if !node.bonus_due(&t) {
                t.dice_lost = true; // D-30: the dice cannot be played, the bonuses can come
            } else {
                t.pop_bonus(); // R-BONUS: no order lets a piece take it, it is lost
                counted = counted.saturating_sub(1); // it was the first pending one
            }
            node.stage = Stage::Move(t);
        }
    }

    pub(super) fn open_required(&self) -> bool {
        matches!(self.stage, Stage::Move(t) if t.open.len > 0 && t.must_open)
    }

    /// The steps a player may take now, after every filter (D-14): the first steps of
    /// the best plays, and exits first when an exit starts a best play (D-18).
    /// Also returns the settled node and every step's value.
    pub(super) fn legal_steps(&self) -> Scoring {
        let mut node = *self;
        let mut raw = Steps::new();
        node.forfeit_bonus_if_stuck(&mut Discard, &mut raw);
        let remaining = match node.stage {
            Stage::Move(t) => t.remaining() as u16,
            _ => 0,
        };
        let mut values = [None; 24];
        let mut top = None;
        let counted = node.pending_count();
        for (i, &s) in raw.as_slice().iter().enumerate() {
            values[i] = Self::child_value(&node, s, raw.hints[i], remaining, counted);
            top = top.max(values[i]);
        }
        let mut legal = Steps::new();
        if !node.all_or_none_blocked(top) {
            let mut exits_only = false;
            let top = node.key(top);
            for (i, &s) in raw.as_slice().iter().enumerate() {
                if values[i].is_some() && node.key(values[i]) == top {
                    exits_only |= matches!(s, Step::Exit(_));
                    legal.push(s);
                }
            }
            if exits_only {
                let mut only = Steps::new();
                for &s in legal.as_slice() {
                    if matches!(s, Step::Exit(_)) {
                        only.push(s);
                    }
                }
                legal = only;
            }
        }
        Scoring {
            node,
            raw,
            values,
            legal,
        }
    }

    /// Seed 002: the four parts of the doubles bonus are played all or not at all.
    pub(super) fn all_or_none_blocked(&self, top: Option<u16>) -> bool {
        match self.stage {
            Stage::Move(t) if t.bonus14 && self.rules.doubles_bonus == DoublesBonus::AllOrNone => {
                let full = W_DIE * t.remaining() as u16;
                top.is_none_or(|v| (v % W_EXIT) / W_DIE * W_DIE < full)
            }
            _ => false,
        }
    }

    pub(super) fn step_to_action(&self, s: Step) -> Action {
        match (s, self.stage) {
            (Step::Exit(_), _) => Action::Exit,
            (Step::Move(i, d, capture), Stage::Move(t)) => Action::Move {
                piece: i,
                die: t.parts[d as usize],
                capture,
            },
            (Step::Bonus(i, slot, capture), Stage::Move(t)) => Action::Bonus {
                piece: i,
                amount: t.pending().get(slot as usize).copied().unwrap_or(0),
                capture,
            },
            (Step::Move(i, _, capture), _) | (Step::Bonus(i, _, capture), _) => Action::Move {
                piece: i,
                die: 0,
                capture,
            },
        }
    }

    /// The complete set of legal actions for the player to move, in a stable order
    /// (exit, then moves by die and piece, or bonus moves by piece). Empty when the game
    /// awaits a roll or has ended: a roll is any [`Action::Roll`] with valid dice, and
    /// [`Action::Timeout`] and [`Action::Abandon`] come from outside the rules.
    pub fn legal_actions(&self) -> Vec<Action> {
        if !matches!(self.stage, Stage::Move(_)) {
            return Vec::new();
        }
        let sc = self.legal_steps();
        sc.legal
            .as_slice()
            .iter()
            .map(|&s| sc.node.step_to_action(s))
            .collect()
    }
}
