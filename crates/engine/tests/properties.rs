//! Property tests over random legal games (proptest): structural invariants at every
//! step, every legal action applies, both position formats round-trip, and every game
//! ends with a winner.

use parchis_engine::{
    is_safe, Action, BlockadeKind, Colour, Dice, Event, Expect, Game, Location, MoveKind, PieceId,
    Position, RuleSet,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

/// Location of a piece of `c` that has travelled `steps` from its exit square (0..=71).
fn loc_at(c: Colour, steps: u8) -> Location {
    match steps {
        0..=63 => Location::Ring(((c.exit_square() as u16 - 1 + steps as u16) % 68) as u8 + 1),
        64..=70 => Location::HomeColumn(steps - 63),
        _ => Location::Goal,
    }
}

/// Pieces per occupied square; home-column squares are per colour.
fn occupancy(g: &Game) -> HashMap<(Option<Colour>, Location), Vec<PieceId>> {
    let mut m: HashMap<_, Vec<PieceId>> = HashMap::new();
    for c in Colour::ALL {
        for (i, l) in g.pieces(c).into_iter().enumerate() {
            let key = match l {
                Location::Ring(_) => (None, l),
                Location::HomeColumn(_) => (Some(c), l),
                _ => continue,
            };
            m.entry(key).or_default().push(PieceId {
                colour: c,
                piece: i as u8,
            });
        }
    }
    m
}

fn key(c: Colour, l: Location) -> (Option<Colour>, Location) {
    match l {
        Location::HomeColumn(_) => (Some(c), l),
        _ => (None, l),
    }
}

/// Whether two pieces on `l` block passage under `rules` (R-BLOCK and the matrix rows).
fn blocks(rules: &RuleSet, l: Location, pieces: &[PieceId]) -> bool {
    if pieces.len() < 2 {
        return false;
    }
    let (a, b) = (pieces[0].colour, pieces[1].colour);
    match l {
        Location::HomeColumn(_) => true,
        Location::Ring(sq) => {
            if rules.blockades_only_on_safe && !is_safe(sq) {
                return false;
            }
            a == b
                || rules.blockade == BlockadeKind::AnyTwo
                || (rules.blockade == BlockadeKind::SameTeam && a.index() % 2 == b.index() % 2)
                || (rules.mixed_blockades_on_safe && is_safe(sq))
        }
        _ => false,
    }
}

/// Checks a die or bonus move against the board before it: no blockade passed, no
/// full square landed on (R-BLOCK, R-CAP, D-1), captures where the rules say.
fn check_move(
    before: &Game,
    colour: Colour,
    piece: u8,
    steps: u8,
    take_partner: bool,
    events: &[Event],
) {
    let rules = *before.rules();
    let id = PieceId { colour, piece };
    let start = before
        .progress(id)
        .expect("a moving piece is out of the nest");
    let occ = occupancy(before);
    let others_on = |l: Location| -> Vec<PieceId> {
        occ.get(&key(colour, l))
            .map(|v| v.iter().copied().filter(|p| *p != id).collect())
            .unwrap_or_default()
    };
    let mut path = Vec::new();
    for s in 1..=steps {
        let x = start + s;
        assert!(
            x <= 71 || rules.bounce,
            "{before}: {id} overshot the goal without bounce"
        );
        path.push(if x > 71 { 142 - x } else { x });
    }
    let (last, passed) = path.split_last().expect("at least one step");
    for &q in passed {
        let l = loc_at(colour, q);
        if l != Location::Goal {
            assert!(
                !blocks(&rules, l, &others_on(l)),
                "{before}: {id} passed the blockade on {l}"
            );
        }
    }
    let landing = loc_at(colour, *last);
    if landing != Location::Goal {
        let others = others_on(landing);
        assert!(
            others.len() < 2,
            "{before}: {id} landed on the full square {landing}"
        );
        if let (Location::Ring(sq), [o]) = (landing, others.as_slice()) {
            let captured = events.iter().any(|e| matches!(e, Event::PieceCaptured { colour: c, piece: p, .. } if *c == o.colour && *p == o.piece));
            let mate = rules.teams && o.colour.index() % 2 == colour.index() % 2;
            let expected = if o.colour == colour || is_safe(sq) {
                false
            } else if mate {
                take_partner
            } else {
                true
            };
            assert_eq!(captured, expected, "{before}: {id} on {landing} with {o}");
            if is_safe(sq) && o.colour != colour && !mate {
                assert_eq!(
                    rules.safe_with_opponent,
                    parchis_engine::SafeWithOpponent::Join,
                    "{before}: {id} joined {o} on safe {sq}"
                );
            }
        }
    }
}

fn check_invariants(g: &Game) {
    let rules = *g.rules();
    let pos = g.to_position();
    for p in &pos.players {
        assert_eq!(p.pieces.len(), 4);
    }
    for ((_, l), pieces) in occupancy(g) {
        assert!(pieces.len() <= 2, "{g}: {} pieces on {l}", pieces.len());
        if pieces.len() == 2 && pieces[0].colour != pieces[1].colour {
            let mates = rules.teams && pieces[0].colour.index() % 2 == pieces[1].colour.index() % 2;
            match l {
                Location::Ring(sq) => assert!(
                    mates
                        || (is_safe(sq)
                            && rules.safe_with_opponent == parchis_engine::SafeWithOpponent::Join),
                    "{g}: two colours on {sq}"
                ),
                _ => panic!("{g}: two colours in a home column"),
            }
        }
    }
    // Both position formats round-trip exactly.
    let json = serde_json::to_string(&pos).expect("serialize");
    let back: Position = serde_json::from_str(&json).expect("deserialize");
    assert_eq!(Game::try_from(&back).expect("valid JSON position"), *g);
    let text = g.to_string();
    assert_eq!(
        text.parse::<Game>()
            .unwrap_or_else(|e| panic!("{text}: {e}")),
        *g,
        "{text}"
    );
}

/// Every preset, and the classic variants.
const RULE_SETS: [&str; 8] = [
    "online",
    "classic",
    "pairs",
    "parcheesi",
    "parcheesi-strict",
    "classic+murcia-12+two-out+one-out",
    "classic+mixed-safe+murcia-exact",
    "classic+safe-only",
];

/// Plays one random legal game, checking every step; returns the number of throws.
fn random_game(seed: u64, players: usize, rules: RuleSet) -> (Game, u32) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let players = players.clamp(rules.min_players as usize, rules.max_players as usize);
    let mut seated: Vec<Colour> = Colour::ALL.to_vec();
    while seated.len() > players {
        seated.remove(rng.gen_range(0..seated.len()));
    }
    let first = seated[rng.gen_range(0..seated.len())];
    let mut g = Game::new(rules, &seated, first).expect("new game");
    let mut throws = 0;
    loop {
        check_invariants(&g);
        let action = match g.expect() {
            Expect::Finished(_) => return (g, throws),
            Expect::Roll { .. } => {
                throws += 1;
                assert!(throws < 10_000, "game did not end: {g}");
                let values: Vec<u8> = (0..rules.dice).map(|_| rng.gen_range(1..=6)).collect();
                Action::Roll {
                    dice: Dice::from_slice(&values).expect("dice"),
                }
            }
            Expect::Move { .. } => {
                let legal = g.legal_actions();
                assert!(
                    !legal.is_empty(),
                    "a move stage always has a legal action: {g}"
                );
                // Every legal action applies without error.
                for a in &legal {
                    assert!(g.apply(a).is_ok(), "{g}: legal action {a} refused");
                }
                legal[rng.gen_range(0..legal.len())]
            }
        };
        let before = g;
        let events = g
            .play(&action)
            .unwrap_or_else(|e| panic!("{before}: {action}: {e}"));
        let take = matches!(
            action,
            Action::Move { capture: true, .. } | Action::Bonus { capture: true, .. }
        );
        for e in &events {
            if let Event::PieceMoved {
                colour,
                piece,
                steps,
                by: MoveKind::Die | MoveKind::Bonus,
                ..
            } = *e
            {
                check_move(&before, colour, piece, steps, take, &events);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_games_keep_every_invariant_and_end_with_a_winner(seed in any::<u64>(), players in 2usize..=4, which in 0..RULE_SETS.len()) {
        let rules = RuleSet::from_name(RULE_SETS[which]).expect("rule set");
        let (g, throws) = random_game(seed, players, rules);
        let o = g.outcome().expect("finished");
        prop_assert!(g.pieces(o.winner).iter().all(|l| *l == Location::Goal));
        if let Some(p) = o.partner {
            prop_assert!(g.pieces(p).iter().all(|l| *l == Location::Goal));
        }
        prop_assert!(throws > 10);
    }

    #[test]
    fn arbitrary_text_never_panics(s in "online( [YBRG]!?:[0-9nghr',]{1,14}){0,4}( turn=[YBRGX])?( roll| move=[0-9*,]{1,5})?( bonus=[0-9]{1,2})?( open=[YBRG0-9+,]{1,8})?") {
        // Parsing and validating any text either succeeds or reports an error.
        if let Ok(g) = s.parse::<Game>() {
            // A valid position's canonical form parses back to the same game.
            prop_assert_eq!(g.to_string().parse::<Game>().ok(), Some(g));
            let _ = g.legal_actions();
        }
    }
}

#[test]
fn invalid_positions_are_rejected_with_the_rule() {
    let cases = [
        ("online Y:10,10,10,n R:n,n,n,n turn=Y roll", "R-CAP"),
        ("online Y:10,10',n,n R:10,n,n,n turn=Y roll", "R-CAP"),
        ("online Y:10,n,n,n,n R:n,n,n,n turn=Y roll", "exactly 4"),
        ("online Y:13,n,n,n R:13',n,n,n turn=Y roll", "R-CAPTURE"),
        ("online Y:12',12',n,n R:n,n,n,n turn=Y roll", "D-6"),
        ("online Y:n,n,n,n turn=Y roll", "R-SEAT"),
        ("online Y:n,n,n,n R:n,n,n,n turn=B roll", "R-ORDER"),
        ("online Y:g,g,g,g R:n,n,n,n turn=R roll", "R-WIN"),
        ("online Y:n,n,n,n R:n,n,n,n turn=Y move=7,1", "1 to 6"),
        ("online Y:h9,n,n,n R:n,n,n,n turn=Y roll", "h1..h7"),
        ("online Y:69,n,n,n R:n,n,n,n turn=Y roll", "1..68"),
        ("online Y!:5,n,n,n R:n,n,n,n turn=R roll", "abandoned"),
        (
            "online+murcia-12 Y:n,n,n,n R:n,n,n,n turn=Y roll",
            "needs one die",
        ),
        ("pairs Y:n,n,n,n R:n,n,n,n turn=Y roll", "4 to 4"),
        (
            "online Y:n,n,n,n R:n,n,n,n turn=Y roll doubles=3",
            "R-THIRD",
        ),
        ("", "preset"),
    ];
    for (text, needle) in cases {
        let err = text.parse::<Game>().expect_err(text).to_string();
        assert!(
            err.contains(needle),
            "{text:?}: error {err:?} should mention {needle:?}"
        );
    }
}

#[test]
fn d6_arrival_order_is_kept_on_shared_squares() {
    // Yellow joins red on safe square 12: yellow arrived last and is marked late.
    let g: Game = "online Y:10,n,n,n R:12,n,n,n turn=Y move=2,6"
        .parse()
        .unwrap();
    let (g, _) = g
        .apply(&Action::Move {
            piece: 0,
            die: 2,
            capture: false,
        })
        .unwrap();
    let pos = g.to_position();
    assert!(pos.players[0].pieces[0].late);
    assert!(!pos.players[1].pieces[0].late);
    // When yellow leaves, red is alone and no longer marked.
    let (g, _) = g
        .apply(&Action::Move {
            piece: 0,
            die: 6,
            capture: false,
        })
        .unwrap();
    assert_eq!(g.to_string(), "online Y:18,n,n,n R:12,n,n,n turn=R roll");
}

#[test]
fn game_records_rebuilt_from_events_replay_to_the_same_game() {
    use parchis_engine::{GameRecord, Preset};
    for seed in 0..6u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let seats = vec![Colour::Yellow, Colour::Red, Colour::Green];
        let mut g = Game::new(RuleSet::online(), &seats, Colour::Red).unwrap();
        let mut events = Vec::new();
        while g.outcome().is_none() {
            let action = match g.expect() {
                Expect::Roll { .. } => {
                    if rng.gen_range(0..40) == 0 {
                        Action::Timeout
                    } else {
                        Action::Roll {
                            dice: Dice::two(rng.gen_range(1..=6), rng.gen_range(1..=6)).unwrap(),
                        }
                    }
                }
                _ => {
                    let l = g.legal_actions();
                    l[rng.gen_range(0..l.len())]
                }
            };
            events.extend(g.play(&action).unwrap());
            if seed == 5 && events.len() > 200 && g.active_colours().len() == 3 {
                events.extend(
                    g.play(&Action::Abandon {
                        colour: Colour::Green,
                    })
                    .unwrap(),
                );
            }
        }
        let mut record =
            GameRecord::from_events(Preset::Online, seats.clone(), Colour::Red, &events);
        record.tags.push(("Room".into(), "ABC \"quoted\"".into()));
        let (replayed, replay_events) = record.replay().unwrap();
        assert_eq!(replayed, g);
        assert_eq!(replay_events, events);
        // The text export parses back to the same record.
        let text = record.to_string();
        let back: GameRecord = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back, record);
    }
}

#[test]
fn every_rule_set_plays_complete_games() {
    for (i, name) in RULE_SETS.iter().enumerate() {
        let rules = RuleSet::from_name(name).expect("rule set");
        for seed in 0..3u64 {
            let (g, _) = random_game(seed * 31 + i as u64, 4, rules);
            assert!(g.outcome().is_some(), "{name}");
        }
    }
}
