//! Property tests over random legal games (proptest): structural invariants at every
//! step, every legal action applies, both position formats round-trip, and every game
//! ends with a winner.
//!
//! Why one long file: it is a list of the generators and the invariants they feed, sharing the helpers at its top;
//! one test binary also keeps the build short.

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
    // D-29: with safe-only, pieces that would block stand together only on safe squares.
    if rules.blockades_only_on_safe {
        for ((_, l), pieces) in occupancy(g) {
            if pieces.len() == 2 && blocks(&rules, l, &pieces) {
                assert!(
                    matches!(l, Location::Ring(sq) if is_safe(sq)),
                    "{g}: a blockade on {l}, which is not a safe square"
                );
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
const RULE_SETS: [&str; 10] = [
    "online",
    "classic",
    "pairs",
    "parcheesi",
    "parcheesi-strict",
    "classic+murcia-12+two-out+one-out",
    "classic+mixed-safe+murcia-exact",
    "classic+safe-only",
    "classic+two-out",
    // D-33: variants are classic's only (`pairs+safe-only` is refused since issue 30).
    "classic+mixed-safe+safe-only",
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
            "murcia-12 is not played with online",
        ),
        // D-33 (issue 30): a variant on a preset it was not written for.
        (
            "online+two-out Y:n,n,n,n R:n,n,n,n turn=Y roll",
            "two-out is not played with online",
        ),
        (
            "parcheesi+safe-only Y:n,n,n,n R:n,n,n,n turn=Y roll",
            "safe-only is not played with parcheesi",
        ),
        (
            "pairs+safe-only Y:n,n,n,n B:n,n,n,n R:n,n,n,n G:n,n,n,n turn=Y roll",
            "cualquier lugar",
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
        // The game after each action, as `replay_with` must show it.
        let mut games = Vec::new();
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
            let produced = g.play(&action).unwrap();
            games.push((g, produced.clone()));
            events.extend(produced);
            if seed == 5 && events.len() > 200 && g.active_colours().len() == 3 {
                let produced = g
                    .play(&Action::Abandon {
                        colour: Colour::Green,
                    })
                    .unwrap();
                games.push((g, produced.clone()));
                events.extend(produced);
            }
        }
        let mut record =
            GameRecord::from_events(Preset::Online, seats.clone(), Colour::Red, &events);
        record.tags.push(("Room".into(), "ABC \"quoted\"".into()));
        let (replayed, replay_events) = record.replay().unwrap();
        assert_eq!(replayed, g);
        assert_eq!(replay_events, events);
        // Step by step: the game after each action and the events it produced.
        let mut seen = Vec::new();
        let (last, _) = record
            .replay_with(|game, produced| seen.push((*game, produced.to_vec())))
            .unwrap();
        assert_eq!(last, g);
        assert_eq!(seen.len(), record.actions.len());
        assert_eq!(seen, games);
        // The text export parses back to the same record.
        let text = record.to_string();
        let back: GameRecord = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back, record);
    }
}

/// `pairs` (seed 004, "puede optar por comerla y contar 20"): a move that captures a lone
/// partner piece is read back from the events as a capture also when the moving piece left
/// a blockade, whose `blockade_opened` comes between the move and the capture. Random
/// pair games with partner captures taken whenever offered, rebuilt from their events,
/// replay to the same events; some of those captures opened a blockade.
#[test]
fn a_partner_capture_that_opens_a_blockade_is_read_back_as_a_capture() {
    use parchis_engine::{Event, GameRecord, Preset};
    let mut covered = 0;
    for seed in 0..40u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let seats = Colour::ALL.to_vec();
        let mut g = Game::new(Preset::Pairs.rules(), &seats, Colour::Yellow).unwrap();
        let mut events = Vec::new();
        while g.outcome().is_none() && events.len() < 6_000 {
            let action = match g.expect() {
                Expect::Roll { .. } => Action::Roll {
                    dice: Dice::from_slice(&[rng.gen_range(1..=6)]).unwrap(),
                },
                _ => {
                    let l = g.legal_actions();
                    let captures: Vec<Action> = l
                        .iter()
                        .copied()
                        .filter(|a| {
                            matches!(
                                a,
                                Action::Move { capture: true, .. }
                                    | Action::Bonus { capture: true, .. }
                            )
                        })
                        .collect();
                    if captures.is_empty() {
                        l[rng.gen_range(0..l.len())]
                    } else {
                        captures[0]
                    }
                }
            };
            let produced = g.play(&action).unwrap();
            if matches!(
                action,
                Action::Move { capture: true, .. } | Action::Bonus { capture: true, .. }
            ) && matches!(produced.get(1), Some(Event::BlockadeOpened { .. }))
            {
                covered += 1;
            }
            events.extend(produced);
        }
        let record = GameRecord::from_events(Preset::Pairs, seats, Colour::Yellow, &events);
        let (replayed, replay_events) = record
            .replay()
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(replayed, g, "seed {seed}");
        assert_eq!(replay_events, events, "seed {seed}");
    }
    assert!(covered > 0, "some partner captures opened a blockade");
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

// ----- issue 18: invariants of bonuses, R-THIRD, two-out and the position reader ---------

/// The colour whose pieces `turn` moves on `g`'s board (pair play: the partner's once
/// all of `turn`'s are in the goal).
fn mover_on(g: &Game, turn: Colour) -> Colour {
    if g.rules().teams && g.pieces(turn).iter().all(|l| *l == Location::Goal) {
        Colour::ALL[(turn.index() + 2) % 4]
    } else {
        turn
    }
}

