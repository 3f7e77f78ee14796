//! The other presets (reference §3 matrix): one named test for every row where a preset
//! differs from `online`, with concrete positions and exact legal-action sets. Seeds:
//! 001 `classic`, 004 `pairs`, 002 `parcheesi`, 003 `parcheesi-strict`.

use parchis_engine::{
    Action, BonusReason, Colour, Dice, ErrorKind, Event, Game, Location, Preset, SeatStatus,
    WinReason,
};

mod common;

use common::{act, game, legal, refuse};

const Y: Colour = Colour::Yellow;
const B: Colour = Colour::Blue;
const R: Colour = Colour::Red;
const G: Colour = Colour::Green;

// ===== classic (seed 001) ====================================================================

#[test]
fn classic_dice_one_die_per_throw() {
    let g = game("classic Y:n,n,n,n R:n,n,n,n turn=Y roll");
    let e = refuse(&g, "roll 3,4");
    assert_eq!((e.kind, e.rule), (ErrorKind::BadDice, "R-ROLL"));
    assert!(g
        .apply(&Action::Roll {
            dice: Dice::from_slice(&[3]).unwrap()
        })
        .is_ok());
}

#[test]
fn classic_turn_passes_to_the_right_yellow_blue_red() {
    let mut g = game("classic Y:n,n,n,n B:n,n,n,n R:n,n,n,n turn=Y roll");
    let mut order = vec![g.turn()];
    for _ in 0..3 {
        g = act(&g, "roll 3").0;
        order.push(g.turn());
    }
    assert_eq!(order, vec![Y, B, R, Y]);
}

#[test]
fn classic_first_player_is_the_highest_roll() {
    let r = Preset::Classic.rules();
    assert_eq!(r.first_by_roll(&[(Y, 3), (B, 6), (R, 2)]), Some(B));
    assert_eq!(
        r.first_by_roll(&[(Y, 6), (B, 6), (R, 2)]),
        None,
        "a tie rolls again"
    );
    assert_eq!(
        Preset::Online.rules().first_by_roll(&[(Y, 3)]),
        None,
        "the creator starts"
    );
}

#[test]
fn classic_roll_again_on_a_six() {
    let g = game("classic Y:10,n,n,n R:n,n,n,n turn=Y roll");
    let (g, _) = act(&g, "roll 6");
    let (g, ev) = act(&g, "move 0 6"); // a nest piece remains: the six counts six
    assert_eq!(ev.last(), Some(&Event::RollAgain { colour: Y }));
    assert_eq!(
        g.to_string(),
        "classic Y:16,n,n,n R:n,n,n,n turn=Y roll doubles=1 last=0"
    );
}

#[test]
fn classic_third_six_sends_the_last_moved_piece_home() {
    let g = game("classic Y:10,20,n,n R:n,n,n,n turn=Y roll doubles=2 last=1");
    let (g, ev) = act(&g, "roll 6");
    assert!(ev.contains(&Event::ThirdDoublesPenalty {
        colour: Y,
        piece: Some(1),
        from: Some(Location::Ring(20))
    }));
    assert_eq!(g.to_string(), "classic Y:10,n,n,n R:n,n,n,n turn=R roll");
}

#[test]
fn classic_six_counts_seven_with_an_empty_nest_and_twelve_in_murcia() {
    let g = game("classic Y:10,20,h1,g R:n,n,n,n turn=Y move=6");
    // 10+7, 20+7, h1+7 = goal exactly.
    assert_eq!(legal(&g), vec!["move 0 6", "move 1 6", "move 2 6"]);
    let (g7, ev) = act(&g, "move 0 6");
    assert_eq!(g7.pieces(Y)[0], Location::Ring(17));
    assert!(matches!(
        ev[0],
        Event::PieceMoved {
            steps: 7,
            die: Some(6),
            ..
        }
    ));
    let g = game("classic Y:10,n,n,n R:n,n,n,n turn=Y move=6");
    assert_eq!(
        act(&g, "move 0 6").0.pieces(Y)[0],
        Location::Ring(16),
        "a nest piece: six is six"
    );
    let g = game("classic+murcia-12 Y:10,20,30,g R:n,n,n,n turn=Y move=6");
    assert_eq!(act(&g, "move 0 6").0.pieces(Y)[0], Location::Ring(22));
}

