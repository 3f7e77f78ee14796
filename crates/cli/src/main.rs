//! `parchis`: query the rules engine from the command line.
//!
//! ```text
//! parchis legal "<position>" [--dice 3,4]     legal actions as JSON
//! parchis apply "<position>" "<action>"        new position + events as JSON
//! parchis play --seed N --players K            one random legal game, action log
//! parchis selfplay --games N --seed S          statistics over random games
//! parchis verify FILE                          check a finished game's fair dice
//! ```
//! Positions are given in the text notation or as JSON (`proto/NOTATION.md`,
//! `proto/POSITION.md`); `-` reads the position from standard input.

mod verify;

use clap::{Args, Parser, Subcommand};
use parchis_engine::{Action, Colour, Dice, Event, Game, Position, RuleSet, WinReason};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(name = "parchis", version, about = "Query the Parchís rules engine")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The players and rule set of random games (`play`, `selfplay`).
#[derive(Args)]
struct Table {
    /// Number of players, 2 to 4.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u8).range(2..=4))]
    players: u8,
    /// Rule set: a preset name and `+variant`s, e.g. `classic+murcia-12`.
    #[arg(long, default_value = "online")]
    preset: String,
}

#[derive(Subcommand)]
enum Command {
    /// Print the legal actions of a position as JSON. With --dice, a position that
    /// awaits a roll is first rolled with those dice.
    Legal {
        /// Position in text notation or JSON; `-` reads standard input.
        position: String,
        /// Dice to roll first, e.g. `3,4`.
        #[arg(long)]
        dice: Option<String>,
    },
    /// Apply one action and print the new position (text and JSON) and the events.
    Apply {
        /// Position in text notation or JSON; `-` reads standard input.
        position: String,
        /// Action in text (`roll 3,4`, `exit`, `move 2 4`, `bonus 1 20`, `timeout`,
        /// `abandon Y`) or JSON.
        action: String,
    },
    /// Play one full random legal game and print the action log.
    Play {
        /// Random seed (dice and choices).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[command(flatten)]
        table: Table,
    },
    /// Check the fair dice of a finished game (docs/FAIR_DICE.md): the commitment and
    /// every throw. FILE is the JSON of `GET /api/games/{id}` or its text export
    /// (`GET /api/games/{id}/export`); `-` reads standard input. Exits 0 when every
    /// throw is verified, 1 naming the first throw (or seed) that fails, 2 for a game
    /// made with test dice (never verifiable).
    Verify {
        /// The game's JSON or text export; `-` reads standard input.
        file: String,
    },
    /// Play many random games and print statistics as JSON.
    Selfplay {
        /// Number of games.
        #[arg(long, default_value_t = 1000)]
        games: u64,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[command(flatten)]
        table: Table,
    },
}

fn read_position(arg: &str) -> Result<Game, String> {
    let text = if arg == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        s
    } else {
        arg.to_string()
    };
    let text = text.trim();
    if text.starts_with('{') {
        Game::from_json(text)
    } else {
        text.parse::<Game>()
            .map_err(|e| format!("bad position: {e}"))
    }
}

fn seats(players: u8) -> Vec<Colour> {
    // Seats in turn order (clockwise from yellow): Y, G, R, B.
    let order = [Colour::Yellow, Colour::Red, Colour::Green, Colour::Blue];
    let mut v: Vec<Colour> = order[..players as usize].to_vec();
    v.sort();
    v
}

/// One random legal game: dice from `rng`, a uniformly random legal action each time.
/// Returns the final game, the action log and the events.
fn random_game(
    rng: &mut ChaCha8Rng,
    rules: RuleSet,
    players: u8,
    log: Option<&mut Vec<String>>,
) -> Result<(Game, u32, u32), String> {
    let seated = seats(players);
    let mut game = Game::new(rules, &seated, seated[0]).map_err(|e| e.to_string())?;
    let mut turns = 0u32;
    let mut captures = 0u32;
    let mut log = log;
    for _ in 0..1_000_000 {
        let action = match game.expect() {
            parchis_engine::Expect::Finished(_) => return Ok((game, turns, captures)),
            parchis_engine::Expect::Roll { .. } => {
                let values: Vec<u8> = (0..rules.dice).map(|_| rng.gen_range(1..=6)).collect();
                Action::Roll {
                    dice: Dice::from_slice(&values)?,
                }
            }
            parchis_engine::Expect::Move { .. } => {
                let legal = game.legal_actions();
                if legal.is_empty() {
                    return Err(format!("no legal action in a move stage: {game}"));
                }
                legal[rng.gen_range(0..legal.len())]
            }
        };
        let colour = game.turn();
        let events = game
            .play(&action)
            .map_err(|e| format!("{game}: {action}: {e}"))?;
        captures += events
            .iter()
            .filter(|e| matches!(e, Event::PieceCaptured { .. }))
            .count() as u32;
        // A turn is one player's sequence of throws; it ends when the turn passes.
        turns += events
            .iter()
            .filter(|e| matches!(e, Event::TurnPassed { .. } | Event::GameWon { .. }))
            .count() as u32;
        if let Some(l) = log.as_deref_mut() {
            l.push(format!("{} {}", colour.letter(), action));
        }
    }
    Err("game did not end within 1,000,000 actions".into())
}

