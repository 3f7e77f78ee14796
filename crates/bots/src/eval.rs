//! Static evaluation of a position from one colour's point of view.
//!
//! Every seated colour gets a value (progress of its pieces, minus the expected loss of
//! pieces within reach of an opponent, plus blockades and safe squares); a colour's score
//! is its own value (and its partner's, in pair play) minus the mean value of its
//! opponents. Finished games score ±[`WIN`].

use parchis_engine::{is_safe, Colour, Expect, Game, Location, SeatStatus, PIECES, RING};

/// Score of a won (positive) or lost (negative) game.
pub const WIN: f64 = 100_000.0;

/// Weights of the evaluation. The defaults were tuned by hand with `parchis-arena`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    /// Value of a piece that has left the nest, before its progress.
    pub out: f64,
    /// Value per square travelled from the exit square.
    pub step: f64,
    /// Extra value of a piece in the goal (on top of `out + 71 * step`).
    pub goal: f64,
    /// Extra value of a piece in its home column (it can no longer be captured).
    pub home: f64,
    /// Extra value of a ring piece on a safe square.
    pub safe: f64,
    /// Extra value per piece standing in an own blockade on the ring.
    pub blockade: f64,
    /// Multiplier of the expected loss of a piece within reach of opponents.
    pub danger: f64,
    /// Value per square of a pending bonus move of the player to act.
    pub bonus: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            out: 20.0,
            step: 1.0,
            goal: 20.0,
            home: 8.0,
            safe: 2.0,
            blockade: 3.0,
            danger: 1.0,
            bonus: 0.8,
        }
    }
}

/// Probability, for a distance of 1..=12 squares, that one throw lets a piece that far
/// behind land exactly there with one die or the sum of both (index 0 unused).
fn hit_table(dice: u8) -> [f64; 13] {
    let mut t = [0.0; 13];
    if dice >= 2 {
        for (d, slot) in t.iter_mut().enumerate().skip(1) {
            let mut n = 0;
            for a in 1..=6usize {
                for b in 1..=6usize {
                    if a == d || b == d || a + b == d {
                        n += 1;
                    }
                }
            }
            *slot = n as f64 / 36.0;
        }
    } else {
        for slot in t.iter_mut().take(7).skip(1) {
            *slot = 1.0 / 6.0;
        }
    }
    t
}

/// Whether `a` and `b` play on the same side (the same colour, or partners in pair play).
pub fn allied(game: &Game, a: Colour, b: Colour) -> bool {
    a == b || (game.rules().teams && (a.index() + 2) % 4 == b.index())
}

/// Static evaluator with its weights and the dice-dependent hit table.
#[derive(Clone, Copy, Debug)]
pub struct Evaluator {
    /// The weights.
    pub weights: Weights,
    hit2: [f64; 13],
    hit1: [f64; 13],
}

impl Default for Evaluator {
    fn default() -> Self {
        Evaluator::new(Weights::default())
    }
}

/// One piece on the ring, for the reach computation.
#[derive(Clone, Copy)]
struct RingPiece {
    colour: Colour,
    square: u8,
    /// Squares travelled from its exit square (0..=63 on the ring).
    progress: u8,
}

impl Evaluator {
    /// An evaluator with these weights.
    pub fn new(weights: Weights) -> Evaluator {
        Evaluator {
            weights,
            hit2: hit_table(2),
            hit1: hit_table(1),
        }
    }

