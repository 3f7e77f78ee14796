//! What a restore's pure part costs with and without the packed log's snapshots (issue
//! 28, `docs/STORAGE.md`, "Snapshots"), and what the snapshots cost in bytes: a
//! measuring tool, not a test.
//!
//! ```text
//! cargo run --release -p parchis-room --example snapshot_restore
//! ```
//!
//! Synthetic four-player `classic` games (one die, play on for the places: the longest
//! games) played through the engine (random legal actions, a capture when there is one;
//! a `turn` event at each throw to make, as the room logs them), cut at 300 and 1,000
//! throws while running (fair dice reach 400–570 throws: the 1,000-throw game is thrown
//! with dice that mostly show the lowest of three, so that it moves slower). Each is packed twice:
//! in format 1 (no snapshots: the first piece written as format 1, the rest appended by
//! the resumed encoder, as a game stored before snapshots goes on) and in format 2
//! (a snapshot every 64 throws). Measured, CPU time of this thread over many runs: the
//! restore's read of the log and its replay (`throws::decode_tail` + `resume`) — the whole
//! log for format 1, from the last snapshot for format 2 (with no spectator delay and
//! with the largest, 20 throws). The room's rebuilding of frames for the history (at most
//! its `history_len` events) comes after and is not included.

use parchis_engine::{Action, Colour, Event, Expect, Game, Preset};
use parchis_protocol::{ClientSeedEntry, DiceInfo, DiceMode, RoomEvent};
use parchis_room_core::{resume, throws, LoggedEvent};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// Runs of each restore measured.
const RUNS: u32 = 200;

/// CPU time of this thread (ns), as `packed_games` measures it.
fn thread_cpu_ns() -> u128 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// A synthetic game's log in batches (one per action, as the room writes them), cut once
/// `throws` throws were made (`None` if the game ended first), or whole with
/// `throws == usize::MAX`.
fn synthetic(seed: u64, preset: Preset, throws: usize) -> Option<Vec<Vec<LoggedEvent>>> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let slow = throws > 400 && throws != usize::MAX;
    let seats = Colour::ALL.to_vec();
    let rules = preset.rules();
    let mut game = Game::new(rules, &seats, Colour::Yellow).ok()?;
    let mut at: i64 = 1_764_000_000_000;
    let mut seq = 2u64;
    let mut batches = Vec::new();
    let mut push = |events: Vec<RoomEvent>, at: i64, batches: &mut Vec<Vec<LoggedEvent>>| {
        let n = events.len();
        let batch = events
            .into_iter()
            .enumerate()
            .map(|(k, event)| {
                seq += 1;
                LoggedEvent {
                    seq,
                    at_ms: at,
                    event,
                    positioned: k + 1 == n,
                }
            })
            .collect();
        batches.push(batch);
    };
    let dice = DiceInfo {
        scheme: "parchis-fair-dice-v1".into(),
        mode: DiceMode::Fair,
        commitment: hex::encode([7u8; 32]),
        client_seeds: seats
            .iter()
            .map(|&colour| ClientSeedEntry {
                colour,
                seed: format!("{colour}-seed"),
            })
            .collect(),
        server_seed: None,
    };
    push(
        vec![
            RoomEvent::GameStarted {
                game_id: uuid::Uuid::from_u128(u128::from(seed)).to_string(),
                first: Colour::Yellow,
                position: game.to_position(),
                dice: Some(Box::new(dice)),
            },
            RoomEvent::Turn {
                colour: Colour::Yellow,
                deadline_ms: at + 30_000,
            },
        ],
        at,
        &mut batches,
    );
    let mut throw = 0u64;
    while (throw as usize) < throws {
        if game.outcome().is_some() {
            return (throws == usize::MAX).then_some(batches);
        }
        at += rng.gen_range(300..2_500);
        let action = choose(&game, &mut rng, slow)?;
        let Ok(produced) = game.play(&action) else {
            return None;
        };
        let mut events = Vec::new();
        for event in produced {
            let t = matches!(event, Event::DiceRolled { .. }).then(|| {
                throw += 1;
                throw - 1
            });
            events.push(RoomEvent::Game { event, throw: t });
        }
        if matches!(game.expect(), Expect::Roll { .. }) {
            events.push(RoomEvent::Turn {
                colour: game.turn(),
                deadline_ms: at + 30_000,
            });
        }
        push(events, at, &mut batches);
    }
    Some(batches)
}