/// An oracle written from the rules reference, independent of the engine's move
/// generator: where piece `id` lands with a bonus move of `amount` squares on `g`'s
/// board, if it can make one (R-BONUS, R-BLOCK, R-CAP, R-SAFE, R-GOAL, R-BOUNCE,
/// Murcia, D-29).
fn bonus_landing(g: &Game, id: PieceId, amount: u8) -> Option<Location> {
    let rules = *g.rules();
    let colour = id.colour;
    let occ = occupancy(g);
    let here = g.location(id);
    let taker = match rules.bonus_takers {
        parchis_engine::BonusTakers::RingOnly => matches!(here, Location::Ring(_)),
        parchis_engine::BonusTakers::OutOfNestAndGoal => {
            !matches!(here, Location::Nest | Location::Goal)
        }
    };
    let start = g.progress(id).filter(|_| taker)?;
    let raw = start + amount;
    if rules.exact_count_last_safe && start < 63 && raw > 63 {
        return None;
    }
    if raw > 71 && (!rules.bounce || raw - 71 > 7) {
        return None;
    }
    let others_on = |l: Location| -> Vec<PieceId> {
        occ.get(&key(colour, l))
            .map(|v| v.iter().copied().filter(|p| *p != id).collect())
            .unwrap_or_default()
    };
    let path: Vec<u8> = (1..=amount)
        .map(|s| start + s)
        .map(|x| if x > 71 { 142 - x } else { x })
        .collect();
    let (last, passed) = path.split_last()?;
    if passed.iter().any(|&q| {
        let l = loc_at(colour, q);
        l != Location::Goal && l != here && blocks(&rules, l, &others_on(l))
    }) {
        return None;
    }
    let landing = loc_at(colour, *last);
    if landing == Location::Goal {
        return Some(landing);
    }
    let others = others_on(landing);
    let ok = match others.as_slice() {
        [] => true,
        [o] => {
            let safe = matches!(landing, Location::Ring(sq) if is_safe(sq));
            let mate = rules.teams && o.colour.index() % 2 == colour.index() % 2;
            if o.colour == colour {
                safe || !rules.blockades_only_on_safe
            } else if safe && !mate {
                rules.safe_with_opponent == parchis_engine::SafeWithOpponent::Join
            } else {
                true // a capture (or a partner's choice)
            }
        }
        _ => false,
    };
    ok.then_some(landing)
}

/// Whether some piece of `colour` can make a bonus move of `amount` now.
fn some_piece_can_take(g: &Game, colour: Colour, amount: u8) -> bool {
    (0..4u8).any(|piece| bonus_landing(g, PieceId { colour, piece }, amount).is_some())
}

/// Whether some piece of `colour` can take `first` and then some piece `then` (D-28:
/// the other order of two pending bonuses). The first move is made on a copy of the
/// position, capturing a lone opponent piece on a normal square.
fn playable_after(g: &Game, colour: Colour, first: u8, then: u8) -> bool {
    (0..4u8).any(|piece| {
        let id = PieceId { colour, piece };
        let Some(to) = bonus_landing(g, id, first) else {
            return false;
        };
        let mut p = g.to_position();
        let safe = matches!(to, Location::Ring(sq) if is_safe(sq));
        for pl in p.players.iter_mut() {
            for (i, q) in pl.pieces.iter_mut().enumerate() {
                let same_square = match (q.at, to) {
                    (Location::Ring(a), Location::Ring(b)) => a == b,
                    (a, b) => pl.colour == colour && a == b && !matches!(a, Location::Goal),
                };
                q.late = false;
                if pl.colour == colour && i == piece as usize {
                    q.at = to;
                } else if same_square && !safe && pl.colour != colour {
                    q.at = Location::Nest; // captured
                }
            }
        }
        // Bonuses are irrelevant to the check: describe the throw as just begun.
        if let parchis_engine::StagePosition::Move { bonus, .. } = &mut p.stage {
            bonus.clear();
            bonus.push(then);
        }
        match Game::try_from(&p) {
            Ok(g2) => some_piece_can_take(&g2, colour, then),
            Err(_) => false,
        }
    })
}

/// Per-game bookkeeping from the events alone, checked against the engine's state.
#[derive(Default)]
struct Tracker {
    /// Bonuses earned and not yet played or forfeited in the current throw.
    pending: Vec<u8>,
    /// The piece moved last in the current turn (D-7, D-16, D-21).
    last: Option<PieceId>,
    /// Colours that have brought a piece out of the nest at least once (two-out).
    exited: [bool; 4],
}

/// Plays a random game with many repeats (sixes, doubles), some timeouts and
/// abandonments, and checks after every action:
/// - R-BONUS/D-28/D-30: every bonus earned is played or reported forfeited before the
///   throw ends; a bonus is forfeited by the rules (not by the clock, a departure or the
///   end of the game) only when no piece can take it; the engine's pending list matches.
/// - R-THIRD: the penalty sends home exactly the last moved piece of the turn, of its
///   own colour, unless it is in the home column or goal (or seed 004's exception).
/// - D-23: two pieces come out only on a colour's first exit of the game, and always
///   then when the exit square holds no own piece and the nest has two.
fn tracked_game(seed: u64, rules: RuleSet) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let seated: Vec<Colour> = if rules.teams {
        Colour::ALL.to_vec()
    } else {
        let mut v = Colour::ALL.to_vec();
        v.remove(rng.gen_range(0..4));
        v
    };
    let g = Game::new(rules, &seated, seated[0]).expect("new game");
    tracked_play(g, &mut rng, 20_000);
}

