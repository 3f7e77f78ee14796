//! The strongest level: a search of the bot's own throw followed by one chance layer.

use crate::eval::Evaluator;
use crate::Bot;
use parchis_engine::{Action, Colour, Dice, Expect, Game};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Settings of [`ExpectimaxBot`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExpectimaxConfig {
    /// Wall-clock budget of one decision. When it runs out, the leaves not yet searched
    /// keep their static score. Default 20 ms.
    pub budget: Duration,
    /// How many end-of-throw positions (best by static score) get the chance layer.
    /// Default 10. With a generous budget the bot is deterministic.
    pub max_leaves: usize,
}

impl Default for ExpectimaxConfig {
    fn default() -> Self {
        ExpectimaxConfig {
            budget: Duration::from_millis(20),
            max_leaves: 10,
        }
    }
}

/// Expectimax over one throw: every way to finish the bot's own throw (dice, bonus
/// moves) is enumerated; the most promising end positions are then valued by the
/// expectation over the next throw (21 outcomes of two dice, weighted 1/36 or 2/36),
/// the thrower answering greedily; the action leading to the best one is played.
#[derive(Clone, Debug)]
pub struct ExpectimaxBot {
    config: ExpectimaxConfig,
    eval: Evaluator,
}

/// Bound on the actions of one throw (dice, bonuses), against runaway recursion.
const MAX_THROW_DEPTH: usize = 8;

impl ExpectimaxBot {
    /// A bot with these settings and the default evaluation.
    pub fn new(config: ExpectimaxConfig) -> ExpectimaxBot {
        ExpectimaxBot {
            config,
            eval: Evaluator::default(),
        }
    }

    /// Collects every position in which `me`'s current throw is over, reached from `game`,
    /// with the first action that leads there (`first`).
    fn leaves(
        &self,
        game: &Game,
        me: Colour,
        first: Action,
        depth: usize,
        out: &mut HashMap<Game, Action>,
    ) {
        let in_throw = matches!(game.expect(), Expect::Move { colour, .. } if colour == me);
        if !in_throw || depth >= MAX_THROW_DEPTH {
            out.entry(*game).or_insert(first);
            return;
        }
        for a in game.legal_actions() {
            if let Ok((next, _)) = game.apply(&a) {
                self.leaves(&next, me, first, depth + 1, out);
            }
        }
    }

    /// The greedy reply of the player to act: the action scoring best for them.
    fn greedy_step(&self, game: &Game) -> Option<Game> {
        let mover = game.turn();
        let mut best: Option<(f64, Game)> = None;
        for a in game.legal_actions() {
            if let Ok((next, _)) = game.apply(&a) {
                let s = self.eval.score(&next, mover);
                if best.as_ref().is_none_or(|(b, _)| s > *b) {
                    best = Some((s, next));
                }
            }
        }
        best.map(|(_, g)| g)
    }

    /// Expected score for `me` of `game` (awaiting a throw): each throw of the player to
    /// act, played out greedily.
    fn chance(&self, game: &Game, me: Colour) -> f64 {
        let Expect::Roll { colour: thrower } = game.expect() else {
            return self.eval.score(game, me);
        };
        let mut total = 0.0;
        let mut weight = 0.0;
        let two = game.rules().dice >= 2;
        for a in 1..=6u8 {
            let range = if two { a..=6 } else { 1..=1 };
            for b in range {
                let (dice, w) = if two {
                    (Dice::two(a, b), if a == b { 1.0 } else { 2.0 })
                } else {
                    (Dice::from_slice(&[a]), 1.0)
                };
                let Ok(dice) = dice else { continue };
                let Ok((mut g, _)) = game.apply(&Action::Roll { dice }) else {
                    continue;
                };
                let mut steps = 0;
                while steps < MAX_THROW_DEPTH
                    && matches!(g.expect(), Expect::Move { colour, .. } if colour == thrower)
                {
                    match self.greedy_step(&g) {
                        Some(next) => g = next,
                        None => break,
                    }
                    steps += 1;
                }
                total += w * self.eval.score(&g, me);
                weight += w;
            }
        }
        if weight > 0.0 {
            total / weight
        } else {
            self.eval.score(game, me)
        }
    }
}

impl Bot for ExpectimaxBot {
    fn choose(&mut self, game: &Game, legal: &[Action]) -> Action {
        let start = Instant::now();
        if legal.len() <= 1 {
            return legal.first().copied().unwrap_or(Action::Timeout);
        }
        let me = game.turn();
        let mut leaves: HashMap<Game, Action> = HashMap::new();
        for a in legal {
            if let Ok((next, _)) = game.apply(a) {
                self.leaves(&next, me, *a, 1, &mut leaves);
            }
        }
        // Static scores first, best first; ties in a stable order (by the action's
        // position in `legal`, then the position's text).
        let mut scored: Vec<(f64, Game, Action)> = leaves
            .into_iter()
            .map(|(g, a)| (self.eval.score(&g, me), g, a))
            .collect();
        let index = |a: &Action| legal.iter().position(|x| x == a).unwrap_or(usize::MAX);
        scored.sort_by(|x, y| {
            y.0.total_cmp(&x.0)
                .then_with(|| index(&x.2).cmp(&index(&y.2)))
                .then_with(|| x.1.to_string().cmp(&y.1.to_string()))
        });
        let Some(&(_, _, fallback)) = scored.first() else {
            return legal[0];
        };
        let mut best: Option<(f64, Action)> = None;
        for (_, g, a) in scored.iter().take(self.config.max_leaves) {
            if start.elapsed() >= self.config.budget && best.is_some() {
                break;
            }
            let v = self.chance(g, me);
            if best.is_none_or(|(b, _)| v > b) {
                best = Some((v, *a));
            }
        }
        best.map(|(_, a)| a).unwrap_or(fallback)
    }
}
