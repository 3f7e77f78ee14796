//! Unit tests on concrete positions (text notation, proto/NOTATION.md).

use super::*;
use parchis_engine::{Colour, Game, Location, PieceId, RuleSet};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::time::Duration;

fn pos(s: &str) -> Game {
    match s.parse() {
        Ok(g) => g,
        Err(e) => panic!("bad test position {s:?}: {e}"),
    }
}

fn act(s: &str) -> Action {
    match s.parse() {
        Ok(a) => a,
        Err(e) => panic!("bad test action {s:?}: {e:?}"),
    }
}

fn strong() -> ExpectimaxBot {
    // A generous budget so the test does not depend on the machine's speed.
    ExpectimaxBot::new(ExpectimaxConfig {
        budget: Duration::from_secs(60),
        max_leaves: 10,
    })
}

fn all_levels() -> Vec<Box<dyn Bot + Send>> {
    vec![
        Box::new(GreedyBot::new(7)),
        Box::new(strong()),
        // The random bot has no reason to capture; it is not asserted here.
    ]
}

#[test]
fn level_names_round_trip_through_fromstr_display_and_serde() {
    for level in BotLevel::ALL {
        let text = level.to_string();
        assert_eq!(text.parse::<BotLevel>(), Ok(level));
        let json = serde_json::to_string(&level).unwrap();
        assert_eq!(json, format!("\"{text}\""));
        assert_eq!(serde_json::from_str::<BotLevel>(&json).unwrap(), level);
    }
    assert_eq!("Expectimax".parse::<BotLevel>(), Ok(BotLevel::Expectimax));
    assert_eq!(
        "minimax".parse::<BotLevel>(),
        Err(UnknownLevel("minimax".into()))
    );
    assert_eq!(
        serde_json::to_string(&BotLevel::Greedy).unwrap(),
        "\"greedy\""
    );
}

#[test]
fn random_bot_only_plays_legal_actions_and_covers_all_of_them() {
    let game = pos("online Y:10,20,30,n R:n,n,n,n turn=Y move=3,4");
    let legal = game.legal_actions();
    assert_eq!(legal.len(), 6);
    let mut bot = RandomBot::new(3);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..200 {
        let a = bot.choose(&game, &legal);
        assert!(legal.contains(&a), "{a} is not legal");
        seen.insert(a);
    }
    assert_eq!(seen.len(), legal.len());
}

#[test]
fn bots_return_timeout_when_there_is_nothing_to_choose() {
    let game = pos("online Y:n,n,n,n R:n,n,n,n turn=Y roll");
    assert_eq!(RandomBot::new(1).choose(&game, &[]), Action::Timeout);
    assert_eq!(GreedyBot::new(1).choose(&game, &[]), Action::Timeout);
    assert_eq!(strong().choose(&game, &[]), Action::Timeout);
}

#[test]
fn greedy_and_expectimax_capture_when_they_can() {
    // Red on 27 with a 3 reaches yellow's lone piece on 30 (not safe): capture.
    let game = pos("online Y:30,n,n,n R:27,50,n,n turn=R move=3,6");
    let legal = game.legal_actions();
    assert!(legal.contains(&act("move 1 3")), "{legal:?}");
    for mut bot in all_levels() {
        assert_eq!(bot.choose(&game, &legal), act("move 0 3"));
    }
}

#[test]
fn greedy_captures_with_the_sum_of_both_dice() {
    // Yellow 9 + 3 + 4 = 16 (not safe), where red stands alone: the capture needs both
    // dice on piece 0 (either order).
    let game = pos("online Y:9,40,n,n R:16,n,n,n turn=Y move=3,4");
    let mut bot = GreedyBot::new(1);
    let mut g = game;
    for _ in 0..2 {
        let legal = g.legal_actions();
        let a = bot.choose(&g, &legal);
        let (next, _) = g.apply(&a).unwrap();
        g = next;
    }
    // After two greedy moves red's piece is back in the nest.
    assert_eq!(g.pieces(Colour::Red)[0], Location::Nest);
}