/// [`tracked_game`]'s checks, from any position, for at most `actions` actions.
fn tracked_play(mut g: Game, rng: &mut ChaCha8Rng, actions: usize) {
    let rules = *g.rules();
    let mut t = Tracker::from_start(&g.to_position());
    for _ in 0..actions {
        let Some(action) = random_action(&g, rng) else {
            return;
        };
        let before = g;
        let events = g
            .play(&action)
            .unwrap_or_else(|e| panic!("{before}: {action}: {e}"));
        t.check_exits(&before, &events, &rules);
        let played = Played {
            before: &before,
            after: &g,
            action,
            by_rules: !matches!(action, Action::Timeout | Action::Abandon { .. }),
            // Only a turn with a repeat can reach R-THIRD, so only then is the last moved
            // piece kept (a hand-written position may play a repeat with doubles 0).
            repeat_turn: before.doubles_in_row() > 0,
            game_over: events.iter().any(|e| matches!(e, Event::GameWon { .. })),
            mover: mover_on(&g, before.turn()),
        };
        for e in &events {
            t.observe(&played, e);
        }
        t.check_agrees(&g);
    }
}

/// A random action for `g`: rolls with many repeats, some timeouts and abandonments,
/// else a random legal action; `None` once the game is finished.
fn random_action(g: &Game, rng: &mut ChaCha8Rng) -> Option<Action> {
    let rules = g.rules();
    Some(match g.expect() {
        Expect::Finished(_) => return None,
        Expect::Roll { .. } => {
            let repeat = rng.gen_range(0..3) == 0;
            let values: Vec<u8> = if rules.dice == 1 {
                vec![if repeat { 6 } else { rng.gen_range(1..=6) }]
            } else if repeat {
                let d = rng.gen_range(1..=6);
                vec![d, d]
            } else {
                vec![rng.gen_range(1..=6), rng.gen_range(1..=6)]
            };
            Action::Roll {
                dice: Dice::from_slice(&values).expect("dice"),
            }
        }
        Expect::Move { .. } => {
            if rng.gen_range(0..40) == 0 {
                Action::Timeout
            } else if rng.gen_range(0..600) == 0 && g.active_colours().len() > 2 {
                Action::Abandon { colour: g.turn() }
            } else {
                let legal = g.legal_actions();
                assert!(
                    !legal.is_empty(),
                    "{g}: a move stage without a legal action"
                );
                legal[rng.gen_range(0..legal.len())]
            }
        }
    })
}

/// One action played, as [`Tracker::observe`] judges its events.
struct Played<'a> {
    before: &'a Game,
    after: &'a Game,
    action: Action,
    /// Not a timeout or a departure: a bonus forfeited now is forfeited by the rules.
    by_rules: bool,
    /// The turn has had a repeat, so the last moved piece is kept (R-THIRD).
    repeat_turn: bool,
    game_over: bool,
    /// The colour whose pieces the player moves after the action.
    mover: Colour,
}

impl Tracker {
    /// The bookkeeping a game starting at `start` begins with.
    fn from_start(start: &Position) -> Tracker {
        Tracker {
            pending: match &start.stage {
                parchis_engine::StagePosition::Move { bonus, .. } => bonus.clone(),
                _ => Vec::new(),
            },
            last: start.last_moved,
            exited: std::array::from_fn(|k| {
                start
                    .players
                    .iter()
                    .find(|p| p.colour.index() == k)
                    .is_some_and(|p| p.first_five != Some(true))
            }),
        }
    }

    /// D-23: how many pieces an exit brings out of the nest.
    fn check_exits(&mut self, before: &Game, events: &[Event], rules: &RuleSet) {
        let exits = events
            .iter()
            .filter(|e| matches!(e, Event::PieceExited { .. }))
            .count();
        if exits == 0 {
            return;
        }
        let c = before.mover();
        let own_on_exit = before
            .pieces(c)
            .iter()
            .any(|l| *l == Location::Ring(c.exit_square()));
        let in_nest = before
            .pieces(c)
            .iter()
            .filter(|l| **l == Location::Nest)
            .count();
        if rules.two_out_on_first_five {
            if exits == 2 && rules.dice == 1 {
                assert!(
                    !self.exited[c.index()],
                    "{before}: two out after the first 5"
                );
            }
            // D-32: a first exit that captures plays its bonus before the second piece
            // comes out (in a later action).
            let bonus_between = rules.two_out_bonus_between_exits
                && exits == 1
                && events
                    .iter()
                    .any(|e| matches!(e, Event::BonusEarned { .. }));
            if !self.exited[c.index()]
                && !own_on_exit
                && in_nest >= 2
                && rules.dice == 1
                && !bonus_between
            {
                assert_eq!(exits, 2, "{before}: the first 5 brings two out");
            }
        } else if rules.dice == 1 {
            assert_eq!(exits, 1, "{before}: one piece per exit");
        }
        self.exited[c.index()] = true;
    }

