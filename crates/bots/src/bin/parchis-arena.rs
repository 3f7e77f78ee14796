//! `parchis-arena`: bot against bot for N games, printing each level's win rate with a
//! 95 % Wilson confidence interval as JSON.
//!
//! ```sh
//! cargo run --release -p parchis-bots --bin parchis-arena -- --games 400 --seed 1 --levels expectimax,random
//! ```
//!
//! Seats rotate: in game `i` of `n` seats, the `j`-th level plays colour
//! `(j + i) mod n` and the first thrower is seat `(i / n) mod n`, so over every `n²`
//! games each level has every colour and every turn position equally often.

use clap::Parser;
use parchis_bots::{
    play_game, Bot, BotLevel, ExpectimaxBot, ExpectimaxConfig, GreedyBot, RandomBot,
};
use parchis_engine::{Colour, Game, RuleSet};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde_json::json;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Bot against bot.
#[derive(Parser, Debug)]
#[command(
    name = "parchis-arena",
    version,
    about = "Bot against bot: plays N seeded games between bot levels (one per seat) on the engine and \
             prints each level's win rate with a 95% confidence interval, as JSON."
)]
struct Args {
    /// Number of games.
    #[arg(long, default_value_t = 200)]
    games: u64,
    /// Seed of the dice and of the bots' own randomness.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Comma-separated levels, one per seat (2 to 4): e.g. `expectimax,random` or
    /// `expectimax,greedy,random,random`.
    #[arg(long, default_value = "expectimax,random", value_delimiter = ',')]
    levels: Vec<BotLevel>,
    /// Decision budget of the expectimax bot, in milliseconds.
    #[arg(long, default_value_t = 20)]
    budget_ms: u64,
    /// End-of-throw positions the expectimax bot searches a chance layer for.
    #[arg(long, default_value_t = 10)]
    max_leaves: usize,
    /// Actions after which an unfinished game is abandoned (counted as unfinished).
    #[arg(long, default_value_t = 50_000)]
    max_actions: usize,
}

