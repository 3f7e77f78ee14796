//! # parchis-bots
//!
//! Computer players for the Parchís engine. Pure: no I/O, no clock except the search
//! budget of [`ExpectimaxBot`], randomness from a seeded RNG.
//!
//! A [`Bot`] picks one of the legal actions of a position in the *move* stage; throwing
//! the dice is not a decision (the server throws them), so callers handle
//! [`parchis_engine::Expect::Roll`] themselves (see [`play_game`]).
//!
//! Levels ([`BotLevel`]):
//! - `random`: a uniform legal action;
//! - `greedy`: the action whose resulting position scores best under a static evaluation
//!   (captures, safety, progress, blockades, goal; see [`eval`]);
//! - `expectimax`: plays out every way to finish its own throw, then averages over the
//!   next player's 21 possible throws (that player answering greedily), within a time
//!   budget (20 ms by default).
//!
//! ```
//! use parchis_bots::{Bot, BotLevel};
//! use parchis_engine::Game;
//! let game: Game = "online Y:30,n,n,n R:27,n,n,n turn=R move=3,1".parse().unwrap();
//! let mut bot = BotLevel::Greedy.build(1);
//! // Red captures yellow on 30 with the 3.
//! let action = bot.choose(&game, &game.legal_actions());
//! assert_eq!(action.to_string(), "move 0 3");
//! ```

pub mod eval;
mod expectimax;

pub use eval::{Evaluator, Weights};
pub use expectimax::{ExpectimaxBot, ExpectimaxConfig};

use parchis_engine::{Action, Dice, Expect, Game, Outcome};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A computer player.
pub trait Bot {
    /// Chooses one of `legal` (the game's [`Game::legal_actions`]) for the player to act
    /// in `game`. `legal` must not be empty; if it is (the game awaits a roll or has
    /// ended: nothing to choose), the bot returns [`Action::Timeout`], which a caller
    /// should not apply.
    fn choose(&mut self, game: &Game, legal: &[Action]) -> Action;
}

/// The bot levels, weakest first. Serialized in snake_case (`"random"`, `"greedy"`,
/// `"expectimax"`), the same text as [`fmt::Display`] and [`FromStr`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BotLevel {
    /// A uniform legal action.
    Random,
    /// The best action under the static evaluation, one action ahead.
    Greedy,
    /// Search of the own throw and expectation over the next throw.
    Expectimax,
}

impl BotLevel {
    /// Every level, weakest first.
    pub const ALL: [BotLevel; 3] = [BotLevel::Random, BotLevel::Greedy, BotLevel::Expectimax];

    /// The level's name: `random`, `greedy`, `expectimax`.
    pub fn name(self) -> &'static str {
        match self {
            BotLevel::Random => "random",
            BotLevel::Greedy => "greedy",
            BotLevel::Expectimax => "expectimax",
        }
    }

    /// A bot of this level with default settings; `seed` drives its random choices
    /// (ties, the random level).
    pub fn build(self, seed: u64) -> Box<dyn Bot + Send> {
        match self {
            BotLevel::Random => Box::new(RandomBot::new(seed)),
            BotLevel::Greedy => Box::new(GreedyBot::new(seed)),
            BotLevel::Expectimax => Box::new(ExpectimaxBot::new(ExpectimaxConfig::default())),
        }
    }
}

impl fmt::Display for BotLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for an unknown bot level name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownLevel(pub String);

impl fmt::Display for UnknownLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown bot level {:?} (expected random, greedy or expectimax)",
            self.0
        )
    }
}

impl std::error::Error for UnknownLevel {}

impl FromStr for BotLevel {
    type Err = UnknownLevel;
    /// Accepts the snake_case names, case-insensitively.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BotLevel::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownLevel(s.to_string()))
    }
}

/// Plays a uniformly random legal action.
#[derive(Clone, Debug)]
pub struct RandomBot {
    rng: StdRng,
}

impl RandomBot {
    /// A random bot seeded with `seed`.
    pub fn new(seed: u64) -> RandomBot {
        RandomBot {
            rng: StdRng::seed_from_u64(seed),
        }
    }
}

impl Bot for RandomBot {
    fn choose(&mut self, _game: &Game, legal: &[Action]) -> Action {
        if legal.is_empty() {
            return Action::Timeout;
        }
        legal[self.rng.gen_range(0..legal.len())]
    }
}

/// Plays the action whose resulting position scores best for the player to act under
/// the [`Evaluator`]; ties go to a random one of the best.
#[derive(Clone, Debug)]
pub struct GreedyBot {
    eval: Evaluator,
    rng: StdRng,
}

impl GreedyBot {
    /// A greedy bot with the default weights.
    pub fn new(seed: u64) -> GreedyBot {
        GreedyBot::with_evaluator(Evaluator::default(), seed)
    }

    /// A greedy bot with these evaluation weights.
    pub fn with_evaluator(eval: Evaluator, seed: u64) -> GreedyBot {
        GreedyBot {
            eval,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// The score of every legal action (same order as `legal`) for the player to act.
    pub fn scores(&self, game: &Game, legal: &[Action]) -> Vec<f64> {
        let me = game.turn();
        legal
            .iter()
            .map(|a| match game.apply(a) {
                Ok((next, _)) => self.eval.score(&next, me),
                Err(_) => f64::NEG_INFINITY,
            })
            .collect()
    }
}

impl Bot for GreedyBot {
    fn choose(&mut self, game: &Game, legal: &[Action]) -> Action {
        if legal.is_empty() {
            return Action::Timeout;
        }
        let scores = self.scores(game, legal);
        let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let ties: Vec<usize> = (0..legal.len())
            .filter(|&i| scores[i] >= best - 1e-9)
            .collect();
        let pick = if ties.is_empty() {
            0
        } else {
            ties[self.rng.gen_range(0..ties.len())]
        };
        legal[pick]
    }
}

/// Throws the dice for the player to act with `rng`, by the rule set's number of dice.
pub fn roll(game: &Game, rng: &mut impl Rng) -> Action {
    let a = rng.gen_range(1..=6u8);
    let b = rng.gen_range(1..=6u8);
    let dice = if game.rules().dice >= 2 {
        Dice::two(a, b)
    } else {
        Dice::from_slice(&[a])
    };
    match dice {
        Ok(dice) => Action::Roll { dice },
        // Unreachable: the values are always 1..=6.
        Err(_) => Action::Timeout,
    }
}

/// Plays `game` to the end: the dice from `rng`, each move from the bot of the colour to
/// act (`bots(colour)`). Returns the outcome and the number of actions applied, or
/// `None` for the outcome if `max_actions` was reached first.
pub fn play_game(
    mut game: Game,
    bots: &mut dyn FnMut(parchis_engine::Colour) -> usize,
    seats: &mut [Box<dyn Bot + Send>],
    rng: &mut impl Rng,
    max_actions: usize,
) -> (Option<Outcome>, usize) {
    let mut n = 0;
    while n < max_actions {
        let action = match game.expect() {
            Expect::Finished(o) => return (Some(o), n),
            Expect::Roll { .. } => roll(&game, rng),
            Expect::Move { colour, .. } => {
                let legal = game.legal_actions();
                let seat = bots(colour);
                match seats.get_mut(seat) {
                    Some(bot) => bot.choose(&game, &legal),
                    None => return (None, n),
                }
            }
        };
        if game.play(&action).is_err() {
            return (None, n);
        }
        n += 1;
    }
    (game.outcome(), n)
}

#[cfg(test)]
mod tests;
