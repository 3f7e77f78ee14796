//! The event log: the state is a pure fold of it, a restart (kill -9) at any point loses
//! nothing and plays no match twice, and retried effects and reports change nothing.

mod common;

use common::*;
use parchis_tournament::{
    room_code, Effect, Entry, Event, FoldError, Input, MatchStatus, Phase, Tournament,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn every_prefix_of_a_log_folds_to_the_state_it_had_then() {
    let mut h = Harness::new(settings("pairs"));
    h.register_pairs(5);
    let mut states = vec![h.t.clone()];
    let mut lens = vec![h.log.len()];
    h.send(Input::Close { by: ORGANISER }).expect("closes");
    states.push(h.t.clone());
    lens.push(h.log.len());
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    while h.step_one() || !h.playing().is_empty() {
        if h.pending.is_empty() {
            if let Some(&id) = h.playing().first() {
                let c = if rng.gen_bool(0.5) {
                    parchis_engine::Colour::Blue
                } else {
                    parchis_engine::Colour::Red
                };
                let game_id = h.t.match_(id).and_then(|m| m.game_id).expect("game");
                h.send(Input::GameFinished {
                    id,
                    game_id,
                    places: vec![c],
                })
                .expect("result");
            }
        }
        states.push(h.t.clone());
        lens.push(h.log.len());
    }
    assert_eq!(h.t.phase(), Phase::Finished);
    for (state, len) in states.iter().zip(lens) {
        assert_eq!(
            &Tournament::from_entries(&h.log[..len]).expect("folds"),
            state
        );
    }
}

#[test]
fn a_corrupt_log_is_refused_not_guessed() {
    let mut h = Harness::new(settings("pairs"));
    h.register_pairs(2);
    assert_eq!(
        Tournament::from_entries(&h.log[1..]),
        Err(FoldError::NotCreated)
    );
    let mut log = h.log.clone();
    log[1].v = 99;
    assert_eq!(Tournament::from_entries(&log), Err(FoldError::Format(99)));
    let mut log = h.log.clone();
    log.push(log[1].clone());
    assert!(matches!(
        Tournament::from_entries(&log),
        Err(FoldError::Misfit(_))
    ));
    let mut log = h.log.clone();
    log.push(Entry::new(T0, Event::RoundStarted { round: 1 }));
    assert!(matches!(
        Tournament::from_entries(&log),
        Err(FoldError::Misfit(_))
    ));
}

#[test]
fn effects_lost_in_a_crash_are_owed_again_with_the_same_room_codes() {
    let mut h = Harness::new(settings("pairs"));
    h.register_pairs(4);
    // The close and round 1's start are stored; the director dies before acting.
    let fx = h.send(Input::Close { by: ORGANISER }).expect("closes");
    let created: Vec<String> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::CreateRoom(s) => Some(s.room.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(created.len(), 2);
    h.pending.clear();
    h.restart();
    let owed: Vec<String> = h
        .pending
        .iter()
        .filter_map(|e| match e {
            Effect::CreateRoom(s) => Some(s.room.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(owed, created, "the same rooms, by the same codes");
    assert_eq!(
        owed[0],
        room_code(h.t.id(), parchis_tournament::MatchId(1), 0)
    );
    // Acting twice (the first attempt did reach the rooms) creates no second game.
    let again = h.pending.clone();
    h.run_effects();
    h.pending = again;
    h.run_effects();
    assert!(h.rooms.values().all(|r| r.creates == 2));
    assert_eq!(h.playing().len(), 2);
    let games: Vec<_> = h.t.matches().filter_map(|m| m.game_id).collect();
    assert_eq!(games.len(), 2);
}

#[test]
fn retried_reports_store_nothing() {
    let mut h = Harness::new(settings("pairs"));
    h.register_pairs(4);
    h.close();
    let id = h.playing()[0];
    let m = h.t.match_(id).expect("m").clone();
    let room = m.room.clone().expect("room");
    let game_id = m.game_id.expect("game");
    assert_eq!(h.send(Input::RoomOpened { id, room }), Ok(vec![]));
    assert_eq!(h.send(Input::GameStarted { id, game_id }), Ok(vec![]));
    let places = vec![parchis_engine::Colour::Red];
    assert!(!h
        .send(Input::GameFinished {
            id,
            game_id,
            places: places.clone()
        })
        .expect("result")
        .is_empty());
    assert_eq!(
        h.send(Input::GameFinished {
            id,
            game_id,
            places: vec![parchis_engine::Colour::Blue]
        }),
        Ok(vec![]),
        "a duplicate report stores nothing, and the first result stands"
    );
    let m = h.t.match_(id).expect("m");
    assert_eq!(m.status, MatchStatus::Finished);
    assert_eq!(m.winner(), Some(m.entrants[1]));
    let _ = places;
}

/// Plays a knockout of `n` pairs, killing the director with probability `p` before each
/// step; checks it ends as a knockout must, with one room and one game per match.
fn crashy(n: u128, seed: u64, p: f64) -> Harness {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut h = Harness::new(settings("pairs"));
    h.register_pairs(n);
    h.send(Input::Close { by: ORGANISER }).expect("closes");
    let mut guard = 0;
    loop {
        guard += 1;
        assert!(guard < 100_000, "no end");
        if rng.gen_bool(p) {
            h.restart();
        }
        if h.step_one() {
            continue;
        }
        let Some(&id) = h.playing().first() else {
            break;
        };
        let game_id = h.t.match_(id).and_then(|m| m.game_id).expect("game");
        let c = if rng.gen_bool(0.5) {
            parchis_engine::Colour::Blue
        } else {
            parchis_engine::Colour::Red
        };
        h.send(Input::GameFinished {
            id,
            game_id,
            places: vec![c],
        })
        .expect("result");
    }
    assert_eq!(h.t.phase(), Phase::Finished);
    let view = h.t.view();
    assert_eq!(view.matches.len(), n as usize - 1);
    assert_eq!(h.rooms.len(), n as usize - 1, "one room per match");
    assert!(h.rooms.values().all(|r| r.game.is_some()));
    let games: std::collections::BTreeSet<_> =
        view.matches.iter().filter_map(|m| m.game_id).collect();
    assert_eq!(games.len(), n as usize - 1, "one game per match");
    h.assert_replays();
    h
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn a_director_killed_anywhere_finishes_with_the_same_draw(
        n in 2u128..=9,
        seed in any::<u64>(),
    ) {
        let calm = crashy(n, seed, 0.0);
        let killed = crashy(n, seed, 0.3);
        prop_assert_eq!(calm.t.seeds(), killed.t.seeds());
        let round1 = |h: &Harness| -> Vec<Vec<parchis_tournament::EntrantId>> {
            h.t.matches().filter(|m| m.round == 1).map(|m| m.entrants.clone()).collect()
        };
        prop_assert_eq!(round1(&calm), round1(&killed));
    }
}