/// The next action of a synthetic game: a throw of random dice (for a `slow` game, mostly
/// the lowest of three, so that it moves slower while every throw is still one), a
/// capture when there is one (sending a piece home makes the game longer), else a random
/// legal action.
fn choose(game: &Game, rng: &mut ChaCha20Rng, slow: bool) -> Option<Action> {
    let rules = *game.rules();
    Some(match game.expect() {
        Expect::Roll { .. } => {
            let die = |rng: &mut ChaCha20Rng| {
                let d = rng.gen_range(1..=6);
                if slow && rng.gen_bool(0.8) {
                    d.min(rng.gen_range(1..=6)).min(rng.gen_range(1..=6))
                } else {
                    d
                }
            };
            let values: Vec<u8> = (0..rules.dice).map(|_| die(rng)).collect();
            Action::Roll {
                dice: parchis_engine::Dice::from_slice(&values).ok()?,
            }
        }
        _ => {
            let legal = game.legal_actions();
            let capture = legal.iter().copied().find(|a| {
                let mut probe = *game;
                probe.play(a).is_ok_and(|events| {
                    events
                        .iter()
                        .any(|e| matches!(e, Event::PieceCaptured { .. }))
                })
            });
            match capture {
                Some(a) => a,
                None if legal.is_empty() => Action::Timeout,
                None => legal[rng.gen_range(0..legal.len())],
            }
        }
    })
}

/// The log packed as format 1 (no snapshots) and as format 2.
fn packed(batches: &[Vec<LoggedEvent>]) -> Result<(Vec<u8>, Vec<u8>), throws::DecodeError> {
    let mut old = Vec::new();
    throws::Encoder::new().push(&batches[0], &mut old);
    old[0] = throws::FORMAT_1;
    let mut encoder = throws::decode(&old)?.encoder;
    let mut new = Vec::new();
    let mut fresh = throws::Encoder::new();
    fresh.push(&batches[0], &mut new);
    for batch in &batches[1..] {
        encoder.push(batch, &mut old);
        fresh.push(batch, &mut new);
    }
    Ok((old, new))
}

/// CPU µs of one restore's read and replay of `bytes` (mean over [`RUNS`]), and the
/// throws it replayed.
fn restore_us(bytes: &[u8], delay: u64) -> Result<(f64, usize), Box<dyn std::error::Error>> {
    let tail = throws::decode_tail(bytes, delay)?;
    let replayed = tail
        .events
        .iter()
        .filter(|e| parchis_room_core::delay::is_throw(&e.event))
        .count();
    let start = thread_cpu_ns();
    for _ in 0..RUNS {
        let tail = throws::decode_tail(bytes, delay)?;
        std::hint::black_box(resume(tail.from.as_ref(), &tail.events)?);
    }
    let ns = thread_cpu_ns() - start;
    Ok((ns as f64 / f64::from(RUNS) / 1000.0, replayed))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for throws_wanted in [300usize, 1_000] {
        let Some((seed, batches)) = (0..2_000u64)
            .find_map(|s| synthetic(s, Preset::Classic, throws_wanted).map(|b| (s, b)))
        else {
            println!("no synthetic game reached {throws_wanted} throws");
            continue;
        };
        let events: usize = batches.iter().map(Vec::len).sum();
        let (old, new) = packed(&batches)?;
        let whole = throws::decode(&new)?;
        assert_eq!(
            whole.events,
            batches.concat(),
            "format 2 unpacks to the log"
        );
        assert_eq!(
            throws::decode(&old)?.events,
            whole.events,
            "so does format 1"
        );
        let (without, all) = restore_us(&old, 0)?;
        let (with, after) = restore_us(&new, 0)?;
        let (delayed, after_delay) = restore_us(&new, 20)?;
        let snapshots = (new.len() - old.len()) as f64;
        println!(
            "{throws_wanted} throws (seed {seed}, {events} events): format 1 {} B, format 2 {} B \
             (+{} B, {:.1} B a snapshot over {} snapshots); restore CPU: whole log {without:.0} µs \
             ({all} throws replayed), from the last snapshot {with:.0} µs ({after} throws), \
             with a 20-throw delay {delayed:.0} µs ({after_delay} throws)",
            old.len(),
            new.len(),
            new.len() - old.len(),
            snapshots / ((throws_wanted - 1) / 64) as f64,
            (throws_wanted - 1) / 64,
        );
    }
    // What snapshots cost a whole game: four-player games of each preset to their end.
    for preset in [Preset::Online, Preset::Classic] {
        let (mut games, mut throws_total, mut old_total, mut new_total) = (0, 0, 0, 0);
        for seed in 0..20u64 {
            let Some(batches) = synthetic(seed, preset, usize::MAX) else {
                continue;
            };
            let (old, new) = packed(&batches)?;
            games += 1;
            throws_total += batches
                .concat()
                .iter()
                .filter(|e| parchis_room_core::delay::is_throw(&e.event))
                .count();
            old_total += old.len();
            new_total += new.len();
        }
        println!(
            "{} four-player games of {}: {} throws, format 1 {} B, format 2 {} B a game \
             (snapshots +{} B)",
            games,
            preset.name(),
            throws_total / games,
            old_total / games,
            new_total / games,
            (new_total - old_total) / games
        );
    }
    Ok(())
}