/// Wilson score interval for `wins` successes in `n` trials at z = 1.96.
fn wilson(wins: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let n = n as f64;
    let p = wins as f64 / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Seat colours in board order for `n` players.
fn colours(n: usize) -> Vec<Colour> {
    match n {
        2 => vec![Colour::Yellow, Colour::Red],
        3 => vec![Colour::Yellow, Colour::Blue, Colour::Red],
        _ => Colour::ALL.to_vec(),
    }
}

/// A bot for `level` with the arena's settings.
fn build(level: BotLevel, seed: u64, args: &Args) -> Box<dyn Bot + Send> {
    match level {
        BotLevel::Random => Box::new(RandomBot::new(seed)),
        BotLevel::Greedy => Box::new(GreedyBot::new(seed)),
        BotLevel::Expectimax => Box::new(ExpectimaxBot::new(ExpectimaxConfig {
            budget: Duration::from_millis(args.budget_ms),
            max_leaves: args.max_leaves,
        })),
    }
}

/// Decision times of one level.
#[derive(Default)]
struct Think {
    total: Duration,
    max: Duration,
    decisions: u64,
}

/// Times every decision of the wrapped bot into its level's [`Think`].
struct Timed {
    inner: Box<dyn Bot + Send>,
    think: Arc<Mutex<Think>>,
}

impl Bot for Timed {
    fn choose(&mut self, game: &Game, legal: &[parchis_engine::Action]) -> parchis_engine::Action {
        let t = Instant::now();
        let a = self.inner.choose(game, legal);
        let e = t.elapsed();
        if let Ok(mut th) = self.think.lock() {
            th.total += e;
            th.max = th.max.max(e);
            th.decisions += 1;
        }
        a
    }
}

#[derive(Default)]
struct Tally {
    seats: u64,
    wins: u64,
    think: Arc<Mutex<Think>>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let n = args.levels.len();
    if !(2..=4).contains(&n) {
        eprintln!("parchis-arena: --levels needs 2 to 4 levels, got {n}");
        return ExitCode::from(2);
    }
    let seat_colours = colours(n);
    let mut tally: BTreeMap<BotLevel, Tally> = BTreeMap::new();
    let mut unfinished = 0u64;
    let mut actions = 0u64;
    let started = Instant::now();
    for i in 0..args.games {
        let (winner_seat, n_actions) = match play_one(i, &args, &seat_colours, &mut tally) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("parchis-arena: cannot set up a game: {e}");
                return ExitCode::FAILURE;
            }
        };
        actions += n_actions as u64;
        if winner_seat.is_none() {
            unfinished += 1;
        }
        for (j, level) in args.levels.iter().enumerate() {
            let t = tally.entry(*level).or_default();
            t.seats += 1;
            if winner_seat == Some(j) {
                t.wins += 1;
            }
        }
    }
    let elapsed = started.elapsed();
    let out = json!({
        "games": args.games,
        "seed": args.seed,
        "seats": args.levels.iter().map(|l| l.to_string()).collect::<Vec<_>>(),
        "expectimax": {"budget_ms": args.budget_ms, "max_leaves": args.max_leaves},
        "unfinished": unfinished,
        "actions": actions,
        "elapsed_s": elapsed.as_secs_f64(),
        "levels": level_stats(&tally, n),
    });
    match serde_json::to_string_pretty(&out) {
        Ok(s) => println!("{s}"),
        Err(e) => {
            eprintln!("parchis-arena: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// Plays game `i` with the seats rotated as the module describes; returns the index
/// (in `args.levels`) of the winning level, `None` when unfinished, and the number of
/// actions played. Each level's decisions are timed into its `tally` entry.
fn play_one(
    i: u64,
    args: &Args,
    seat_colours: &[Colour],
    tally: &mut BTreeMap<BotLevel, Tally>,
) -> Result<(Option<usize>, usize), parchis_engine::SetupError> {
    let n = seat_colours.len();
    let rot = (i % n as u64) as usize;
    let first = seat_colours[((i / n as u64) % n as u64) as usize];
    // Colour of level j: seat_colours[(j + rot) % n]; seat index of colour c: inverse.
    let mut by_colour = [usize::MAX; 4];
    let mut seats: Vec<Box<dyn Bot + Send>> = Vec::with_capacity(n);
    for (j, level) in args.levels.iter().enumerate() {
        let colour = seat_colours[(j + rot) % n];
        by_colour[colour.index()] = j;
        let think = tally.entry(*level).or_default().think.clone();
        let seed = args.seed.wrapping_mul(1_000_003) ^ (i * 8 + j as u64);
        seats.push(Box::new(Timed {
            inner: build(*level, seed, args),
            think,
        }));
    }
    let game = Game::new(RuleSet::online(), seat_colours, first)?;
    let mut rng = StdRng::seed_from_u64(args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i);
    let (outcome, n_actions) = play_game(
        game,
        &mut |c| by_colour[c.index()],
        &mut seats,
        &mut rng,
        args.max_actions,
    );
    Ok((outcome.map(|o| by_colour[o.winner.index()]), n_actions))
}

/// Each level's wins, win rate with its 95 % interval, and decision times, as JSON;
/// `n` is the number of seats.
fn level_stats(
    tally: &BTreeMap<BotLevel, Tally>,
    n: usize,
) -> serde_json::Map<String, serde_json::Value> {
    let mut levels = serde_json::Map::new();
    for (level, t) in tally {
        let (lo, hi) = wilson(t.wins, t.seats);
        let (think_total, think_max, decisions) = match t.think.lock() {
            Ok(th) => (th.total, th.max, th.decisions),
            Err(_) => (Duration::ZERO, Duration::ZERO, 0),
        };
        levels.insert(
            level.to_string(),
            json!({
                "seats": t.seats,
                "wins": t.wins,
                "win_rate": t.wins as f64 / t.seats.max(1) as f64,
                "ci95": [lo, hi],
                "expected_if_equal": 1.0 / n as f64,
                "decisions": decisions,
                "mean_decision_ms": think_total.as_secs_f64() * 1e3 / decisions.max(1) as f64,
                "max_decision_ms": think_max.as_secs_f64() * 1e3,
            }),
        );
    }
    levels
}