#[test]
fn classic_exit_with_a_five_on_the_die_only() {
    let g = game("classic Y:n,n,n,n R:n,n,n,n turn=Y roll");
    let (g5, _) = act(&g, "roll 5");
    assert_eq!(legal(&g5), vec!["exit"]);
    // With two own pieces on the exit square, the 5 moves another piece (seed 001).
    let g = game("classic Y:5,5',n,n R:n,n,n,n turn=Y move=5");
    assert_eq!(legal(&g), vec!["move 0 5", "move 1 5"]);
}

#[test]
fn classic_exit_capture_when_the_exit_holds_an_opponent_and_another_piece() {
    let g = game("classic Y:5,n,n,n R:5',n,n,n turn=Y move=5");
    let (g, ev) = act(&g, "exit");
    assert!(ev.contains(&Event::PieceCaptured {
        colour: R,
        piece: 0,
        square: 5,
        by: Y
    }));
    assert!(ev.contains(&Event::BonusEarned {
        colour: Y,
        amount: 20,
        reason: BonusReason::Capture
    }));
    assert_eq!(legal(&g), vec!["bonus 0 20", "bonus 1 20"]);
    // A lone opponent on the exit square is joined (two colours may share it).
    let g = game("classic Y:n,n,n,n R:5,n,n,n turn=Y move=5");
    let (g, ev) = act(&g, "exit");
    assert!(!ev.iter().any(|e| matches!(e, Event::PieceCaptured { .. })));
    assert_eq!(g.to_string(), "classic Y:5',n,n,n R:5,n,n,n turn=R roll");
}

#[test]
fn classic_blockades_are_two_of_one_colour_mixed_pairs_can_be_passed() {
    // Red and blue share safe square 12: not a blockade in classic, but full.
    let g = game("classic Y:10,n,n,n B:12',n,n,n R:12,n,n,n turn=Y move=4");
    assert_eq!(legal(&g), vec!["move 0 4"]);
    let g2 = game("classic Y:10,n,n,n B:12',n,n,n R:12,n,n,n turn=Y move=2");
    assert_eq!(refuse(&g2, "move 0 2").rule, "R-BLOCK");
    // Variant: mixed blockades on safe squares.
    let g = game("classic+mixed-safe Y:10,n,n,n B:12',n,n,n R:12,n,n,n turn=Y move=4");
    assert_eq!(refuse(&g, "move 0 4").rule, "R-BLOCK");
    // Variant: blockades only on safe squares — two yellows on 10 can be passed.
    let g = game("classic+safe-only Y:10,10',8,n R:n,n,n,n turn=Y move=3");
    assert_eq!(legal(&g), vec!["move 0 3", "move 1 3", "move 2 3"]);
}

#[test]
fn classic_a_six_forces_the_blockade_open_unless_its_pieces_cannot_move() {
    let g = game("classic Y:10,10',30,g R:n,n,n,n turn=Y roll");
    let (g, _) = act(&g, "roll 6");
    assert_eq!(legal(&g), vec!["move 0 6", "move 1 6"]);
    assert_eq!(refuse(&g, "move 2 6").rule, "R-OPEN");
    // Red's blockade on 17 stops both (10 + 7 = 17): piece 2 may move.
    let g = game("classic Y:10,10',30,g R:17,17',n,n turn=Y roll");
    let (g, _) = act(&g, "roll 6");
    assert_eq!(legal(&g), vec!["move 2 6"]);
}

#[test]
fn classic_goal_needs_the_exact_count_without_bounce() {
    let g = game("classic Y:h5,30,n,n R:n,n,n,n turn=Y move=4");
    assert_eq!(legal(&g), vec!["move 1 4"]);
    assert_eq!(refuse(&g, "move 0 4").rule, "R-GOAL");
}

