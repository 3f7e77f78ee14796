//! The formats played to the end with random results: knockouts of pairs (byes to the
//! top seeds), an individual knockout with tables of 4 where the top 2 go through, and
//! swiss tournaments (no repeated pairing while avoidable, at most one bye each).

mod common;

use common::*;
use parchis_tournament::swiss::{pair_set, Tally};
use parchis_tournament::{EntrantId, Format, MatchStatus, Phase, Tournament};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

/// Plays a knockout of `n` pairs with random results (seeded by `seed`) and checks it.
fn pairs_knockout(n: u128, seed: u64) -> Harness {
    let mut h = Harness::new(settings("pairs"));
    h.register_pairs(n);
    h.close();
    h.play_out(&mut ChaCha8Rng::seed_from_u64(seed));
    check_knockout(&h, n as usize);
    h.assert_replays();
    h
}

/// n − 1 games; every entrant but the champion lost exactly one; the champion is the
/// winner of the final (the only match of the last round).
fn check_knockout(h: &Harness, n: usize) {
    let t = &h.t;
    assert_eq!(t.phase(), Phase::Finished);
    let view = t.view();
    assert_eq!(
        view.matches.len(),
        n - 1,
        "a knockout of {n} plays n - 1 games"
    );
    assert!(view
        .matches
        .iter()
        .all(|m| m.status == MatchStatus::Finished));
    assert!(view.matches.iter().all(|m| m.game_id.is_some()));
    let last = view.matches.iter().map(|m| m.round).max().expect("a final");
    let finals: Vec<_> = view.matches.iter().filter(|m| m.round == last).collect();
    assert_eq!(finals.len(), 1);
    assert_eq!(view.champion, finals[0].winner);
    let mut losses: BTreeMap<EntrantId, u32> = BTreeMap::new();
    for m in &view.matches {
        for &e in &m.entrants {
            if Some(e) != m.winner {
                *losses.entry(e).or_default() += 1;
            }
        }
    }
    let champion = view.champion.expect("a champion");
    assert_eq!(losses.get(&champion), None);
    assert_eq!(losses.len(), n - 1);
    assert!(losses.values().all(|&l| l == 1));
}

/// Seed 004: "el campeonato se jugará por sistema de eliminación" (a knockout).
#[test]
fn a_knockout_of_five_pairs_gives_three_byes_and_plays_four_games() {
    let h = pairs_knockout(5, 1);
    let view = h.t.view();
    assert_eq!(view.rounds, 3);
    let round1_byes: Vec<EntrantId> = view
        .byes
        .iter()
        .filter(|b| b.round == 1)
        .map(|b| b.entrant)
        .collect();
    // Byes go to the top seeds (issue 27: "byes go to the top seeds").
    assert_eq!(round1_byes.len(), 3);
    let top3: BTreeSet<EntrantId> = h.t.seeds()[..3].iter().copied().collect();
    assert_eq!(round1_byes.into_iter().collect::<BTreeSet<_>>(), top3);
    let round1: Vec<_> = view.matches.iter().filter(|m| m.round == 1).collect();
    assert_eq!(round1.len(), 1);
    assert_eq!(round1[0].entrants, h.t.seeds()[3..].to_vec());
}

#[test]
fn a_knockout_of_eight_pairs_plays_seven_games_to_the_final() {
    let h = pairs_knockout(8, 2);
    let view = h.t.view();
    assert_eq!(view.rounds, 3);
    assert!(view.byes.is_empty());
    let per_round: Vec<usize> = (1..=3)
        .map(|r| view.matches.iter().filter(|m| m.round == r).count())
        .collect();
    assert_eq!(per_round, vec![4, 2, 1]);
    // Every room was created once, and no match was played twice.
    assert!(h.rooms.values().all(|r| r.creates == 1));
    assert_eq!(h.rooms.len(), 7);
}