/// `parchis verify FILE`: prints the verdict; exit code 0, 1 or 2.
fn run_verify(file: &str) -> Result<ExitCode, Failure> {
    let text = if file == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        s
    } else {
        std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?
    };
    let record = verify::read(&text)?;
    Ok(match verify::check(&record) {
        verify::Verdict::Verified(n) => {
            out(&format!(
                "dice verified: {n} throws match the commitment {} and the seeds",
                record.claim.commitment
            ))?;
            ExitCode::SUCCESS
        }
        verify::Verdict::Failed(e) => {
            out(&format!("dice NOT verified: {e}"))?;
            ExitCode::FAILURE
        }
        verify::Verdict::Test(r) => {
            let how = match r {
                Ok(n) => format!("its {n} throws match its seeds"),
                Err(e) => format!("and it does not check: {e}"),
            };
            out(&format!(
                "not verifiable: this game was made with test dice (its server seed was not secret); {how}"
            ))?;
            ExitCode::from(2)
        }
    })
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Verify { .. } => unreachable!("handled in main"),
        Command::Legal { position, dice } => legal(&position, dice.as_deref()),
        Command::Apply { position, action } => apply(&position, &action),
        Command::Play { seed, table } => play(seed, table.players, &table.preset),
        Command::Selfplay { games, seed, table } => {
            selfplay(games, seed, table.players, &table.preset)
        }
    }
}

/// Why a command stopped early.
#[derive(Debug)]
enum Failure {
    /// An error to report (exit code 1).
    Message(String),
    /// Standard output was closed by its reader (`parchis play | head`): stop quietly.
    BrokenPipe,
}

impl From<String> for Failure {
    fn from(m: String) -> Failure {
        Failure::Message(m)
    }
}

impl From<&str> for Failure {
    fn from(m: &str) -> Failure {
        Failure::Message(m.to_string())
    }
}

/// Writes `text` and a newline to standard output. A reader that went away (a closed
/// pipe) is [`Failure::BrokenPipe`], never a panic as with `println!`.
fn out(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{text}")
        .and_then(|()| stdout.flush())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => Failure::BrokenPipe,
            _ => Failure::Message(format!("cannot write to standard output: {e}")),
        })
}

/// Prints `out` as pretty JSON on standard output.
fn print_json(value: &serde_json::Value) -> Result<(), Failure> {
    out(&serde_json::to_string_pretty(value).map_err(|e| e.to_string())?)
}

/// `parchis legal`: the legal actions, after rolling `dice` when given.
fn legal(position: &str, dice: Option<&str>) -> Result<(), Failure> {
    let mut game = read_position(position)?;
    if let Some(d) = dice {
        let values = d
            .split(',')
            .map(|v| v.trim().parse::<u8>().map_err(|_| format!("bad die {v:?}")))
            .collect::<Result<Vec<_>, _>>()?;
        let dice = Dice::from_slice(&values)?;
        game.play(&Action::Roll { dice })
            .map_err(|e| e.to_string())?;
    }
    print_json(&serde_json::json!({
        "position": game.to_string(),
        "legal": game.legal_actions(),
    }))
}

/// `parchis apply`: the position after one action, its events and the legal actions.
fn apply(position: &str, action: &str) -> Result<(), Failure> {
    let game = read_position(position)?;
    let action: Action = action.parse()?;
    let (next, events) = game
        .apply(&action)
        .map_err(|e| format!("illegal action: {e}"))?;
    print_json(&serde_json::json!({
        "notation": next.to_string(),
        "position": Position::from(&next),
        "events": events,
        "legal": next.legal_actions(),
    }))
}

/// `parchis play`: one random game's action log and result.
fn play(seed: u64, players: u8, preset: &str) -> Result<(), Failure> {
    let rules = RuleSet::from_name(preset)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut log = Vec::new();
    let (game, turns, captures) = random_game(&mut rng, rules, players, Some(&mut log))?;
    for line in &log {
        out(line)?;
    }
    let o = game.outcome().ok_or("game did not finish")?;
    out(&format!(
        "# {} won ({:?}) after {turns} turns, {captures} captures",
        o.winner, o.reason
    ))?;
    out(&format!("# final: {game}"))
}

/// `parchis selfplay`: statistics over `games` random games.
fn selfplay(games: u64, seed: u64, players: u8, preset: &str) -> Result<(), Failure> {
    let rules = RuleSet::from_name(preset)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let start = Instant::now();
    let mut turns = 0u64;
    let mut captures = 0u64;
    let mut wins = std::collections::BTreeMap::new();
    for _ in 0..games {
        let (g, t, c) = random_game(&mut rng, rules, players, None)?;
        turns += t as u64;
        captures += c as u64;
        if let Some(o) = g.outcome() {
            if o.reason == WinReason::Goal {
                *wins.entry(o.winner.name()).or_insert(0u64) += 1;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    print_json(&serde_json::json!({
        "games": games,
        "preset": rules.name(),
        "players": players,
        "mean_turns_per_game": turns as f64 / games.max(1) as f64,
        "mean_captures_per_game": captures as f64 / games.max(1) as f64,
        "wins_per_seat": wins,
        "seconds": secs,
        "games_per_second": games as f64 / secs.max(1e-9),
    }))
}

/// The exit code for a command's failure: a closed output pipe ends quietly (success,
/// as the reader asked for no more); an error is reported on standard error.
fn failed(f: Failure) -> ExitCode {
    match f {
        Failure::BrokenPipe => ExitCode::SUCCESS,
        Failure::Message(e) => {
            eprintln!("parchis: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Verify { file } = &cli.command {
        return run_verify(file).unwrap_or_else(failed);
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => failed(f),
    }
}