#[test]
fn classic_plays_on_for_second_and_third_places() {
    let g = game("classic Y:g,g,g,h7 B:n,n,n,n R:10,n,n,n turn=Y move=1");
    let (g, ev) = act(&g, "move 3 1");
    assert!(ev.contains(&Event::PlayerFinished {
        colour: Y,
        place: 1
    }));
    assert!(ev.contains(&Event::TurnPassed { from: Y, to: B }));
    assert_eq!(g.seat(Y), SeatStatus::Finished);
    assert_eq!(g.outcome(), None);
    assert_eq!(
        g.to_string(),
        "classic Y:g,g,g,g B:n,n,n,n R:10,n,n,n turn=B roll places=Y1"
    );
    // Two players: the other one is last and the game ends.
    let g = game("classic Y:g,g,g,h7 R:10,n,n,n turn=Y move=1");
    let (g, ev) = act(&g, "move 3 1");
    assert_eq!(
        ev.last(),
        Some(&Event::GameWon {
            winner: Y,
            reason: WinReason::Goal,
            partner: None
        })
    );
    assert_eq!((g.place(Y), g.place(R)), (Some(1), Some(2)));
}

#[test]
fn classic_variants_one_out_two_out_and_murcia_exact() {
    let g = Game::new(
        parchis_engine::RuleSet::from_name("classic+one-out").unwrap(),
        &[Y, R],
        Y,
    )
    .unwrap();
    assert_eq!(
        g.to_string(),
        "classic+one-out Y:5,n,n,n R:39,n,n,n turn=Y roll"
    );
    let g = game("classic+two-out Y:n,n,n,n R:n,n,n,n turn=Y move=5");
    let (g, _) = act(&g, "exit");
    assert_eq!(
        g.to_string(),
        "classic+two-out Y:5,5',n,n R:n,n,n,n turn=R roll"
    );
    // Murcia: a piece must stop exactly on its last safe square (68 for yellow).
    let g = game("classic+murcia-exact Y:64,n,n,n R:n,n,n,n turn=Y move=6");
    assert_eq!(refuse(&g, "move 0 6").rule, "R-GOAL");
    let g = game("classic+murcia-exact Y:64,n,n,n R:n,n,n,n turn=Y move=4");
    assert_eq!(act(&g, "move 0 4").0.pieces(Y)[0], Location::Ring(68));
}

#[test]
fn classic_bonus_may_be_taken_by_any_piece_out_of_nest_and_goal() {
    // Online refuses a home-column piece as a bonus taker (R-BONUS); classic only
    // needs the count to fit (here it overshoots the goal: R-GOAL).
    let g = game("classic Y:10,h6,n,n R:13,n,n,n turn=Y move=3");
    let (g, _) = act(&g, "move 0 3");
    assert_eq!(legal(&g), vec!["bonus 0 20"]);
    assert_eq!(refuse(&g, "bonus 1 20").rule, "R-GOAL");
}

// ===== pairs (seed 004) ======================================================================

const PAIRS_EMPTY: &str = "B:n,n,n,n G:n,n,n,n";

#[test]
fn pairs_needs_four_players_in_two_teams() {
    let r = Preset::Pairs.rules();
    assert!(Game::new(r, &[Y, R], Y).is_err());
    assert!(Game::new(r, &Colour::ALL, Y).is_ok());
}

#[test]
fn pairs_partner_pieces_form_a_blockade_on_any_square() {
    let g = game(&format!(
        "pairs Y:13,10,n,n R:13',n,n,n {PAIRS_EMPTY} turn=Y move=4"
    ));
    assert_eq!(legal(&g), vec!["move 0 4"]);
    assert_eq!(refuse(&g, "move 1 4").rule, "R-BLOCK");
}