/// Seed 004: "los compañeros se sitúan en extremos opuestos del tablero, con lo que una
/// pareja utilizará el azul y el verde y la otra el rojo y el amarillo".
#[test]
fn every_pairs_room_seats_partners_blue_with_green_and_red_with_yellow() {
    use parchis_engine::Colour;
    let h = pairs_knockout(4, 3);
    for e in &h.effects {
        if let parchis_tournament::Effect::CreateRoom(spec) = e {
            assert_eq!(spec.seats.len(), 4);
            assert_eq!(spec.preset, "pairs");
            let entrant = |c: Colour| spec.seats.iter().find(|s| s.colour == c).map(|s| s.entrant);
            assert_eq!(entrant(Colour::Blue), entrant(Colour::Green));
            assert_eq!(entrant(Colour::Red), entrant(Colour::Yellow));
            assert_ne!(entrant(Colour::Blue), entrant(Colour::Red));
            // The two seats of one entrant are its two partners.
            let blue = spec
                .seats
                .iter()
                .find(|s| s.colour == Colour::Blue)
                .expect("blue");
            let green = spec
                .seats
                .iter()
                .find(|s| s.colour == Colour::Green)
                .expect("green");
            assert_ne!(blue.account, green.account);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_knockout_of_pairs_plays_n_minus_one_games(n in 2u128..=17, seed in any::<u64>()) {
        pairs_knockout(n, seed);
    }
}

#[test]
fn an_individual_knockout_with_tables_of_four_sends_the_top_two_through() {
    let mut s = settings("online");
    s.table_size = Some(4);
    s.advance = Some(2);
    let mut h = Harness::new(s);
    h.register_players(16);
    h.close();
    h.play_out(&mut ChaCha8Rng::seed_from_u64(4));
    let t = &h.t;
    assert_eq!(t.phase(), Phase::Finished);
    let view = t.view();
    let per_round: Vec<usize> = (1..=3)
        .map(|r| view.matches.iter().filter(|m| m.round == r).count())
        .collect();
    assert_eq!(per_round, vec![4, 2, 1]);
    for m in &view.matches {
        assert_eq!(m.entrants.len(), 4);
        assert_eq!(m.places.len(), 4);
    }
    // Table j of round r + 1 holds exactly the top two of tables 2j and 2j + 1 of round r.
    for r in 1..3 {
        for next in view.matches.iter().filter(|m| m.round == r + 1) {
            let mut fed: Vec<EntrantId> = view
                .matches
                .iter()
                .filter(|m| m.round == r && m.table / 2 == next.table)
                .flat_map(|m| m.places[..2].to_vec())
                .collect();
            fed.sort();
            let mut got = next.entrants.clone();
            got.sort();
            assert_eq!(got, fed);
        }
    }
    let last = view.matches.iter().find(|m| m.round == 3).expect("final");
    assert_eq!(view.champion, Some(last.places[0]));
    h.assert_replays();
}

#[test]
fn an_individual_knockout_of_ten_gives_the_top_seeds_small_tables() {
    let mut s = settings("classic");
    s.table_size = Some(4);
    s.advance = Some(2);
    let mut h = Harness::new(s);
    h.register_players(10);
    h.close();
    h.play_out(&mut ChaCha8Rng::seed_from_u64(5));
    let t = &h.t;
    let seeds = t.seeds().to_vec();
    let round1: Vec<_> = t.matches().filter(|m| m.round == 1).collect();
    let sizes: Vec<usize> = round1.iter().map(|m| m.entrants.len()).collect();
    // 10 players at 4 tables (3 rounds of 4 → 2 → 1): sizes 2, 3, 2, 3 in bracket order,
    // the top seeds' tables the small ones (a table of 2 with 2 through is a bye).
    assert_eq!(sizes.iter().sum::<usize>(), 10);
    let with_seed = |e: EntrantId| {
        round1
            .iter()
            .find(|m| m.entrants.contains(&e))
            .expect("drawn")
    };
    assert_eq!(with_seed(seeds[0]).entrants.len(), 2);
    assert_eq!(with_seed(seeds[0]).status, MatchStatus::Bye);
    assert_eq!(with_seed(seeds[1]).entrants.len(), 2);
    assert_eq!(with_seed(seeds[3]).entrants.len(), 3);
    assert_eq!(t.phase(), Phase::Finished);
    assert!(t.champion().is_some());
    h.assert_replays();
}

/// Plays a swiss of `n` entrants over `rounds` rounds with random results; checks every
/// round's pairing against a brute-force search: a repeat only when none avoids it, at
/// most one bye per entrant.
fn swiss(n: u128, rounds: u32, seed: u64, pairs: bool) -> Harness {
    let mut s = settings(if pairs { "pairs" } else { "online" });
    s.format = Format::Swiss;
    s.rounds = Some(rounds);
    let mut h = Harness::new(s);
    if pairs {
        h.register_pairs(n);
    } else {
        h.register_players(n);
    }
    h.close();
    h.play_out(&mut ChaCha8Rng::seed_from_u64(seed));
    let t = &h.t;
    assert_eq!(t.phase(), Phase::Finished);
    let played = t.total_rounds();
    assert_eq!(
        played,
        rounds.min(if n.is_multiple_of(2) {
            n as u32 - 1
        } else {
            n as u32
        })
    );
    let mut tally = Tally::default();
    let mut seen = BTreeSet::new();
    for r in 1..=played {
        let ms: Vec<_> = t.matches().filter(|m| m.round == r).collect();
        let round_pairs: Vec<[EntrantId; 2]> = ms
            .iter()
            .filter(|m| m.entrants.len() == 2)
            .map(|m| [m.entrants[0], m.entrants[1]])
            .collect();
        let repeats = pair_set(&round_pairs).intersection(&seen).count() > 0;
        if repeats {
            assert!(
                !avoidable(t.seeds(), &tally),
                "round {r} repeats a pairing that could be avoided"
            );
        }
        seen.extend(pair_set(&round_pairs));
        for m in &ms {
            match m.entrants.as_slice() {
                [e] => tally.add_bye(*e),
                [a, b] => tally.add_match(*a, *b, m.winner()),
                _ => panic!("swiss tables have one or two entrants"),
            }
        }
        assert!(tally.byes.values().all(|&b| b <= 1), "a second bye");
    }
    let standings = t.standings();
    assert_eq!(standings.len(), n as usize);
    assert_eq!(t.champion(), Some(standings[0].entrant));
    h.assert_replays();
    h
}

/// Whether some bye (among entrants without one) and pairing of the rest avoids every
/// earlier opponent.
fn avoidable(all: &[EntrantId], tally: &Tally) -> bool {
    fn perfect(left: &[EntrantId], tally: &Tally) -> bool {
        let Some((&a, rest)) = left.split_first() else {
            return true;
        };
        rest.iter().enumerate().any(|(i, &b)| {
            if tally.met(a, b) {
                return false;
            }
            let mut others = rest.to_vec();
            others.remove(i);
            perfect(&others, tally)
        })
    }
    if all.len().is_multiple_of(2) {
        return perfect(all, tally);
    }
    all.iter().any(|&bye| {
        tally.byes.get(&bye).copied().unwrap_or(0) == 0 && {
            let rest: Vec<EntrantId> = all.iter().copied().filter(|&e| e != bye).collect();
            perfect(&rest, tally)
        }
    })
}

#[test]
fn a_swiss_of_six_over_three_rounds_repeats_no_pairing() {
    let h = swiss(6, 3, 6, true);
    let t = &h.t;
    let mut seen = BTreeSet::new();
    for m in t.matches() {
        assert_eq!(m.entrants.len(), 2, "six entrants: no byes");
        assert!(seen.insert((
            m.entrants[0].min(m.entrants[1]),
            m.entrants[0].max(m.entrants[1])
        )));
    }
    assert_eq!(t.matches().count(), 9);
}

#[test]
fn a_swiss_of_five_gives_one_bye_a_round_never_two_to_one_entrant() {
    let h = swiss(5, 5, 7, false);
    let byes = h.t.view().byes;
    assert_eq!(byes.len(), 5);
    let who: BTreeSet<EntrantId> = byes.iter().map(|b| b.entrant).collect();
    assert_eq!(who.len(), 5);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_swiss_avoids_repeats_and_second_byes(
        n in 2u128..=10,
        rounds in 1u32..=10,
        seed in any::<u64>(),
        pairs in any::<bool>(),
    ) {
        swiss(n, rounds, seed, pairs);
    }
}

#[test]
fn swiss_rounds_beyond_what_the_entrants_allow_are_not_played() {
    let h = swiss(4, 9, 8, false);
    assert_eq!(h.t.total_rounds(), 3);
}

#[test]
fn the_seeding_is_by_rating_then_random() {
    let mut h = Harness::new(settings("online"));
    for (i, r) in [
        (1, Some(1.0)),
        (2, None),
        (3, Some(3.0)),
        (4, None),
        (5, Some(2.0)),
    ] {
        h.send(parchis_tournament::Input::Register {
            account: account(i, r),
            partner: None,
            team_name: None,
        })
        .expect("registers");
    }
    h.close();
    let seeds = h.t.seeds().to_vec();
    assert_eq!(&seeds[..3], &[EntrantId(3), EntrantId(5), EntrantId(1)]);
    let tail: BTreeSet<EntrantId> = seeds[3..].iter().copied().collect();
    assert_eq!(tail, [EntrantId(2), EntrantId(4)].into_iter().collect());
    // The same seed and registrations give the same draw.
    let again = Tournament::from_entries(&h.log).expect("folds");
    assert_eq!(again.seeds(), &seeds[..]);
}