    /// The value of every colour's position (0 for colours not playing), by colour index.
    pub fn colour_values(&self, game: &Game) -> [f64; 4] {
        let w = &self.weights;
        let hit = if game.rules().dice >= 2 {
            &self.hit2
        } else {
            &self.hit1
        };
        let mut ring: [Option<RingPiece>; 16] = [None; 16];
        let mut count = [0u8; RING as usize + 1];
        for c in Colour::ALL {
            if game.seat(c) != SeatStatus::Playing {
                continue;
            }
            for (i, loc) in game.pieces(c).into_iter().enumerate() {
                if let Location::Ring(sq) = loc {
                    let progress = game
                        .progress(parchis_engine::PieceId {
                            colour: c,
                            piece: i as u8,
                        })
                        .unwrap_or(0);
                    ring[c.index() * PIECES + i] = Some(RingPiece {
                        colour: c,
                        square: sq,
                        progress,
                    });
                    count[sq as usize] += 1;
                }
            }
        }
        let mut values = [0.0; 4];
        for c in Colour::ALL {
            if game.seat(c) != SeatStatus::Playing {
                continue;
            }
            let mut v = 0.0;
            for (i, loc) in game.pieces(c).into_iter().enumerate() {
                match loc {
                    Location::Nest => {}
                    Location::Goal => v += w.out + 71.0 * w.step + w.goal,
                    Location::HomeColumn(h) => v += w.out + (63.0 + h as f64) * w.step + w.home,
                    Location::Ring(sq) => {
                        let Some(me) = ring[c.index() * PIECES + i] else {
                            continue;
                        };
                        let worth = w.out + me.progress as f64 * w.step;
                        v += worth;
                        if is_safe(sq) {
                            v += w.safe;
                            continue;
                        }
                        if count[sq as usize] >= 2 {
                            // Two pieces on a normal square: an own blockade.
                            v += w.blockade;
                            continue;
                        }
                        let mut survive = 1.0;
                        for other in ring.iter().flatten() {
                            if allied(game, other.colour, c) {
                                continue;
                            }
                            let d = (sq as i32 - other.square as i32).rem_euclid(RING as i32);
                            if (1..=12).contains(&d) && other.progress as i32 + d <= 63 {
                                survive *= 1.0 - hit[d as usize];
                            }
                        }
                        // Losing the piece costs its worth and hands the capturer a bonus.
                        v -= w.danger * (1.0 - survive) * (worth + 20.0 * w.bonus);
                    }
                }
            }
            values[c.index()] = v;
        }
        values
    }

    /// The score of `game` for `me`: ±[`WIN`] once finished, otherwise own (and
    /// partner's) value minus the opponents' mean value, plus a pending bonus of `me`.
    pub fn score(&self, game: &Game, me: Colour) -> f64 {
        match game.expect() {
            Expect::Finished(o) => {
                if allied(game, o.winner, me) {
                    WIN
                } else {
                    -WIN
                }
            }
            other => {
                let values = self.colour_values(game);
                let mut own = 0.0;
                let mut opp = 0.0;
                let mut n_opp = 0usize;
                for c in Colour::ALL {
                    if game.seat(c) != SeatStatus::Playing {
                        continue;
                    }
                    if allied(game, c, me) {
                        own += values[c.index()];
                    } else {
                        opp += values[c.index()];
                        n_opp += 1;
                    }
                }
                let mut s = own - if n_opp > 0 { opp / n_opp as f64 } else { 0.0 };
                if let Expect::Move {
                    colour,
                    bonus: Some(b),
                    ..
                } = other
                {
                    let sign = if allied(game, colour, me) { 1.0 } else { -1.0 };
                    s += sign * self.weights.bonus * b as f64;
                }
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_table_counts_single_dice_and_sums() {
        let t = hit_table(2);
        // distance 1: 11 of 36 throws show a 1.
        assert!((t[1] - 11.0 / 36.0).abs() < 1e-12);
        // distance 5: 11 with a five, plus 1+4, 4+1, 2+3, 3+2.
        assert!((t[5] - 15.0 / 36.0).abs() < 1e-12);
        // distance 12: only 6+6.
        assert!((t[12] - 1.0 / 36.0).abs() < 1e-12);
    }

    #[test]
    fn exposed_piece_is_worth_less_than_a_safe_one() {
        let e = Evaluator::default();
        // Yellow on 30 with red 3 squares behind (27) vs yellow on the safe square 29.
        let exposed: Game = "online Y:30,n,n,n R:27,n,n,n turn=Y roll".parse().unwrap();
        let safe: Game = "online Y:29,n,n,n R:27,n,n,n turn=Y roll".parse().unwrap();
        assert!(e.score(&safe, Colour::Yellow) > e.score(&exposed, Colour::Yellow));
    }
}