#[test]
fn pairs_landing_on_a_lone_partner_piece_is_a_choice() {
    let g = game(&format!(
        "pairs Y:10,n,n,n R:13,n,n,n {PAIRS_EMPTY} turn=Y move=3"
    ));
    assert_eq!(legal(&g), vec!["move 0 3", "move 0 3 capture"]);
    let (joined, ev) = act(&g, "move 0 3");
    assert!(!ev.iter().any(|e| matches!(e, Event::PieceCaptured { .. })));
    assert_eq!(joined.pieces(R)[0], Location::Ring(13));
    let (captured, ev) = act(&g, "move 0 3 capture");
    assert!(ev.contains(&Event::PieceCaptured {
        colour: R,
        piece: 0,
        square: 13,
        by: Y
    }));
    assert_eq!(captured.pieces(R)[0], Location::Nest);
    assert_eq!(legal(&captured), vec!["bonus 0 20"]);
}

#[test]
fn pairs_exit_captures_the_opponent_team_first_and_without_bonus_when_both_are_others() {
    // Red (partner) arrived last, yet blue (opponent) is captured; no +20.
    let g = game("pairs Y:n,n,n,n B:5,n,n,n R:5',n,n,n G:n,n,n,n turn=Y move=5");
    let (g, ev) = act(&g, "exit");
    assert!(ev.contains(&Event::PieceCaptured {
        colour: B,
        piece: 0,
        square: 5,
        by: Y
    }));
    assert!(!ev.iter().any(|e| matches!(e, Event::BonusEarned { .. })));
    assert_eq!(g.pieces(R)[0], Location::Ring(5));
}

#[test]
fn pairs_no_goal_bonus_for_a_players_last_piece_and_the_partner_is_moved_next() {
    let g = game(&format!(
        "pairs Y:g,g,g,h7 R:10,n,n,n {PAIRS_EMPTY} turn=Y move=1"
    ));
    let (g, ev) = act(&g, "move 3 1");
    assert!(ev.contains(&Event::PlayerFinished {
        colour: Y,
        place: 1
    }));
    assert_eq!((g.place(Y), g.seat(Y)), (Some(1), SeatStatus::Playing));
    assert!(!ev.iter().any(|e| matches!(e, Event::BonusEarned { .. })));
    // Yellow's next turn moves red's pieces (seed 004).
    let g = game(&format!(
        "pairs Y:g,g,g,g R:10,n,n,n {PAIRS_EMPTY} turn=Y roll places=Y1"
    ));
    let (g, _) = act(&g, "roll 3");
    assert_eq!(g.mover(), R);
    assert_eq!(legal(&g), vec!["move 0 3"]);
    assert_eq!(act(&g, "move 0 3").0.pieces(R)[0], Location::Ring(13));
}

#[test]
fn pairs_the_first_team_home_wins() {
    let g = game(&format!(
        "pairs Y:g,g,g,g R:g,g,g,h7 {PAIRS_EMPTY} turn=Y move=1 places=Y1"
    ));
    let (g, ev) = act(&g, "move 3 1");
    assert_eq!(
        ev.last(),
        Some(&Event::GameWon {
            winner: Y,
            reason: WinReason::Goal,
            partner: Some(R)
        })
    );
    assert!(g.outcome().is_some());
}

#[test]
fn pairs_third_six_spares_the_piece_when_the_second_six_was_not_played() {
    let g = game(&format!(
        "pairs Y:20,n,n,n R:n,n,n,n {PAIRS_EMPTY} turn=Y roll doubles=2 last=0 unplayed=1"
    ));
    let (_, ev) = act(&g, "roll 6");
    assert!(ev.contains(&Event::ThirdDoublesPenalty {
        colour: Y,
        piece: None,
        from: None
    }));
    let g = game(&format!(
        "pairs Y:20,n,n,n R:n,n,n,n {PAIRS_EMPTY} turn=Y roll doubles=2 last=0"
    ));
    let (_, ev) = act(&g, "roll 6");
    assert!(ev.contains(&Event::ThirdDoublesPenalty {
        colour: Y,
        piece: Some(0),
        from: Some(Location::Ring(20))
    }));
}

