//! The packed log gives back exactly the log the room wrote: seeded random games of every
//! preset played through the engine (rolls, moves, bonuses, timeouts, abandonments with
//! the room's own events around them, referee pauses, the seed revealed at the end),
//! packed whole and in group-commit pieces, unpacked by replay. The room's own games
//! (`crates/room/src/tests/history.rs`) check the same on logs the real room stored.
//! Snapshots (format 2): reading from the last one equals the whole replay, their bytes
//! are fixed, a forged one is refused, a format-1 log goes on without them.
//!
//! Why one file of ~610 lines: the format's tests share its game generator and fixed
//! bytes; split, each part would carry a copy of them.

use super::*;
use parchis_engine::{Action, Colour, Dice, Expect, Game, Preset};
use parchis_protocol::{
    AbandonReason, ClientSeedEntry, DiceInfo, DiceMode, OpeningRollEntry, RoomEvent,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// One seeded game's log, in batches (what the room writes per group commit).
fn random_game(seed: u64) -> Vec<Vec<LoggedEvent>> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let preset = Preset::ALL[rng.gen_range(0..Preset::ALL.len())];
    let rules = preset.rules();
    let n = if preset == Preset::Pairs {
        4
    } else {
        rng.gen_range(2..=4)
    };
    let seats: Vec<Colour> = if n == 2 {
        vec![Colour::Yellow, Colour::Red]
    } else {
        Colour::ALL[..n].to_vec()
    };
    let first = seats[rng.gen_range(0..n)];
    let mut game = Game::new(rules, &seats, first).expect("a playable start");
    let mut seq = rng.gen_range(1..50u64);
    let mut at: i64 = 1_764_000_000_000 + rng.gen_range(0..1_000_000);
    let mut batches = Vec::new();
    let mut push = |events: Vec<RoomEvent>, at: i64, batches: &mut Vec<Vec<LoggedEvent>>| {
        let count = events.len();
        let batch = events
            .into_iter()
            .enumerate()
            .map(|(k, event)| {
                seq += 1;
                LoggedEvent {
                    seq,
                    at_ms: at,
                    event,
                    positioned: k + 1 == count,
                }
            })
            .collect();
        batches.push(batch);
    };
    let mut throw = 0u64;
    let mut start = Vec::new();
    if rng.gen_bool(0.5) {
        let rolls = seats
            .iter()
            .map(|&colour| {
                throw += 1;
                OpeningRollEntry {
                    colour,
                    value: 7,
                    throw: Some(throw - 1),
                    dice: vec![3, 4],
                }
            })
            .collect();
        start.push(RoomEvent::OpeningRoll {
            rolls,
            first: Some(first),
        });
    }
    let dice_info = DiceInfo {
        scheme: "parchis-fair-dice-v1".into(),
        mode: DiceMode::Fair,
        commitment: hex::encode([7u8; 32]),
        client_seeds: seats
            .iter()
            .map(|&colour| ClientSeedEntry {
                colour,
                seed: format!("{colour}"),
            })
            .collect(),
        server_seed: None,
    };
    start.push(RoomEvent::GameStarted {
        game_id: uuid::Uuid::from_u128(u128::from(seed) << 64 | 0xabc).to_string(),
        first,
        position: game.to_position(),
        dice: rng.gen_bool(0.9).then(|| Box::new(dice_info)),
    });
    start.push(RoomEvent::Turn {
        colour: first,
        deadline_ms: at + 30_000,
    });
    push(start, at, &mut batches);
    for _ in 0..4_000 {
        if game.outcome().is_some() {
            break;
        }
        at += rng.gen_range(0..2_500);
        let mut events = Vec::new();
        let roll = |rng: &mut ChaCha20Rng| {
            let values: Vec<u8> = (0..rules.dice).map(|_| rng.gen_range(1..=6)).collect();
            Action::Roll {
                dice: Dice::from_slice(&values).expect("dice"),
            }
        };
        let action = match rng.gen_range(0..100) {
            0 => {
                // The referee pauses and resumes the clock (stored as the room's events).
                let colour = game.turn();
                push(
                    vec![RoomEvent::ClockPaused {
                        colour,
                        remaining_ms: 12_000,
                    }],
                    at,
                    &mut batches,
                );
                push(
                    vec![RoomEvent::ClockResumed {
                        colour,
                        deadline_ms: at + 12_000,
                    }],
                    at + 5,
                    &mut batches,
                );
                continue;
            }
            1..=3 => Action::Timeout,
            4 => {
                let colour = seats[rng.gen_range(0..n)];
                events.push(if rng.gen_bool(0.5) {
                    RoomEvent::Abandoned {
                        colour,
                        reason: AbandonReason::Left,
                    }
                } else {
                    RoomEvent::BotTookOver {
                        colour,
                        level: parchis_protocol::BotLevel::Greedy,
                        reason: AbandonReason::Disconnected,
                    }
                });
                Action::Abandon { colour }
            }
            _ => match game.expect() {
                Expect::Roll { .. } => roll(&mut rng),
                _ => {
                    let legal = game.legal_actions();
                    if legal.is_empty() {
                        roll(&mut rng)
                    } else {
                        legal[rng.gen_range(0..legal.len())]
                    }
                }
            },
        };
        let Ok(produced) = game.play(&action) else {
            continue;
        };
        for event in produced {
            let t = matches!(event, parchis_engine::Event::DiceRolled { .. }).then(|| {
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
    if game.outcome().is_some() {
        at += 1;
        push(
            vec![RoomEvent::DiceRevealed {
                server_seed: hex::encode([seed as u8; 32]),
            }],
            at,
            &mut batches,
        );
    }
    batches
}

/// Packs the log one batch per push, as the store appends it.
fn pack_in_pieces(batches: &[Vec<LoggedEvent>]) -> Vec<u8> {
    let mut encoder = Encoder::new();
    let mut out = Vec::new();
    for batch in batches {
        encoder.push(batch, &mut out);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every preset, random games: the unpacked log equals the live one, every engine
    /// event rebuilt by replaying its action (no engine event stored as JSON).
    #[test]
    fn a_packed_game_unpacks_to_the_events_the_live_game_logged(seed in any::<u64>()) {
        let batches = random_game(seed);
        let live: Vec<LoggedEvent> = batches.concat();
        let whole = encode(&live);
        let pieces = pack_in_pieces(&batches);
        prop_assert_eq!(&whole, &pieces, "one push or one per batch: the same bytes");
        let decoded = decode(&pieces).expect("unpacks");
        prop_assert_eq!(&decoded.events, &live);
        prop_assert!(decoded.encoder.follows_game(), "every action stored as an action");
        // Far below the JSON rows once the game is longer than its start (whose rules,
        // seeds and commitment are stored once): a few bytes per event.
        let json: usize = live.iter().map(|e| serde_json::to_vec(&e.event).map_or(0, |v| v.len())).sum();
        prop_assert!(live.len() < 200 || pieces.len() * 8 < json, "{} packed vs {} JSON", pieces.len(), json);
    }

    /// Appending after a restore: the decoder's encoder goes on exactly where the
    /// original one was (the same bytes as packing in one go).
    #[test]
    fn packing_goes_on_after_unpacking_a_prefix(seed in any::<u64>(), cut in 0.0f64..1.0) {
        let batches = random_game(seed);
        let k = ((batches.len() as f64) * cut) as usize;
        let mut prefix = pack_in_pieces(&batches[..k]);
        let mut encoder = decode(&prefix).expect("prefix unpacks").encoder;
        for batch in &batches[k..] {
            encoder.push(batch, &mut prefix);
        }
        prop_assert_eq!(prefix, pack_in_pieces(&batches));
    }

    /// Hostile bytes: an error or a log, never a panic, at a cost bounded by the input.
    #[test]
    fn any_bytes_unpack_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut with_format = vec![FORMAT];
        with_format.extend(&bytes);
        for input in [&bytes, &with_format] {
            if let Ok(d) = decode(input) {
                prop_assert!(d.events.len() <= input.len() * 16);
            }
            if let Ok(t) = decode_tail(input, 0) {
                prop_assert!(t.events.len() <= input.len() * 16);
                let _ = crate::replay::resume(t.from.as_ref(), &t.events);
            }
        }
    }
}

#[test]
fn an_engine_event_that_does_not_replay_is_kept_as_json_and_the_rest_still_round_trips() {
    let mut live: Vec<LoggedEvent> = random_game(11).concat();
    // A forged event in the middle: no action gives it, so it is stored as JSON, and the
    // actions after it are stored as JSON too (the game is no longer followed).
    let i = live.len() / 2;
    live.insert(
        i,
        LoggedEvent {
            seq: 0,
            at_ms: live[i].at_ms,
            event: RoomEvent::Game {
                event: parchis_engine::Event::RollAgain {
                    colour: Colour::Yellow,
                },
                throw: None,
            },
            positioned: false,
        },
    );
    let first = live[0].seq;
    for (k, e) in live.iter_mut().enumerate() {
        e.seq = first + k as u64;
    }
    let packed = encode(&live);
    let decoded = decode(&packed).expect("unpacks");
    assert_eq!(decoded.events, live);
    assert!(!decoded.encoder.follows_game());
}

#[test]
fn an_unknown_format_or_a_cut_log_is_an_error() {
    let packed = encode(&random_game(5).concat());
    let mut other = packed.clone();
    other[0] = 3;
    assert_eq!(decode(&other).err(), Some(DecodeError::Format(3)));
    assert_eq!(decode_tail(&other, 0).err(), Some(DecodeError::Format(3)));
    // Cut inside the first op (after the 1 + 1 + 6 header bytes).
    assert!(matches!(
        decode(&packed[..12]),
        Err(DecodeError::Truncated { .. })
    ));
    assert!(decode(&[]).expect("empty is no log").events.is_empty());
}

/// A short `online` game's log, as the room logs it: start, clock, a throw of 5 and 3
/// (R-EXIT-1: the exit comes first), the exit, the move of the 3.
fn short_game() -> Vec<LoggedEvent> {
    let seats = [Colour::Yellow, Colour::Red];
    let mut game =
        Game::new(parchis_engine::RuleSet::online(), &seats, Colour::Yellow).expect("a start");
    let at = 1_764_000_000_000;
    let mut events = vec![
        RoomEvent::GameStarted {
            game_id: "01a23ce9-c9a4-7bd9-9647-9832c967c553".into(),
            first: Colour::Yellow,
            position: game.to_position(),
            dice: None,
        },
        RoomEvent::Turn {
            colour: Colour::Yellow,
            deadline_ms: at + 30_000,
        },
    ];
    let mut throw = 0;
    for action in [
        Action::Roll {
            dice: Dice::two(5, 3).expect("dice"),
        },
        Action::Exit,
        Action::Move {
            piece: 0,
            die: 3,
            capture: false,
        },
    ] {
        for event in game.play(&action).expect("legal") {
            let t = matches!(event, parchis_engine::Event::DiceRolled { .. }).then(|| {
                throw += 1;
                throw - 1
            });
            events.push(RoomEvent::Game { event, throw: t });
        }
    }
    let n = events.len();
    events
        .into_iter()
        .enumerate()
        .map(|(k, event)| LoggedEvent {
            seq: 1 + k as u64,
            at_ms: if k < 2 { at } else { at + 1_500 },
            event,
            positioned: k == 1 || k + 1 == n,
        })
        .collect()
}

/// Format 1 is what games stored before snapshots hold: these bytes must keep reading as
/// this game.
#[test]
fn format_1_bytes_of_a_short_game_are_stable() {
    let live = short_game();
    let expected = concat!(
        "01",                               // format 1
        "01",                               // first seq 1
        "80a0bfe9d666",                     // first time (zigzag varint)
        "08",                               // GAME_STARTED
        "01a23ce9c9a47bd996479832c967c553", // its id
        "00",
        "02",
        "0002", // first Y; 2 seats: Y, R
        "00",
        "06",
        "6f6e6c696e65", // rules by name: "online"
        "00",           // no dice info
        "27",
        "00",
        "e0d403", // TURN, positioned: Y, deadline +30,000 ms
        "41",
        "b817",
        "35", // ROLL, 1,500 ms later: 5 and 3
        "02", // EXIT
        "23",
        "18", // MOVE, positioned: piece 0, die 3
    );
    let bytes = hex::decode(expected).expect("hex");
    assert_eq!(decode(&bytes).expect("format 1 reads").events, live);
    let tail = decode_tail(&bytes, 0).expect("format 1 reads for a restore");
    assert_eq!((tail.from, tail.events), (None, live.clone()));
    // Format 2 writes a game of fewer than `SNAPSHOT_EVERY` throws as format 1 did.
    assert_eq!(hex::encode(encode(&live)), format!("02{}", &expected[2..]));
}

/// The `SNAPSHOT` op of format 2: these bytes must keep reading as this state.
#[test]
fn format_2_snapshot_bytes_are_stable() {
    let game: Game = "online Y:5,h3,n,g R:30,n,n,n turn=R roll doubles=1"
        .parse()
        .expect("a position");
    let at = 1_764_000_000_000;
    let snapshot = crate::replay::Snapshot {
        seq: 99,
        at_ms: at,
        game,
        next_throw: 70,
        last_turn_deadline: Some(at + 30_000),
        paused: Some((Colour::Red, 12_000)),
    };
    let bytes = snapshot::op_bytes(&snapshot::state_at(&snapshot)).expect("writes");
    let text = hex::encode(game.to_string());
    let expected = format!(
        "0b{:02x}{}{}",
        16 + game.to_string().len(),
        concat!(
            "64",           // next seq 100
            "80a0bfe9d666", // time (zigzag varint, absolute)
            "46",           // next throw 70
            "03",           // a deadline and a pause follow
            "e0d403",       // deadline +30,000 ms
            "02",           // paused: R
            "c0bb01",       // with 12,000 ms left
        ),
        text
    );
    assert_eq!(hex::encode(&bytes), expected);
    let mut r = wire::Reader::new(&bytes[1..]);
    assert_eq!(snapshot::read(&mut r).expect("reads"), snapshot);
    assert!(r.is_done());
}

/// The `ROLL` ops of a packed log after its last snapshot (the throws a restore replays).
fn rolls_after_last_snapshot(bytes: &[u8]) -> Option<u64> {
    let mut r = wire::Reader::new(bytes);
    r.take(1, "format").expect("format");
    r.u64("seq").expect("seq");
    r.i64("time").expect("time");
    snapshot::scan(&mut r)
        .expect("scans")
        .last()
        .map(|(_, n)| *n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Restoring from the last snapshot (with at least `delay` throws after it) gives
    /// what the whole log's replay gives: the same game, seq, next throw (the dice
    /// state), turn deadline and pause, and the events after it; the encoder goes on
    /// writing the same bytes.
    #[test]
    fn a_restore_from_the_last_snapshot_equals_the_full_replay(
        seed in any::<u64>(),
        cut in 0.0f64..1.0,
        delay in 0u64..=20,
    ) {
        let batches = random_game(seed);
        let k = 1 + ((batches.len() - 1) as f64 * cut) as usize;
        let bytes = pack_in_pieces(&batches[..k]);
        let live: Vec<LoggedEvent> = batches[..k].concat();
        let whole = crate::replay::resume(None, &live).expect("the whole log replays");
        let tail = decode_tail(&bytes, delay).expect("unpacks from the snapshot");
        let part = crate::replay::resume(tail.from.as_ref(), &tail.events).expect("replays");
        prop_assert_eq!(part.game, whole.game);
        prop_assert_eq!(part.seq, whole.seq);
        prop_assert_eq!(part.next_throw, whole.next_throw);
        prop_assert_eq!(part.last_turn_deadline, whole.last_turn_deadline);
        prop_assert_eq!(part.paused, whole.paused);
        prop_assert!(whole.positions.ends_with(&part.positions));
        prop_assert!(live.ends_with(&tail.events));
        let rolls = rolls_after_last_snapshot(&bytes);
        match &tail.from {
            Some(from) => {
                prop_assert_eq!(live.len() - tail.events.len(), (from.seq + 1 - live[0].seq) as usize);
                prop_assert_eq!(part.before.game, from.game);
                // At most one snapshot back for the delay: the replay stays bounded.
                let replayed = tail.events.iter().filter(|e| crate::held::is_throw(&e.event)).count() as u64;
                prop_assert!(replayed >= delay && replayed < 2 * state::SNAPSHOT_EVERY + 20);
            }
            None => {
                prop_assert_eq!(&tail.events, &live);
                prop_assert!(rolls.is_none_or(|n| n < delay), "a snapshot is used when there is one");
            }
        }
        // Packing goes on from the tail's encoder as from the whole decode's.
        let mut more = bytes.clone();
        let mut encoder = tail.encoder;
        for batch in &batches[k..] {
            encoder.push(batch, &mut more);
        }
        prop_assert_eq!(more, pack_in_pieces(&batches));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A real log with bytes changed (in its snapshots too): a restore's read and replay
    /// give an error or a game, never a panic.
    #[test]
    fn a_damaged_log_restores_or_fails_cleanly(
        seed in 0u64..40,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = encode(&random_game(seed).concat());
        for (i, v) in edits {
            let k = i.index(bytes.len());
            bytes[k] = v;
        }
        let _ = decode(&bytes);
        if let Ok(t) = decode_tail(&bytes, 0) {
            let _ = crate::replay::resume(t.from.as_ref(), &t.events);
        }
    }
}

#[test]
fn a_long_game_has_a_snapshot_every_64_throws_and_costs_few_bytes() {
    let (seed, live) = (0..200u64)
        .map(|s| (s, random_game(s).concat()))
        .find(|(_, l)| l.iter().filter(|e| crate::held::is_throw(&e.event)).count() > 200)
        .expect("a game of over 200 throws");
    let bytes = encode(&live);
    let mut r = wire::Reader::new(&bytes);
    r.take(1, "format").expect("format");
    r.u64("seq").expect("seq");
    r.i64("time").expect("time");
    let found = snapshot::scan(&mut r).expect("scans");
    let throws = live
        .iter()
        .filter(|e| crate::held::is_throw(&e.event))
        .count() as u64;
    assert_eq!(
        found.len() as u64,
        (throws - 1) / state::SNAPSHOT_EVERY,
        "seed {seed}"
    );
    for &(at, _) in &found {
        let n = wire::Reader::new(&bytes[at + 1..]).u64("len").expect("len");
        assert!(n + 2 <= 120, "seed {seed}: a snapshot of {n} bytes");
    }
    assert_eq!(decode(&bytes).expect("unpacks").events, live);
}

#[test]
fn a_snapshot_that_differs_from_the_replay_is_a_decode_error() {
    let live = (0..200u64)
        .map(|s| random_game(s).concat())
        .find(|l| l.iter().filter(|e| crate::held::is_throw(&e.event)).count() > 100)
        .expect("a game of over 100 throws");
    let bytes = encode(&live);
    let mut r = wire::Reader::new(&bytes);
    r.take(1, "format").expect("format");
    r.u64("seq").expect("seq");
    r.i64("time").expect("time");
    let (at, _) = snapshot::scan(&mut r).expect("scans")[0];
    let mut r = wire::Reader::new(&bytes[at + 1..]);
    let good = snapshot::read(&mut r).expect("reads");
    let end = at + 1 + r.offset();
    let mut forged = good.clone();
    forged.next_throw += 1;
    let op = snapshot::op_bytes(&snapshot::state_at(&forged)).expect("writes");
    let spliced = [&bytes[..at], &op[..], &bytes[end..]].concat();
    let err = decode(&spliced).expect_err("a forged snapshot");
    assert!(
        err.to_string()
            .contains("snapshot differs from the replayed state: throw number"),
        "{err}"
    );
    // A restore from that snapshot takes it as written: only a whole decode checks.
    assert!(decode_tail(&spliced, 0).is_ok());
    // In a format-1 log a snapshot is an unknown op.
    let mut old = bytes.clone();
    old[0] = FORMAT_1;
    assert!(decode(&old)
        .expect_err("format 1")
        .to_string()
        .contains("unknown op kind 11"));
}

/// A game stored in format 1 before snapshots goes on in format 1 after a restore: no
/// snapshot is written into it, and it restores from its start.
#[test]
fn a_format_1_log_goes_on_without_snapshots() {
    let batches = (0..200u64)
        .map(random_game)
        .find(|b| {
            b.concat()
                .iter()
                .filter(|e| crate::held::is_throw(&e.event))
                .count()
                > 100
        })
        .expect("a game of over 100 throws");
    let mut bytes = pack_in_pieces(&batches[..1]);
    bytes[0] = FORMAT_1;
    let mut encoder = decode(&bytes).expect("format 1 reads").encoder;
    for batch in &batches[1..] {
        encoder.push(batch, &mut bytes);
    }
    assert_eq!(bytes[0], FORMAT_1);
    let live = batches.concat();
    assert_eq!(decode(&bytes).expect("reads").events, live);
    let tail = decode_tail(&bytes, 0).expect("reads for a restore");
    assert_eq!((tail.from, tail.events), (None, live));
    assert!(
        pack_in_pieces(&batches).len() > bytes.len(),
        "format 2 has snapshots"
    );
}
