//! Where a piece can go: the occupancy counts, blockades, and planning a single move or
//! exit (reference §1 board, §2 moves, exits, blockades, the goal and the bounce).

use super::*;

impl Game {
    // ----- occupancy -------------------------------------------------------------

    pub(crate) fn recounted(mut self) -> Game {
        self.recount();
        self
    }

    /// Recomputes the occupancy counts from the piece positions.
    pub(crate) fn recount(&mut self) {
        self.occ = [0; CELLS];
        for k in 0..COLOURS {
            for i in 0..PIECES {
                let c = cell(k, self.pos[k][i]);
                if c != 0 {
                    self.occ[c] += 1;
                }
            }
        }
    }

    /// Pieces on `cell` other than `exclude` (global ids), at most two reported.
    #[inline]
    pub(super) fn occupants(&self, c: usize, exclude: usize) -> (usize, [usize; 2]) {
        let mut n = 0;
        let mut out = [usize::MAX; 2];
        if self.occ[c] == 0 {
            return (0, out);
        }
        for k in 0..COLOURS {
            for i in 0..PIECES {
                let g = k * PIECES + i;
                if g != exclude && cell(k, self.pos[k][i]) == c {
                    if n < 2 {
                        out[n] = g;
                    }
                    n += 1;
                }
            }
        }
        (n, out)
    }

    /// Whether the two pieces on cell `c` form a blockade under these rules (R-BLOCK).
    #[inline]
    pub(super) fn is_blockade(&self, c: usize) -> bool {
        if self.occ[c] < 2 {
            return false;
        }
        // Variant `safe-only` (D-29) acts where pairs form (`plan_move`): no pair that
        // blocks ever stands off a safe square, so every pair here is judged as usual.
        if self.rules.blockade == BlockadeKind::AnyTwo {
            return true;
        }
        if c > RING as usize {
            return true; // a home column holds one colour only
        }
        let safe = is_safe(c as u8);
        let (_, occ) = self.occupants(c, usize::MAX);
        let (a, b) = (occ[0] / PIECES, occ[1] / PIECES);
        a == b
            || self.rules.blockade == BlockadeKind::AnyTwo
            || (self.rules.blockade == BlockadeKind::SameTeam && a % 2 == b % 2)
            || (self.rules.mixed_blockades_on_safe && safe)
    }

    pub(super) fn gid_pos(&self, g: usize) -> u8 {
        self.pos[g / PIECES][g % PIECES]
    }

    pub(super) fn is_late(&self, g: usize) -> bool {
        self.late & (1 << g) != 0
    }

    pub(super) fn loc_of_cell(&self, k: usize, pos: u8) -> Location {
        Location::from_progress(Colour::ALL[k], pos)
    }

    /// Squares a part is worth for colour `k`: a six counts 7 (or 12) when the colour
    /// has no piece in the nest (seeds 001, 004).
    #[inline]
    pub(super) fn steps_for(&self, k: usize, part: u8, t: &Throw) -> u8 {
        match self.rules.six_counts_when_nest_empty {
            Some(x) if part == 6 && !t.bonus14 && self.pos[k].iter().all(|&p| p != NEST) => x,
            _ => part,
        }
    }

    // ----- single moves ------------------------------------------------------------

    /// Plans moving piece `i` of colour `k` forward by `n` squares (R-MOVE, R-BLOCK,
    /// R-CAPTURE, R-SAFE, R-GOAL, R-BOUNCE); the board is not changed.
    pub(super) fn plan_move(&self, k: usize, i: usize, n: u8) -> Result<Landing, Refusal> {
        let p = self.pos[k][i];
        if p == NEST {
            return Err(Refusal::InNest);
        }
        if p == GOAL {
            return Err(Refusal::InGoal);
        }
        let me = k * PIECES + i;
        let own_cell = cell(k, p);
        let (to, bounced) = self.destination(p, n)?;
        self.check_passage(k, p, n, own_cell)?;
        let landing = Landing {
            to,
            capture: None,
            partner: None,
            must_take: false,
            bounced,
        };
        if to == GOAL {
            return Ok(landing);
        }
        self.land(k, me, own_cell, landing)
    }

    /// Where a piece at progress `p` (on the board) ends `n` squares on, and whether it
    /// bounced back from the goal (R-GOAL, R-BOUNCE, variant `exact-last-safe`).
    #[inline]
    fn destination(&self, p: u8, n: u8) -> Result<(u8, bool), Refusal> {
        let raw = p + n;
        if self.rules.exact_count_last_safe && p < LAST_RING && raw > LAST_RING {
            return Err(Refusal::LastSafeExact);
        }
        Ok(if raw > GOAL {
            let back = raw - GOAL;
            if !self.rules.bounce {
                return Err(Refusal::Overshoots);
            }
            if back > HOME_COLUMN {
                return Err(Refusal::BounceTooFar);
            }
            (GOAL - back, true)
        } else {
            (raw, false)
        })
    }

    /// R-BLOCK: a piece of colour `k` moving `n` squares from progress `p` (cell
    /// `own_cell`) passes no blockade but its own.
    #[inline]
    fn check_passage(&self, k: usize, p: u8, n: u8, own_cell: usize) -> Result<(), Refusal> {
        // Squares passed (D-1: a bouncing piece cannot pass a blockade either).
        for s in 1..n {
            let x = p + s;
            let q = if x > GOAL { 2 * GOAL - x } else { x };
            if q == GOAL {
                continue;
            }
            let c = cell(k, q);
            if c != own_cell && self.is_blockade(c) {
                return Err(Refusal::PassesBlockade(self.loc_of_cell(k, q)));
            }
        }
        Ok(())
    }