// ===== parcheesi (seed 002) ==================================================================

#[test]
fn parcheesi_doubles_bonus_fourteen_in_four_parts() {
    let g = game("parcheesi Y:10,20,30,40 R:n,n,n,n turn=Y roll");
    let (g, _) = act(&g, "roll 6,6");
    assert_eq!(
        g.to_string(),
        "parcheesi Y:10,20,30,40 R:n,n,n,n turn=Y move=6,6 parts=6,6,1,1 doubles=1"
    );
    let l = legal(&g);
    assert!(
        l.contains(&"move 0 6".to_string()) && l.contains(&"move 0 1".to_string()),
        "{l:?}"
    );
    // Not before every piece has entered.
    let g = game("parcheesi Y:10,20,30,n R:n,n,n,n turn=Y roll");
    assert_eq!(
        act(&g, "roll 6,6").0.to_string(),
        "parcheesi Y:10,20,30,n R:n,n,n,n turn=Y move=6,6 doubles=1"
    );
}

#[test]
fn parcheesi_doubles_bonus_is_all_or_nothing_and_rolls_again_either_way() {
    // 1,1 with parts 1,1,6,6: the sixes cannot be played, so nothing is played.
    let g = game("parcheesi Y:g,g,g,h5 R:n,n,n,n turn=Y roll");
    let (g, ev) = act(&g, "roll 1,1");
    assert!(ev.iter().any(|e| matches!(e, Event::NoLegalMove { .. })));
    assert_eq!(ev.last(), Some(&Event::RollAgain { colour: Y }));
    assert_eq!(g.pieces(Y)[3], Location::HomeColumn(5));
}

#[test]
fn parcheesi_bonuses_come_after_the_dice() {
    let g = game("parcheesi Y:10,20,n,n R:13,n,n,n turn=Y move=3,4");
    let (g, ev) = act(&g, "move 0 3");
    assert!(ev.contains(&Event::BonusEarned {
        colour: Y,
        amount: 20,
        reason: BonusReason::Capture
    }));
    assert_eq!(legal(&g), vec!["move 0 4", "move 1 4"]);
    assert_eq!(refuse(&g, "bonus 0 20").rule, "D-4");
    let (g, _) = act(&g, "move 1 4");
    assert_eq!(legal(&g), vec!["bonus 0 20", "bonus 1 20"]);
}

#[test]
fn parcheesi_two_colours_never_share_a_safe_square() {
    let g = game("parcheesi Y:10,n,n,n R:12,n,n,n turn=Y move=2,6");
    assert_eq!(refuse(&g, "move 0 2").rule, "R-SAFE");
    assert_eq!(legal(&g), vec!["move 0 6"]);
}

#[test]
fn parcheesi_a_blockade_never_moves_on_together() {
    let g = game("parcheesi Y:10,10',40,n R:n,n,n,n turn=Y roll");
    let (g, _) = act(&g, "roll 3,3");
    assert_eq!(legal(&g), vec!["move 0 3", "move 1 3", "move 2 3"]);
    let (g, _) = act(&g, "move 0 3");
    assert_eq!(legal(&g), vec!["move 0 3", "move 2 3"]);
    assert_eq!(refuse(&g, "move 1 3").rule, "R-BLOCK");
}

#[test]
fn parcheesi_entry_captures_a_lone_opponent_and_a_blockade_bars_entry() {
    let g = game("parcheesi Y:n,n,n,n R:5,n,n,n turn=Y roll");
    let (g, _) = act(&g, "roll 5,1");
    let (g, ev) = act(&g, "exit");
    assert!(ev.contains(&Event::PieceCaptured {
        colour: R,
        piece: 0,
        square: 5,
        by: Y
    }));
    assert_eq!(legal(&g), vec!["move 0 1"], "the bonus waits for the dice");
    let g = game("parcheesi Y:5,5',n,n R:n,n,n,n turn=Y move=5,1");
    assert_eq!(refuse(&g, "exit").rule, "R-EXIT-2");
}