    /// Follows one event of `p`'s action: bonuses earned, played and forfeited
    /// (R-BONUS, D-28), the last moved piece (D-7, R-THIRD), the end of the throw.
    fn observe(&mut self, p: &Played<'_>, e: &Event) {
        let before = p.before;
        match *e {
            Event::BonusEarned { amount, .. } => self.pending.push(amount),
            Event::PieceMoved {
                colour,
                piece,
                by,
                steps,
                ..
            } => {
                if by == MoveKind::Bonus {
                    let i = self.pending.iter().position(|&b| b == steps);
                    assert!(i.is_some(), "{before}: a bonus of {steps} was not pending");
                    self.pending.remove(i.unwrap_or(0));
                }
                if p.repeat_turn {
                    self.last = Some(PieceId { colour, piece });
                }
            }
            Event::PieceExited { colour, piece, .. } if p.repeat_turn => {
                self.last = Some(PieceId { colour, piece })
            }
            Event::PieceCaptured { colour, piece, .. }
                if self.last == Some(PieceId { colour, piece }) =>
            {
                self.last = None; // D-7
            }
            Event::BonusForfeited { amount, .. } => self.forfeited(p, amount),
            Event::ThirdDoublesPenalty {
                colour,
                piece,
                piece_colour,
                from,
            } if before.rules().third_repeat == parchis_engine::ThirdRepeat::LastMovedToNest => {
                let spared = before.to_position().previous_throw_unplayed
                    || self
                        .last
                        .is_none_or(|id| !matches!(before.location(id), Location::Ring(_)));
                match piece {
                    Some(i) => {
                        let id = PieceId {
                            colour: piece_colour.unwrap_or(colour),
                            piece: i,
                        };
                        assert_eq!(Some(id), self.last, "{before}: wrong piece sent home");
                        assert!(!spared, "{before}: {id} should be spared");
                        assert_eq!(from, Some(before.location(id)));
                    }
                    None => assert!(spared, "{before}: {:?} should go home", self.last),
                }
            }
            Event::RollAgain { .. } | Event::TurnPassed { .. } | Event::GameWon { .. } => {
                assert!(
                    self.pending.is_empty(),
                    "{before}: {}: the throw ended with bonuses {:?} neither played nor reported",
                    p.action,
                    self.pending
                );
                if matches!(e, Event::TurnPassed { .. }) {
                    self.last = None;
                }
            }
            _ => {}
        }
    }

    /// A bonus of `amount` forfeited: it was pending, and by the rules only when no
    /// piece can take it, in either order of the pending bonuses (R-BONUS, D-28).
    fn forfeited(&mut self, p: &Played<'_>, amount: u8) {
        let (before, g, action, mover) = (p.before, p.after, p.action, p.mover);
        let i = self.pending.iter().position(|&b| b == amount);
        assert!(i.is_some(), "{before}: forfeited {amount}, not pending");
        self.pending.remove(i.unwrap_or(0));
        if p.by_rules && !p.game_over {
            assert!(
                !some_piece_can_take(g, mover, amount),
                "{before}: {action}: a bonus of {amount} was forfeited though {mover} could take it ({g})"
            );
            // D-28: nor after another pending bonus, in the other order.
            for &other in &self.pending {
                assert!(
                    !playable_after(g, mover, other, amount),
                    "{before}: {action}: the {amount} was forfeited though it is playable after the {other} ({g})"
                );
            }
        }
    }