#[test]
fn greedy_prefers_a_safe_square_to_standing_in_front_of_an_opponent() {
    // Red on 24 threatens yellow's 25 and 26. With a 4 left, yellow can take piece 0 to
    // the safe square 29, or piece 1 to 30, still 6 in front of red.
    let game = pos("online Y:25,26,n,n R:24,n,n,n turn=Y move=4,1*");
    let legal = game.legal_actions();
    assert_eq!(legal, vec![act("move 0 4"), act("move 1 4")]);
    let mut bot = GreedyBot::new(1);
    let scores = bot.scores(&game, &legal);
    let (safe, exposed) = (0, 1);
    assert!(
        scores[safe] > scores[exposed],
        "safe {} vs exposed {}",
        scores[safe],
        scores[exposed]
    );
    assert_eq!(bot.choose(&game, &legal), act("move 0 4"));
    assert_eq!(strong().choose(&game, &legal), act("move 0 4"));
}

#[test]
fn greedy_moves_a_threatened_piece_out_of_reach() {
    // Yellow piece 0 on 30 is 2 squares in front of red's 28; piece 1 on 60 is in no
    // danger. With a 6 (single die left), running piece 0 to 36 (8 ahead: only sums
    // reach it) beats moving the safe piece.
    let game = pos("online Y:30,60,n,n R:28,n,n,n turn=Y move=6,2*");
    let legal = game.legal_actions();
    assert_eq!(legal.len(), 2, "{legal:?}");
    assert_eq!(GreedyBot::new(1).choose(&game, &legal), act("move 0 6"));
}

#[test]
fn greedy_forms_a_blockade_on_an_unsafe_square() {
    // Yellow piece 1 on 40 can join piece 0 on 44 with the 4 (a blockade) or another
    // piece can take the 4. (Red's piece is in its home column: this position used to
    // write it as ring square 38, which is not on red's path, rules.md §1, and was read
    // as h4.)
    let game = pos("online Y:44,40,n,n R:h4,n,n,n turn=Y move=4,1*");
    let legal = game.legal_actions();
    assert!(legal.contains(&act("move 1 4")), "{legal:?}");
    let bot = GreedyBot::new(1);
    let scores = bot.scores(&game, &legal);
    let block = legal.iter().position(|a| *a == act("move 1 4")).unwrap();
    for (i, s) in scores.iter().enumerate() {
        if i != block {
            assert!(
                scores[block] > *s,
                "{:?} scores {s} >= blockade {}",
                legal[i],
                scores[block]
            );
        }
    }
}

#[test]
fn greedy_takes_the_piece_into_the_goal() {
    // Yellow h4 + 4 = goal (h8); the alternative moves a ring piece 4 squares.
    let game = pos("online Y:h4,20,n,n R:n,n,n,n turn=Y move=4,1*");
    let legal = game.legal_actions();
    assert!(legal.len() >= 2, "{legal:?}");
    let a = GreedyBot::new(1).choose(&game, &legal);
    let (next, _) = game.apply(&a).unwrap();
    assert_eq!(
        next.location(PieceId {
            colour: Colour::Yellow,
            piece: 0
        }),
        Location::Goal
    );
}

#[test]
fn expectimax_only_plays_legal_actions_in_a_whole_game() {
    let game = Game::new(
        RuleSet::online(),
        &[Colour::Yellow, Colour::Blue, Colour::Red, Colour::Green],
        Colour::Yellow,
    )
    .unwrap();
    let mut seats: Vec<Box<dyn Bot + Send>> = vec![
        Box::new(ExpectimaxBot::new(ExpectimaxConfig {
            budget: Duration::from_secs(60),
            max_leaves: 3,
        })),
        Box::new(GreedyBot::new(2)),
        Box::new(RandomBot::new(3)),
        Box::new(RandomBot::new(4)),
    ];
    let mut rng = StdRng::seed_from_u64(11);
    let (outcome, n) = play_game(game, &mut |c| c.index(), &mut seats, &mut rng, 20_000);
    assert!(outcome.is_some(), "game did not finish in {n} actions");
    assert!(n > 100, "a whole game takes more than {n} actions");
}

#[test]
fn play_game_is_reproducible_for_a_seed() {
    let new = || {
        Game::new(
            RuleSet::online(),
            &[Colour::Yellow, Colour::Red],
            Colour::Red,
        )
        .unwrap()
    };
    let run = || {
        let mut seats: Vec<Box<dyn Bot + Send>> =
            vec![Box::new(GreedyBot::new(5)), Box::new(RandomBot::new(6))];
        let mut rng = StdRng::seed_from_u64(99);
        play_game(
            new(),
            &mut |c| usize::from(c == Colour::Red),
            &mut seats,
            &mut rng,
            20_000,
        )
    };
    let (a, na) = run();
    let (b, nb) = run();
    assert!(a.is_some());
    assert_eq!(a, b);
    assert_eq!(na, nb);
}