#[test]
fn parcheesi_third_doubles_sends_the_most_advanced_piece_home_even_from_the_home_column() {
    let g = game("parcheesi Y:20,h3,n,n R:n,n,n,n turn=Y roll doubles=2");
    let (g, ev) = act(&g, "roll 2,2");
    assert!(ev.contains(&Event::ThirdDoublesPenalty {
        colour: Y,
        piece: Some(1),
        from: Some(Location::HomeColumn(3))
    }));
    assert_eq!(g.to_string(), "parcheesi Y:20,n,n,n R:n,n,n,n turn=R roll");
}

// ===== parcheesi-strict (seed 003) ===========================================================

#[test]
fn parcheesi_strict_only_one_die_playable_must_be_the_larger() {
    let g = game("parcheesi-strict Y:60,n,n,n R:67,67',n,n turn=Y move=3,4");
    assert_eq!(legal(&g), vec!["move 0 4"]);
    let e = refuse(&g, "move 0 3");
    assert_eq!(e.rule, "D-2");
}

#[test]
fn parcheesi_strict_doubles_bonus_as_many_parts_as_possible_then_no_reroll() {
    let g = game("parcheesi-strict Y:g,g,g,h5 R:n,n,n,n turn=Y roll");
    let (g, _) = act(&g, "roll 1,1");
    assert_eq!(legal(&g), vec!["move 3 1"]);
    let (g, _) = act(&g, "move 3 1");
    let (g, ev) = act(&g, "move 3 1");
    assert!(ev.contains(&Event::TurnPassed { from: Y, to: R }), "{ev:?}");
    assert_eq!(g.pieces(Y)[3], Location::HomeColumn(7));
}

#[test]
fn parcheesi_strict_has_no_third_doubles_penalty() {
    let g = game("parcheesi-strict Y:20,n,n,n R:n,n,n,n turn=Y roll doubles=2");
    let (g, ev) = act(&g, "roll 2,2");
    assert!(!ev
        .iter()
        .any(|e| matches!(e, Event::ThirdDoublesPenalty { .. })));
    assert_eq!(legal(&g), vec!["move 0 2"]);
}

#[test]
fn parcheesi_strict_first_player_is_the_lowest_roll() {
    let r = Preset::ParcheesiStrict.rules();
    assert_eq!(r.first_by_roll(&[(Y, 9), (G, 4), (R, 7)]), Some(G));
}

#[test]
fn game_records_keep_the_variants_and_the_partner_capture_choice() {
    use parchis_engine::{GameRecord, RuleSet};
    use rand::{Rng, SeedableRng};
    let rules = RuleSet::from_name("pairs+murcia-12").unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let mut g = Game::new(rules, &Colour::ALL, Y).unwrap();
    let mut events = Vec::new();
    let mut partner_captures = 0;
    while g.outcome().is_none() {
        let action = if g.legal_actions().is_empty() {
            Action::Roll {
                dice: Dice::from_slice(&[rng.gen_range(1..=6)]).unwrap(),
            }
        } else {
            let legal = g.legal_actions();
            // Prefer capturing a partner when offered, to exercise the choice.
            match legal.iter().find(|a| {
                matches!(
                    a,
                    Action::Move { capture: true, .. } | Action::Bonus { capture: true, .. }
                )
            }) {
                Some(a) => {
                    partner_captures += 1;
                    *a
                }
                None => legal[rng.gen_range(0..legal.len())],
            }
        };
        events.extend(g.play(&action).unwrap());
    }
    assert!(partner_captures > 0);
    let record = GameRecord::from_events(rules, Colour::ALL.to_vec(), Y, &events);
    let text = record.to_string();
    assert!(text.starts_with("[Preset \"pairs+murcia-12\"]"), "{text}");
    assert!(text.contains(" capture"), "the choice is in the export");
    let back: GameRecord = text.parse().unwrap();
    let (replayed, replay_events) = back.replay().unwrap();
    assert_eq!((replayed, replay_events), (g, events));
}