    /// The engine's own state agrees with the events: pending bonuses, the last moved
    /// piece, and who has their first 5 to come.
    fn check_agrees(&self, g: &Game) {
        let pos = g.to_position();
        if let parchis_engine::StagePosition::Move { bonus, .. } = &pos.stage {
            let (mut a, mut b) = (bonus.clone(), self.pending.clone());
            a.sort();
            b.sort();
            assert_eq!(a, b, "{g}: pending bonuses");
        }
        if g.doubles_in_row() > 0 && !matches!(g.expect(), Expect::Finished(_)) {
            assert_eq!(pos.last_moved, self.last, "{g}: last moved piece");
        }
        if g.rules().two_out_on_first_five {
            for p in &pos.players {
                if p.status == parchis_engine::SeatStatus::Playing {
                    assert_eq!(p.first_five, Some(!self.exited[p.colour.index()]), "{g}");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn bonuses_third_repeats_and_two_out_keep_their_invariants(seed in any::<u64>(), which in 0..RULE_SETS.len()) {
        let rules = RuleSet::from_name(RULE_SETS[which]).expect("rule set");
        tracked_game(seed, rules);
    }

    #[test]
    fn ring_squares_read_only_on_their_colours_path(k in 0usize..4, sq in 1u8..=68) {
        // rules.md §1: colour k's ring path is its exit 17k+5 .. its last square 17k (68).
        let c = Colour::ALL[k];
        let steps_from_exit = (sq as i32 - c.exit_square() as i32).rem_euclid(68);
        let on_path = steps_from_exit <= 63;
        let other = if k == 0 { "R" } else { "Y" };
        let text = format!("online {}:{sq},n,n,n {other}:n,n,n,n turn={other} roll", c.letter());
        match text.parse::<Game>() {
            Ok(g) => {
                prop_assert!(on_path, "{} accepted", text);
                prop_assert_eq!(g.location(PieceId { colour: c, piece: 0 }), Location::Ring(sq));
            }
            Err(e) => {
                prop_assert!(!on_path, "{}: {}", text, e);
                prop_assert!(e.to_string().contains("rules.md §1"));
            }
        }
    }
}

/// What a drawn position must show (chosen by the test's oracle, not the engine).
#[derive(Clone, Copy, PartialEq)]
enum Draw {
    /// Any settled position.
    Any,
    /// D-30: a die left that cannot be played while a bonus that can be played waits.
    DieLost,
    /// D-28: two bonuses, the first unplayable now but playable after the second.
    Reorder,
}

/// A random valid position of `rules` in the middle of a throw with pending bonuses:
/// pieces anywhere on their paths, dice partly used. `None` when the draw is invalid.
fn random_bonus_position(rng: &mut ChaCha8Rng, rules: &RuleSet, draw: Draw) -> Option<Game> {
    let seated: Vec<Colour> = if rules.teams {
        Colour::ALL.to_vec()
    } else {
        let mut v = Colour::ALL.to_vec();
        for _ in 0..rng.gen_range(0..3) {
            v.remove(rng.gen_range(0..v.len()));
        }
        v
    };
    // The mover has few pieces free to move and the others crowd the safe squares, so
    // that dice often cannot be played while bonuses wait (D-30).
    let turn = seated[rng.gen_range(0..seated.len())];
    let mut text = rules.name();
    for c in &seated {
        let locs: Vec<String> = (0..4)
            .map(|_| random_location(rng, *c, *c == turn))
            .collect();
        text.push_str(&format!(" {}:{}", c.letter(), locs.join(",")));
    }
    let throw = random_throw(rng, rules, draw)?;
    text.push_str(&format!(
        " turn={} move={} bonus={}",
        turn.letter(),
        throw.dice.join(","),
        throw.bonus.join(",")
    ));
    let g = text.parse::<Game>().ok()?;
    drawn_as(&g, rules, draw, &throw).then_some(g)
}

/// A location for a piece of `c`: the mover's mostly in the goal or home column, the
/// others' mostly in the nest or on safe squares.
fn random_location(rng: &mut ChaCha8Rng, c: Colour, mover: bool) -> String {
    let r = rng.gen_range(0..20);
    if mover {
        match r {
            0..=6 => "g".to_string(),
            7..=9 => format!("h{}", rng.gen_range(1..=7)),
            10 => "n".to_string(),
            _ => loc_at(c, rng.gen_range(0..=63)).to_string(),
        }
    } else {
        match r {
            0..=3 => "n".to_string(),
            4..=12 => {
                let safe: Vec<u8> = (0..=63u8)
                    .filter(|&s| matches!(loc_at(c, s), Location::Ring(q) if is_safe(q)))
                    .collect();
                loc_at(c, safe[rng.gen_range(0..safe.len())]).to_string()
            }
            _ => loc_at(c, rng.gen_range(0..=63)).to_string(),
        }
    }
}

/// The throw of a drawn position, in notation: dice (`*` when used) and pending bonuses.
struct DrawnThrow {
    dice: Vec<String>,
    bonus: Vec<&'static str>,
    /// [`Draw::DieLost`]: the value of the die left.
    unused: u8,
}

/// A random throw for `draw`; `None` when the draw is invalid.
fn random_throw(rng: &mut ChaCha8Rng, rules: &RuleSet, draw: Draw) -> Option<DrawnThrow> {
    let mut dice: Vec<String> = (0..rules.dice)
        .map(|_| {
            let d = rng.gen_range(1..=6);
            if rng.gen_range(0..3) == 0 {
                format!("{d}*")
            } else {
                d.to_string()
            }
        })
        .collect();
    let (used, unused) = (rng.gen_range(1..=6u8), rng.gen_range(1..=6u8));
    if draw == Draw::DieLost {
        if used == unused {
            return None;
        }
        dice = vec![format!("{used}*"), unused.to_string()];
    }
    let mut bonus: Vec<&str> = (0..rng.gen_range(1..=2))
        .map(|_| if rng.gen_range(0..2) == 0 { "20" } else { "10" })
        .collect();
    if draw == Draw::Reorder {
        bonus = if rng.gen_range(0..2) == 0 {
            vec!["20", "10"]
        } else {
            vec!["10", "20"]
        };
        dice = dice
            .iter()
            .map(|d| format!("{}*", d.trim_end_matches('*')))
            .collect();
    }
    Some(DrawnThrow {
        dice,
        bonus,
        unused,
    })
}

/// Whether `g` shows what `draw` asks for, judged by the test's oracle alone.
fn drawn_as(g: &Game, rules: &RuleSet, draw: Draw, throw: &DrawnThrow) -> bool {
    let c = g.mover();
    match draw {
        Draw::DieLost => {
            // D-30: the unused die cannot be played (no exit either) but some piece can
            // take the first pending bonus.
            let nest = g.pieces(c).contains(&Location::Nest);
            let amount = if throw.bonus[0] == "20" { 20 } else { 10 };
            let unused = throw.unused;
            let die_playable = some_piece_can_take(g, c, unused) || (unused == 5 && nest);
            !die_playable && some_piece_can_take(g, c, amount)
        }
        Draw::Reorder => {
            let (a, b) = if throw.bonus[0] == "20" {
                (20, 10)
            } else {
                (10, 20)
            };
            !some_piece_can_take(g, c, a) && playable_after(g, c, b, a)
        }
        Draw::Any => {
            // Only settled positions, as a game reaches them: something to play, and a
            // bonus due now is one some piece can take (else the engine would have
            // forfeited it).
            let legal = g.legal_actions();
            let all_used = !throw.dice.iter().any(|d| !d.ends_with('*'));
            let due = rules.bonus_timing == parchis_engine::BonusTiming::Immediately || all_used;
            let bonus_offered = legal.iter().any(|a| matches!(a, Action::Bonus { .. }));
            !legal.is_empty() && (bonus_offered || !due)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn pending_bonuses_are_played_or_reported_from_any_position(seed in any::<u64>(), which in 0..5usize) {
        // R-BONUS, D-28, D-30 from random mid-throw positions with pending bonuses, where
        // dice that cannot be played while bonuses wait are common.
        let name = ["parcheesi", "parcheesi-strict", "online", "classic", "pairs"][which];
        let rules = RuleSet::from_name(name).expect("rule set");
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..50 {
            if let Some(g) = random_bonus_position(&mut rng, &rules, Draw::Any) {
                tracked_play(g, &mut rng, 40);
                break;
            }
        }
        // And a position where a die is left that cannot be played while a bonus that
        // can be played waits for it (bonuses after the dice).
        // And two pending bonuses whose order matters (D-28).
        if rules.bonus_timing == parchis_engine::BonusTiming::AfterDice {
            for draw in [Draw::DieLost, Draw::Reorder] {
                let mut found = false;
                for _ in 0..5000 {
                    if let Some(g) = random_bonus_position(&mut rng, &rules, draw) {
                        tracked_play(g, &mut rng, 40);
                        found = true;
                        break;
                    }
                }
                prop_assert!(found, "no position drawn for {}", if draw == Draw::DieLost { "D-30" } else { "D-28" });
            }
        }
    }
}

#[test]
fn tracked_games_cover_every_rule_set() {
    for (i, name) in RULE_SETS.iter().enumerate() {
        let rules = RuleSet::from_name(name).expect("rule set");
        for seed in 0..4u64 {
            tracked_game(seed * 17 + i as u64, rules);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn r_third_sends_home_only_the_last_moved_piece_of_its_own_colour(
        seed in any::<u64>(),
        finished in any::<bool>(),
        last_is_partner in any::<bool>(),
        piece in 0u8..4,
    ) {
        // Pair play, third six: the piece moved last — the player's own, or the partner's
        // once the player has finished — goes home unless in the home column or goal.
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let turn = Colour::ALL[rng.gen_range(0..4)];
        let partner = Colour::ALL[(turn.index() + 2) % 4];
        let mut text = "pairs".to_string();
        for c in Colour::ALL {
            let locs: Vec<String> = (0..4)
                .map(|_| {
                    if c == turn && finished {
                        "g".to_string()
                    } else {
                        match rng.gen_range(0..6) {
                            0 => "g".to_string(),
                            1 => format!("h{}", rng.gen_range(1..=7)),
                            _ => loc_at(c, rng.gen_range(0..=63)).to_string(),
                        }
                    }
                })
                .collect();
            text.push_str(&format!(" {}:{}", c.letter(), locs.join(",")));
        }
        let owner = if finished && last_is_partner { partner } else { turn };
        text.push_str(&format!(" turn={} roll doubles=2 last={}{piece}", turn.letter(), owner.letter()));
        if finished {
            text.push_str(&format!(" places={}1", turn.letter()));
        }
        let Ok(g) = text.parse::<Game>() else { return Ok(()) }; // colours mixed off a safe square
        let id = PieceId { colour: owner, piece };
        let was = g.location(id);
        let (after, ev) = g.apply(&Action::Roll { dice: Dice::from_slice(&[6]).unwrap() }).expect("roll");
        let penalty = ev.iter().find_map(|e| match e {
            Event::ThirdDoublesPenalty { colour, piece, piece_colour, .. } => Some((*colour, *piece, *piece_colour)),
            _ => None,
        });
        let (colour, sent, piece_colour) = penalty.expect("a third six is penalised");
        // Issue 30: the event names who threw, even when the piece is the partner's.
        prop_assert_eq!(colour, turn, "{}", text);
        if matches!(was, Location::Ring(_)) {
            prop_assert_eq!(sent, Some(piece), "{}", text);
            prop_assert_eq!(piece_colour.unwrap_or(colour), owner, "{}", text);
            prop_assert_eq!(after.location(id), Location::Nest);
        } else {
            prop_assert_eq!(sent, None, "{}", text);
        }
        // No other piece moved.
        for c in Colour::ALL {
            for i in 0..4u8 {
                let other = PieceId { colour: c, piece: i };
                if other != id {
                    prop_assert_eq!(after.location(other), g.location(other), "{}", text);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn d23_the_first_five_brings_two_out_capturing_what_stands_there(
        k in 0usize..4,
        opponents in 0usize..=2,
        seed in any::<u64>(),
    ) {
        // classic+two-out: all four pieces in the nest and the first 5 of the game; the
        // exit square holds 0, 1 or 2 opponent pieces. With 0 or 1, two pieces come out at
        // once and the opponent there is captured by the second, for 20 (R-EXIT-CAPTURE,
        // seed 001 "Sobre comer" 3). With 2, the first exit captures the one that arrived
        // last and its 20 is played at once (D-32, D-4); only then does the second piece
        // come out, joining the opponent left there.
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let c = Colour::ALL[k];
        let exit = c.exit_square();
        let mut others: Vec<Colour> = Colour::ALL.iter().copied().filter(|o| *o != c).collect();
        others.remove(rng.gen_range(0..3));
        let mut text = "classic+two-out".to_string();
        for col in Colour::ALL {
            if col == c {
                text.push_str(&format!(" {}:n,n,n,n", col.letter()));
            } else if let Some(j) = others.iter().position(|o| *o == col) {
                let at = if j < opponents { exit.to_string() } else { "n".to_string() };
                text.push_str(&format!(" {}:{at},n,n,n", col.letter()));
            }
        }
        text.push_str(&format!(" turn={} move=5", c.letter()));
        let g: Game = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        let (after, ev) = g.apply(&Action::Exit).expect("exit");
        let exits = ev.iter().filter(|e| matches!(e, Event::PieceExited { .. })).count();
        let captures = ev.iter().filter(|e| matches!(e, Event::PieceCaptured { .. })).count();
        let pending = |g: &Game| match g.to_position().stage {
            parchis_engine::StagePosition::Move { bonus, .. } => bonus,
            _ => Vec::new(),
        };
        let on_exit = |g: &Game| -> Vec<PieceId> {
            occupancy(g)
                .get(&(None, Location::Ring(exit)))
                .cloned()
                .unwrap_or_default()
        };
        // The first 5 has come: recorded in both formats.
        prop_assert_eq!(after.to_position().players.iter().find(|p| p.colour == c).and_then(|p| p.first_five), Some(false));
        if opponents < 2 {
            prop_assert_eq!(exits, 2, "{}", text);
            prop_assert_eq!(captures, opponents, "{}", text);
            prop_assert_eq!(on_exit(&after).len(), 2);
            prop_assert!(on_exit(&after).iter().all(|p| p.colour == c), "{}", after);
            prop_assert_eq!(pending(&after), vec![20; opponents]);
        } else {
            prop_assert_eq!((exits, captures), (1, 1), "{}", text);
            prop_assert_eq!(pending(&after), vec![20]);
            prop_assert_eq!(after.legal_actions(), vec![Action::Bonus { piece: 0, amount: 20, capture: false }]);
            prop_assert_eq!(after.apply(&Action::Exit).unwrap_err().rule, "R-BONUS");
            let (after, _) = after.apply(&Action::Bonus { piece: 0, amount: 20, capture: false }).expect("bonus");
            prop_assert_eq!(after.legal_actions(), vec![Action::Exit]);
            let (after, ev) = after.apply(&Action::Exit).expect("second exit");
            let exits = ev.iter().filter(|e| matches!(e, Event::PieceExited { .. })).count();
            prop_assert_eq!(exits, 1, "{}", text);
            prop_assert!(!ev.iter().any(|e| matches!(e, Event::PieceCaptured { .. })), "{}", text);
            let colours: Vec<Colour> = on_exit(&after).iter().map(|p| p.colour).collect();
            prop_assert_eq!(colours.len(), 2);
            prop_assert_eq!(colours.iter().filter(|&&o| o == c).count(), 1, "{}", after);
        }
    }
}

#[test]
fn stored_logs_and_positions_of_older_versions_still_read() {
    use parchis_engine::{GameRecord, Preset};
    // A log written before timeouts reported the pending bonus they forfeit (D-31): the
    // actions are rebuilt all the same, and replay to the same game.
    let mut forfeits_on_timeout = 0;
    for seed in 0..8u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let seats = vec![Colour::Yellow, Colour::Red];
        let mut g = Game::new(RuleSet::online(), &seats, Colour::Yellow).unwrap();
        let mut events = Vec::new();
        while g.outcome().is_none() && events.len() < 3000 {
            let action = match g.expect() {
                Expect::Roll { .. } => Action::Roll {
                    dice: Dice::two(rng.gen_range(1..=6), rng.gen_range(1..=6)).unwrap(),
                },
                Expect::Move { bonus, .. } => {
                    if bonus.is_some() && rng.gen_range(0..2) == 0 {
                        Action::Timeout
                    } else {
                        let l = g.legal_actions();
                        l[rng.gen_range(0..l.len())]
                    }
                }
                Expect::Finished(_) => break,
            };
            let ev = g.play(&action).unwrap();
            let old: Vec<Event> = if action == Action::Timeout {
                forfeits_on_timeout += ev
                    .iter()
                    .filter(|e| matches!(e, Event::BonusForfeited { .. }))
                    .count();
                ev.into_iter()
                    .filter(|e| !matches!(e, Event::BonusForfeited { .. }))
                    .collect()
            } else {
                ev
            };
            events.extend(old);
        }
        let record =
            GameRecord::from_events(Preset::Online, seats.clone(), Colour::Yellow, &events);
        let (replayed, replay_events) = record.replay().expect("an older log replays");
        assert_eq!(replayed, g);
        // The server restores such a log: only the new reports differ.
        assert!(GameRecord::replay_matches(&replay_events, &events));
        let mut other = events.clone();
        other.pop();
        assert!(!GameRecord::replay_matches(&replay_events, &other));
    }
    assert!(
        forfeits_on_timeout > 0,
        "no timeout with a pending bonus was played"
    );
    // A game_started position stored before first_five, dice_lost and the coloured
    // last_moved existed, and a third_doubles_penalty event without piece_colour.
    let old = r#"{"rules":RULES,"players":[{"colour":"yellow","status":"playing","pieces":[{"at":"nest"},{"at":"nest"},{"at":"nest"},{"at":"nest"}]},{"colour":"red","status":"playing","pieces":[{"at":"nest"},{"at":"nest"},{"at":"nest"},{"at":"nest"}]}],"turn":"yellow","stage":{"kind":"roll"}}"#;
    let rules = serde_json::to_string(&RuleSet::from_name("classic+two-out").unwrap()).unwrap();
    let g = Game::from_json(&old.replace("RULES", &rules)).expect("an older position reads");
    assert_eq!(g.to_position().players[0].first_five, Some(true));
    let e: Event = serde_json::from_str(
        r#"{"type":"third_doubles_penalty","colour":"yellow","piece":0,"from":"20"}"#,
    )
    .expect("an older event reads");
    assert_eq!(
        e,
        Event::ThirdDoublesPenalty {
            colour: Colour::Yellow,
            piece: Some(0),
            from: Some(Location::Ring(20)),
            piece_colour: None
        }
    );
}

// ----- issue 30: one pending bonus goes to any piece that can move it (D-28) ------------

/// A Parcheesi position whose dice are over (two different dice, both used) with one
/// bonus of `amount` pending. Half the time a lone opponent piece stands `amount`
/// squares ahead of one of the mover's pieces on a normal square, so that taking the
/// bonus with that piece captures and earns another bonus. `None` when the drawn
/// board is not a valid position.
fn one_bonus_position(rng: &mut ChaCha8Rng, rules: &RuleSet, amount: u8) -> Option<Game> {
    let mut seated = Colour::ALL.to_vec();
    for _ in 0..rng.gen_range(0..3) {
        seated.remove(rng.gen_range(0..seated.len()));
    }
    let turn = seated[rng.gen_range(0..seated.len())];
    let mut board: Vec<(Colour, Vec<String>)> = seated
        .iter()
        .map(|&c| {
            let locs = (0..4)
                .map(|_| match rng.gen_range(0..10) {
                    0 => "n".to_string(),
                    1 => "g".to_string(),
                    2 => format!("h{}", rng.gen_range(1..=7)),
                    _ => loc_at(c, rng.gen_range(0..=63)).to_string(),
                })
                .collect();
            (c, locs)
        })
        .collect();
    if rng.gen_range(0..2) == 0 && seated.len() > 1 {
        // A capture in reach: an opponent's piece `amount` ahead of the mover's piece 0.
        let start = rng.gen_range(0..=63 - amount);
        let target = loc_at(turn, start + amount);
        let Location::Ring(sq) = target else {
            return None;
        };
        if is_safe(sq) {
            return None;
        }
        let victim = loop {
            let c = seated[rng.gen_range(0..seated.len())];
            if c != turn {
                break c;
            }
        };
        for (c, locs) in board.iter_mut() {
            if *c == turn {
                locs[0] = loc_at(turn, start).to_string();
            } else if *c == victim {
                locs[0] = target.to_string();
            }
        }
    }
    let a = rng.gen_range(1..=6u8);
    let b = (a % 6) + 1; // never doubles: no blockade is tracked in this throw
    let mut text = rules.name();
    for (c, locs) in &board {
        text.push_str(&format!(" {}:{}", c.letter(), locs.join(",")));
    }
    text.push_str(&format!(
        " turn={} move={a}*,{b}* bonus={amount}",
        turn.letter()
    ));
    text.parse::<Game>().ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn d28_one_pending_bonus_may_be_taken_by_every_piece_that_can_move_it(
        seed in any::<u64>(),
        strict in any::<bool>(),
        ten in any::<bool>(),
    ) {
        // Issue 30, both Parcheesi presets: with the dice over and one bonus pending there
        // is no order of pending bonuses to choose (D-28), so the legal actions are exactly
        // that bonus by every piece the test's own oracle lets move that many squares —
        // a move that captures (and earns another bonus) is not preferred.
        let rules = RuleSet::from_name(if strict { "parcheesi-strict" } else { "parcheesi" })
            .expect("rule set");
        let amount = if ten { 10 } else { 20 };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut checked = 0;
        for _ in 0..400 {
            let Some(g) = one_bonus_position(&mut rng, &rules, amount) else {
                continue;
            };
            let c = g.mover();
            let can: Vec<u8> = (0..4u8)
                .filter(|&piece| bonus_landing(&g, PieceId { colour: c, piece }, amount).is_some())
                .collect();
            let mut offered = Vec::new();
            for a in g.legal_actions() {
                match a {
                    Action::Bonus { piece, amount: n, capture: false } if n == amount => {
                        offered.push(piece)
                    }
                    other => prop_assert!(false, "{g}: unexpected legal action {other}"),
                }
            }
            offered.sort_unstable();
            prop_assert_eq!(&offered, &can, "{}", g);
            checked += 1;
            if checked == 20 {
                break;
            }
        }
        prop_assert!(checked > 0, "no position drawn");
    }
}

#[test]
fn d28_the_one_bonus_property_draws_captures_that_earn_another_bonus() {
    // The property above covers the case of issue 30: some drawn positions offer a bonus
    // move that captures, next to others that do not.
    let rules = RuleSet::from_name("parcheesi").expect("rule set");
    let mut rng = ChaCha8Rng::seed_from_u64(30);
    let mut mixed = 0;
    for _ in 0..2000 {
        let Some(g) = one_bonus_position(&mut rng, &rules, 20) else {
            continue;
        };
        let mut capturing = 0;
        let legal = g.legal_actions();
        for a in &legal {
            let (_, ev) = g.apply(a).expect("legal action applies");
            if ev.iter().any(|e| matches!(e, Event::PieceCaptured { .. })) {
                capturing += 1;
            }
        }
        if capturing > 0 && capturing < legal.len() {
            mixed += 1;
        }
    }
    assert!(
        mixed >= 10,
        "only {mixed} positions mix capturing and other bonus moves"
    );
}