    /// The landing of piece `me` of colour `k`, from cell `own_cell`, on the ring or
    /// home-column square `landing.to` (R-CAP, D-29, R-SAFE, R-CAPTURE, seed 004's
    /// partner choice).
    #[inline]
    fn land(
        &self,
        k: usize,
        me: usize,
        own_cell: usize,
        mut landing: Landing,
    ) -> Result<Landing, Refusal> {
        let to = landing.to;
        let c = cell(k, to);
        let count = self.occ[c] - (c == own_cell) as u8;
        if count >= 2 {
            return Err(Refusal::Full(self.loc_of_cell(k, to)));
        }
        if count == 1 && self.rules.blockades_only_on_safe && !(to <= LAST_RING && is_safe(c as u8))
        {
            // D-29 (variant `safe-only`, seed 001 "sólo permite formar puentes en los
            // seguros"): a pair that would block may form only on a safe square. A lone
            // partner piece there can still be captured (seed 004's choice loses the
            // blockade option); an opponent's is captured as usual.
            let (_, occ) = self.occupants(c, me);
            let other = occ[0] / PIECES;
            if other == k {
                return Err(Refusal::PairOffSafe(self.loc_of_cell(k, to)));
            }
            if self.rules.partner_capture_choice && other % 2 == k % 2 {
                landing.partner = Some(occ[0] as u8);
                landing.must_take = true;
                return Ok(landing);
            }
        }
        if count == 1 && to <= LAST_RING {
            let (_, occ) = self.occupants(c, me);
            let other = occ[0] / PIECES;
            if other != k {
                let mate = self.rules.teams && other % 2 == k % 2;
                if is_safe(c as u8) {
                    // R-SAFE: no capture on a safe square.
                    if !mate && self.rules.safe_with_opponent == SafeWithOpponent::Forbidden {
                        return Err(Refusal::SafeOccupied(self.loc_of_cell(k, to)));
                    }
                } else if mate && self.rules.partner_capture_choice {
                    landing.partner = Some(occ[0] as u8);
                } else {
                    // R-CAPTURE: a lone opponent piece on a normal ring square.
                    landing.capture = Some(occ[0] as u8);
                }
            }
        }
        Ok(landing)
    }

    /// Plans an exit for colour `k` (R-EXIT-1, R-EXIT-2, R-EXIT-CAPTURE): the nest
    /// piece that comes out, the piece captured, and whether the capture earns a bonus.
    pub(super) fn plan_exit(&self, k: usize) -> Result<(usize, Option<usize>, bool), Refusal> {
        let i = (0..PIECES)
            .find(|&i| self.pos[k][i] == NEST)
            .ok_or(Refusal::NoPieceInNest)?;
        let c = exit_square(k) as usize;
        let own = |g: usize| g / PIECES == k;
        match self.rules.exit_capture {
            ExitCapture::LoneOpponent => match self.occ[c] {
                0 => Ok((i, None, false)),
                1 => {
                    let (_, occ) = self.occupants(c, usize::MAX);
                    if own(occ[0]) {
                        Ok((i, None, false))
                    } else {
                        Ok((i, Some(occ[0]), true))
                    }
                }
                _ => Err(Refusal::ExitBlocked),
            },
            ExitCapture::Online | ExitCapture::Classic | ExitCapture::Pairs => {
                if self.occ[c] < 2 {
                    return Ok((i, None, false));
                }
                let (_, occ) = self.occupants(c, usize::MAX);
                let (a, b) = (occ[0], occ[1]);
                match (own(a), own(b)) {
                    (true, true) => Err(Refusal::ExitBlocked),
                    (true, false) => Ok((i, Some(b), true)),
                    (false, true) => Ok((i, Some(a), true)),
                    (false, false) => {
                        let last = if self.is_late(b) { (b, a) } else { (a, b) };
                        if self.rules.exit_capture == ExitCapture::Pairs {
                            // Seed 004: the opponent team's piece before the partner's,
                            // and no +20 when both pieces were other players'.
                            let opp = |g: usize| (g / PIECES) % 2 != k % 2;
                            let victim = match (opp(last.0), opp(last.1)) {
                                (false, true) => last.1,
                                _ => last.0,
                            };
                            Ok((i, Some(victim), false))
                        } else {
                            // D-6: the one that arrived last.
                            Ok((i, Some(last.0), true))
                        }
                    }
                }
            }
        }
    }

    /// The parts an exit would use now: a part showing 5, else both dice when they sum
    /// to 5.
    pub(super) fn exit_parts(&self, t: &Throw) -> Option<u8> {
        if t.bonus14 {
            return None;
        }
        if self.rules.exit_on_five {
            if let Some((i, _)) = t.unused().find(|&(_, v)| v == 5) {
                return Some(1 << i);
            }
        }
        if self.rules.exit_on_sum_five
            && t.nparts == 2
            && !t.used[0]
            && !t.used[1]
            && t.parts[0] + t.parts[1] == 5
        {
            return Some(0b11);
        }
        None
    }
}
