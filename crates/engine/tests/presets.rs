//! The other presets (reference §3 matrix): one named test for every row where a preset
//! differs from `online`, with concrete positions and exact legal-action sets. Seeds:
//! 001 `classic`, 004 `pairs`, 002 `parcheesi`, 003 `parcheesi-strict`.
//!
//! Why one long file: it is a list of one independent test per matrix row and preset, sharing the helpers at its top;
//! one test binary also keeps the build short.

use parchis_engine::{
    Action, BonusReason, Colour, Dice, ErrorKind, Event, Game, GameRecord, Location, Preset,
    SeatStatus, WinReason,
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
        "classic Y:16,n,n,n R:n,n,n,n turn=Y roll doubles=1 last=Y0"
    );
}

#[test]
fn classic_third_six_sends_the_last_moved_piece_home() {
    let g = game("classic Y:10,20,n,n R:n,n,n,n turn=Y roll doubles=2 last=1");
    let (g, ev) = act(&g, "roll 6");
    assert!(ev.contains(&Event::ThirdDoublesPenalty {
        colour: Y,
        piece: Some(1),
        from: Some(Location::Ring(20)),
        piece_colour: None,
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
    // Variant safe-only (D-29): see the d29_* tests in rules.rs.
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
        from: None,
        piece_colour: None,
    }));
    let g = game(&format!(
        "pairs Y:20,n,n,n R:n,n,n,n {PAIRS_EMPTY} turn=Y roll doubles=2 last=0"
    ));
    let (_, ev) = act(&g, "roll 6");
    assert!(ev.contains(&Event::ThirdDoublesPenalty {
        colour: Y,
        piece: Some(0),
        from: Some(Location::Ring(20)),
        piece_colour: None,
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
        from: Some(Location::HomeColumn(3)),
        piece_colour: None,
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
    // D-33: new games refuse a variant on `pairs`, but a game stored before that check
    // keeps its rule set: its record still exports, reads back and replays.
    assert!(RuleSet::from_name("pairs+murcia-12").is_err());
    let rules = RuleSet::from_stored_name("pairs+murcia-12").unwrap();
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

// ===== bonuses after the dice: R-BONUS, D-28, D-30 (parcheesi presets) ======================

/// The throw is over: the turn passed (or the player throws again).
fn throw_over(ev: &[Event]) -> bool {
    ev.iter()
        .any(|e| matches!(e, Event::TurnPassed { .. } | Event::RollAgain { .. }))
}

#[test]
fn r_bonus_d30_a_goal_bonus_is_played_when_the_other_die_cannot_be() {
    // Issue 18's reproduction, in both Parcheesi presets: the 1 takes piece 0 into the
    // goal (+10); the 6 is unplayable (11+6 lands on blue's safe 17), so the dice are
    // over and the 10 must still be played, 11 → 21 (R-BONUS "compulsory", D-4).
    for preset in ["parcheesi", "parcheesi-strict"] {
        let g = game(&format!("{preset} Y:h7,11,g,g B:12,17,n,n turn=Y move=1,6"));
        let (g, ev) = act(&g, "move 0 1");
        assert_eq!(
            ev,
            vec![
                Event::PieceMoved {
                    colour: Y,
                    piece: 0,
                    from: Location::HomeColumn(7),
                    to: Location::Goal,
                    steps: 1,
                    by: parchis_engine::MoveKind::Die,
                    bounced: false,
                    die: None,
                },
                Event::BonusEarned {
                    colour: Y,
                    amount: 10,
                    reason: BonusReason::Goal,
                },
                Event::NoLegalMove {
                    colour: Y,
                    dice: Dice::from_slice(&[6]).unwrap(),
                },
            ],
            "{preset}"
        );
        assert!(!throw_over(&ev), "{preset}: the throw must not end");
        assert_eq!(
            g.to_string(),
            format!("{preset} Y:g,11,g,g B:12,17,n,n turn=Y move=1*,6 bonus=10 lost=1")
        );
        assert_eq!(legal(&g), vec!["bonus 1 10"], "{preset}");
        // The lost die cannot be played any more, even had it become playable.
        assert_eq!(refuse(&g, "move 1 6").kind, ErrorKind::Bonus);
        let (g, ev) = act(&g, "bonus 1 10");
        assert!(throw_over(&ev), "{preset}");
        assert_eq!(
            g.to_string(),
            format!("{preset} Y:g,21,g,g B:12,17,n,n turn=B roll")
        );
    }
}

#[test]
fn r_bonus_d30_a_capture_bonus_is_played_when_the_other_die_cannot_be() {
    // 13+3 captures blue on 16 (+20); the 6 would land on red's lone piece on safe 22
    // (forbidden in parcheesi), so the 20 is played at once: 16 → 36.
    let g = game("parcheesi Y:13,g,g,g B:16,n,n,n R:22,n,n,n turn=Y move=3,6");
    let (g, ev) = act(&g, "move 0 3");
    assert!(ev.contains(&Event::BonusEarned {
        colour: Y,
        amount: 20,
        reason: BonusReason::Capture
    }));
    assert!(!throw_over(&ev));
    assert_eq!(legal(&g), vec!["bonus 0 20"]);
    let (g, _) = act(&g, "bonus 0 20");
    assert_eq!(
        g.to_string(),
        "parcheesi Y:36,g,g,g B:n,n,n,n R:22,n,n,n turn=R roll"
    );
}

#[test]
fn r_bonus_d28_pending_bonuses_are_played_in_any_order() {
    // Earned 20 then 10. The 20 first is impossible (9+20 is blue's safe 29), the 10
    // first makes both playable: 9 → 19 → 39. Played in the order earned, the 20 was lost.
    let g = game("parcheesi Y:9,g,g,g B:29,n,n,n turn=Y move=3*,4* bonus=20,10");
    assert_eq!(legal(&g), vec!["bonus 0 10"]);
    let (g, ev) = act(&g, "bonus 0 10");
    assert!(!ev.iter().any(|e| matches!(e, Event::BonusForfeited { .. })));
    assert_eq!(legal(&g), vec!["bonus 0 20"]);
    let (g, ev) = act(&g, "bonus 0 20");
    assert!(throw_over(&ev));
    assert_eq!(g.to_string(), "parcheesi Y:39,g,g,g B:29,n,n,n turn=B roll");
}

#[test]
fn r_bonus_d28_the_order_that_plays_more_bonuses_is_compulsory() {
    // Pending 20 and 10. Neither piece can take the 10 now (19+10 and 41+10 land on
    // blue's lone pieces on safe 29 and 51). The 20 by piece 0 (19 → 39) lets it take
    // the 10 next (39 → 49); the 20 by piece 1 (41 → 61) leaves the 10 to nobody
    // (61+10 passes blue's blockade on 65). So only piece 0 may take the 20.
    let g = game("parcheesi Y:19,41,g,g B:29,51,65,65' turn=Y move=3*,4* bonus=20,10");
    assert_eq!(legal(&g), vec!["bonus 0 20"]);
    let e = refuse(&g, "bonus 1 20");
    assert_eq!(e.rule, "D-28", "{e}");
    let (g, _) = act(&g, "bonus 0 20");
    assert_eq!(legal(&g), vec!["bonus 0 10"]);
    let (g, _) = act(&g, "bonus 0 10");
    assert_eq!(
        g.to_string(),
        "parcheesi Y:49,41,g,g B:29,51,65,65' turn=B roll"
    );
}

#[test]
fn d28_one_pending_bonus_may_be_taken_by_any_piece_that_can_move_it() {
    // Issue 30: seed 002 "mueve cualquiera de tus peones 20 espacios adicionales". With one
    // bonus pending there is no order to choose (D-28 compares the orders of the pending
    // bonuses only), so the 20 that captures red on 50 (30 → 50, earning another 20) is
    // not compulsory: piece 0 may take it too (10 → 30).
    for preset in ["parcheesi", "parcheesi-strict"] {
        let g = game(&format!(
            "{preset} Y:10,30,n,n R:50,n,n,n turn=Y move=1*,2* bonus=20"
        ));
        assert_eq!(legal(&g), vec!["bonus 0 20", "bonus 1 20"], "{preset}");
        // The capturing one still earns its 20, played next.
        let (after, ev) = act(&g, "bonus 1 20");
        assert!(ev.contains(&Event::BonusEarned {
            colour: Y,
            amount: 20,
            reason: BonusReason::Capture
        }));
        assert_eq!(legal(&after), vec!["bonus 0 20", "bonus 1 20"], "{preset}");
        // The other one ends the throw.
        let (after, ev) = act(&g, "bonus 0 20");
        assert!(throw_over(&ev), "{preset}");
        assert_eq!(
            after.to_string(),
            format!("{preset} Y:30',30,n,n R:50,n,n,n turn=R roll")
        );
        // The same board with red on 48 (no capture): the same two moves.
        let g = game(&format!(
            "{preset} Y:10,30,n,n R:48,n,n,n turn=Y move=1*,2* bonus=20"
        ));
        assert_eq!(legal(&g), vec!["bonus 0 20", "bonus 1 20"], "{preset}");
    }
}

#[test]
fn d28_a_bonus_earned_by_the_dice_of_real_play_goes_to_any_piece() {
    // Issue 30, from real play: red throws 3,4, moves piece 0 54 → 57 → 61 and captures
    // green on 61 (+20). Every red piece can move 20; each may take it (before, only the
    // capturing 49 → 69 was offered).
    let g = game("parcheesi R:54,49,63,55 G:67,58,1,61 turn=R roll");
    let (g, _) = act(&g, "roll 3,4");
    let (g, _) = act(&g, "move 0 3");
    let (g, ev) = act(&g, "move 0 4");
    assert!(ev.contains(&Event::BonusEarned {
        colour: R,
        amount: 20,
        reason: BonusReason::Capture
    }));
    assert_eq!(
        g.to_string(),
        "parcheesi R:61,49,63,55 G:67,58,1,n turn=R move=3*,4* bonus=20"
    );
    assert_eq!(
        legal(&g),
        vec!["bonus 0 20", "bonus 1 20", "bonus 2 20", "bonus 3 20"]
    );
}

#[test]
fn d28_bonuses_earned_during_the_bonus_phase_do_not_rank_the_orders() {
    // Pending 20 and 10. Piece 1's 20 captures red on 50 and earns another 20; piece 0's
    // does not. Both orders play both pending bonuses, so every first move is legal: the
    // 20 earned on the way is no "more of the pending bonuses" (D-28, issue 30).
    let g = game("parcheesi Y:10,30,n,n R:50,n,n,n turn=Y move=1*,2* bonus=20,10");
    assert_eq!(
        legal(&g),
        vec!["bonus 0 10", "bonus 0 20", "bonus 1 10", "bonus 1 20"]
    );
}

#[test]
fn r_bonus_d28_a_bonus_no_order_can_play_is_reported_forfeited() {
    // Piece 0 can take the 10 (19 → 29) but never the 20, before or after it: 19 → 39
    // and 29 → 49 both pass blue's blockade on 32. The 20 is forfeited, and reported.
    let g = game("parcheesi Y:19,g,g,g B:32,32',n,n turn=Y move=3*,4* bonus=20,10");
    assert_eq!(legal(&g), vec!["bonus 0 10"]);
    let (g, ev) = act(&g, "bonus 0 10");
    assert!(ev.contains(&Event::BonusForfeited {
        colour: Y,
        amount: 20
    }));
    assert!(throw_over(&ev));
    assert_eq!(
        g.to_string(),
        "parcheesi Y:29,g,g,g B:32,32',n,n turn=B roll"
    );
}

#[test]
fn d31_r_clock_and_r_leave_report_pending_bonuses_as_forfeited() {
    let g = game("parcheesi Y:10,20,n,n R:n,n,n,n B:n,n,n,n turn=Y move=3*,4* bonus=20,10");
    let (_, ev) = act(&g, "timeout");
    let forfeited: Vec<u8> = ev
        .iter()
        .filter_map(|e| match e {
            Event::BonusForfeited { amount, .. } => Some(*amount),
            _ => None,
        })
        .collect();
    assert_eq!(forfeited, vec![20, 10]);
    let (_, ev) = act(&g, "abandon Y");
    assert!(ev.contains(&Event::BonusForfeited {
        colour: Y,
        amount: 20
    }));
    assert!(ev.contains(&Event::BonusForfeited {
        colour: Y,
        amount: 10
    }));
}

#[test]
fn d31_r_win_a_pending_bonus_is_reported_forfeited_when_the_game_ends() {
    // The capture bonus waits for the dice; the last piece reaches the goal with the 4.
    let g = game("parcheesi Y:g,g,g,h4 R:16,n,n,n turn=Y move=4,3 bonus=20");
    let (g, ev) = act(&g, "move 3 4");
    let n = ev.len();
    assert_eq!(
        ev[n - 2..],
        [
            Event::BonusForfeited {
                colour: Y,
                amount: 20
            },
            Event::GameWon {
                winner: Y,
                reason: WinReason::Goal,
                partner: None
            }
        ]
    );
    assert!(g.outcome().is_some());
}

// ===== R-THIRD: the last moved piece names its colour (pairs) =================================

#[test]
fn r_third_pairs_the_last_moved_piece_is_the_finishers_own_in_the_goal() {
    // Issue 18's reproduction: green brings its last piece home with its second 6 (the 6
    // counts 7 from h1), then throws a third 6. The piece green moved last is in the goal,
    // so nothing goes to the nest — not blue's piece 0 on 30 (green now moves blue's).
    let g = game("pairs Y:n,n,n,n B:30,n,n,n R:n,n,n,n G:h1,g,g,g turn=G move=6 doubles=2 last=0");
    let (g, _) = act(&g, "move 0 6");
    assert_eq!(
        g.to_string(),
        "pairs Y:n,n,n,n B:30,n,n,n R:n,n,n,n G:g,g,g,g turn=G roll doubles=2 last=G0 places=G1"
    );
    let (g, ev) = act(&g, "roll 6");
    // Issue 30: the event names who threw (green), not the colour green now moves.
    assert!(ev.contains(&Event::ThirdDoublesPenalty {
        colour: G,
        piece: None,
        from: None,
        piece_colour: None,
    }));
    assert_eq!(
        g.pieces(B),
        [
            Location::Ring(30),
            Location::Nest,
            Location::Nest,
            Location::Nest
        ]
    );
}

#[test]
fn r_third_pairs_a_partner_piece_moved_last_goes_to_the_nest_named_by_colour() {
    // Green has finished and moved blue's piece 0 last: the third 6 sends that piece home,
    // and the event names its colour (blue) apart from the thrower's.
    let g = game(
        "pairs Y:n,n,n,n B:30,40,n,n R:n,n,n,n G:g,g,g,g turn=G roll doubles=2 last=B1 places=G1",
    );
    let (g, ev) = act(&g, "roll 6");
    // Issue 30: `colour` is who threw (green, proto/schema "who threw"), `piece_colour`
    // the colour of the piece sent home (blue's).
    assert!(ev.contains(&Event::ThirdDoublesPenalty {
        colour: G,
        piece: Some(1),
        from: Some(Location::Ring(40)),
        piece_colour: Some(B),
    }));
    assert_eq!(g.pieces(B)[1], Location::Nest);
    assert_eq!(g.pieces(B)[0], Location::Ring(30));
    // The text notation names the colour; the JSON carries it as a piece id.
    let json = game(
        "pairs Y:n,n,n,n B:30,40,n,n R:n,n,n,n G:g,g,g,g turn=G roll doubles=2 last=B1 places=G1",
    )
    .to_json();
    assert!(
        json.contains(r#""last_moved":{"colour":"blue","piece":1}"#),
        "{json}"
    );
}

#[test]
fn r_third_pairs_a_log_that_named_the_partner_still_replays() {
    // Games stored before issue 30 carry the penalty labelled with the colour moved
    // (blue) rather than the thrower (green): the replay accepts that label for the same
    // piece, and only for it.
    let new = Event::ThirdDoublesPenalty {
        colour: G,
        piece: Some(1),
        from: Some(Location::Ring(40)),
        piece_colour: Some(B),
    };
    let old = Event::ThirdDoublesPenalty {
        colour: B,
        piece: Some(1),
        from: Some(Location::Ring(40)),
        piece_colour: None,
    };
    assert!(GameRecord::event_matches(&new, &old));
    assert!(GameRecord::replay_matches(&[new], &[old]));
    let other_piece = Event::ThirdDoublesPenalty {
        colour: B,
        piece: Some(0),
        from: Some(Location::Ring(40)),
        piece_colour: None,
    };
    assert!(!GameRecord::event_matches(&new, &other_piece));
    // Nothing sent home: the label is the only difference.
    let none = |colour| Event::ThirdDoublesPenalty {
        colour,
        piece: None,
        from: None,
        piece_colour: None,
    };
    assert!(GameRecord::event_matches(&none(G), &none(B)));
    // An opponent's label is no older form of this event.
    assert!(!GameRecord::event_matches(&none(G), &none(Y)));
}

// ===== classic+two-out: the colour's first 5 of the game (D-23) ==============================

#[test]
fn d23_two_out_the_second_exit_captures_as_any_exit_does() {
    // Issue 18's reproduction: red stands alone on green's exit square. The first exit
    // joins it; the second finds one own and one opponent piece there and captures red
    // (+20), exactly as a plain exit does in `classic R:56,n,n,n G:56',n,n,n turn=G`.
    let g = game("classic+two-out R:56,n,n,n G:n,n,n,n turn=G move=5");
    let (g, ev) = act(&g, "exit");
    assert_eq!(
        ev,
        vec![
            Event::PieceExited {
                colour: G,
                piece: 0,
                square: 56
            },
            Event::PieceExited {
                colour: G,
                piece: 1,
                square: 56
            },
            Event::PieceCaptured {
                colour: R,
                piece: 0,
                square: 56,
                by: G
            },
            Event::BonusEarned {
                colour: G,
                amount: 20,
                reason: BonusReason::Capture
            },
        ]
    );
    assert_eq!(
        g.to_string(),
        "classic+two-out R:n,n,n,n G:56,56',n,n turn=G move=5* bonus=20 first5=-"
    );
    let plain = game("classic R:56,n,n,n G:56',n,n,n turn=G move=5");
    let (_, plain_ev) = act(&plain, "exit");
    assert_eq!(plain_ev[1..], ev[2..], "the same capture and bonus");
}

#[test]
fn d23_two_out_only_on_the_colours_first_five_not_after_a_capture() {
    // A new game: yellow's first 5 brings out two pieces.
    let rules = parchis_engine::RuleSet::from_name("classic+two-out").unwrap();
    let g = Game::new(rules, &[Y, R], Y).unwrap();
    assert_eq!(
        g.to_string(),
        "classic+two-out Y:n,n,n,n R:n,n,n,n turn=Y roll"
    );
    let (g, _) = act(&g, "roll 5");
    let (g, _) = act(&g, "exit");
    assert_eq!(g.pieces(Y)[..2], [Location::Ring(5), Location::Ring(5)]);
    // Yellow's only piece out is captured: all four are in the nest again, but its
    // first 5 has come, so the next 5 brings out one piece.
    let g = game("classic+two-out Y:10,n,n,n R:7,n,n,n turn=R move=3");
    let (g, _) = act(&g, "move 0 3");
    let (g, _) = act(&g, "bonus 0 20");
    assert_eq!(
        g.to_string(),
        "classic+two-out Y:n,n,n,n R:30,n,n,n turn=Y roll first5=-"
    );
    let (g, _) = act(&g, "roll 5");
    let (g, ev) = act(&g, "exit");
    assert_eq!(
        ev.iter()
            .filter(|e| matches!(e, Event::PieceExited { .. }))
            .count(),
        1
    );
    assert_eq!(
        g.pieces(Y),
        [
            Location::Ring(5),
            Location::Nest,
            Location::Nest,
            Location::Nest
        ]
    );
}

#[test]
fn d23_two_out_the_first_five_is_recorded_in_both_position_formats() {
    // JSON: every colour of a two-out game carries first_five.
    let g = game("classic+two-out Y:n,n,n,n R:30,n,n,n turn=Y roll first5=-");
    let pos = g.to_position();
    assert_eq!(pos.players[0].first_five, Some(false));
    assert_eq!(pos.players[1].first_five, Some(false));
    let back = Game::from_json(&g.to_json()).unwrap();
    assert_eq!(back, g);
    // Without first5=, a colour with all four pieces in the nest has its first 5 to come.
    let g = game("classic+two-out Y:n,n,n,n R:30,n,n,n turn=Y roll");
    assert_eq!(g.to_position().players[0].first_five, Some(true));
    assert_eq!(g.to_position().players[1].first_five, Some(false));
    // first5= names colours explicitly; it is refused where it cannot hold.
    let g = game("classic+two-out+one-out Y:5,n,n,n R:39,n,n,n turn=Y roll first5=Y,R");
    assert_eq!(
        g.to_string(),
        "classic+two-out+one-out Y:5,n,n,n R:39,n,n,n turn=Y roll first5=Y,R"
    );
    for (text, needle) in [
        (
            "classic Y:n,n,n,n R:n,n,n,n turn=Y roll first5=Y",
            "no two-out",
        ),
        (
            "classic+two-out Y:10,n,n,n R:n,n,n,n turn=Y roll first5=Y",
            "D-23",
        ),
        (
            "classic+two-out Y:n,n,n,n R:n,n,n,n turn=Y roll first5=B",
            "not seated",
        ),
    ] {
        let e = text.parse::<Game>().expect_err(text).to_string();
        assert!(e.contains(needle), "{text}: {e}");
    }
    let mut p = game("classic Y:n,n,n,n R:n,n,n,n turn=Y roll").to_position();
    p.players[0].first_five = Some(true);
    let e = Game::try_from(&p)
        .expect_err("first_five without two-out")
        .to_string();
    assert!(e.contains("D-23"), "{e}");
}

// ===== classic+two-out: a bonus between the two exits (D-32) =================================

#[test]
fn d32_two_out_a_capturing_first_exit_plays_its_20_before_the_second_piece() {
    // Issue 30's reproduction: blue and red (arrived last) stand on yellow's exit. The
    // first exit captures red and earns 20, played at once (D-4); the second piece comes
    // out after it and joins blue, who is alone there by then — no second capture.
    let g = game("classic+two-out Y:n,n,n,n B:5,n,n,n R:5',n,n,n turn=Y move=5");
    let (g, ev) = act(&g, "exit");
    assert_eq!(
        ev,
        vec![
            Event::PieceExited {
                colour: Y,
                piece: 0,
                square: 5
            },
            Event::PieceCaptured {
                colour: R,
                piece: 0,
                square: 5,
                by: Y
            },
            Event::BonusEarned {
                colour: Y,
                amount: 20,
                reason: BonusReason::Capture
            },
        ]
    );
    assert_eq!(
        g.to_string(),
        "classic+two-out Y:5',n,n,n B:5,n,n,n R:n,n,n,n turn=Y move=5* bonus=20 exit2=1 first5=-"
    );
    assert_eq!(legal(&g), vec!["bonus 0 20"]);
    assert_eq!(refuse(&g, "exit").rule, "R-BONUS");
    let (g, _) = act(&g, "bonus 0 20");
    assert_eq!(
        g.to_string(),
        "classic+two-out Y:25,n,n,n B:5,n,n,n R:n,n,n,n turn=Y move=5* exit2=1 first5=-"
    );
    assert_eq!(legal(&g), vec!["exit"]);
    assert_eq!(refuse(&g, "move 0 5").rule, "D-32");
    let (g, ev) = act(&g, "exit");
    assert_eq!(
        ev,
        vec![
            Event::PieceExited {
                colour: Y,
                piece: 1,
                square: 5
            },
            Event::TurnPassed { from: Y, to: B },
        ]
    );
    assert_eq!(
        g.to_string(),
        "classic+two-out Y:25,5',n,n B:5,n,n,n R:n,n,n,n turn=B roll first5=-"
    );
}

#[test]
fn d32_two_out_without_a_capture_both_pieces_come_out_at_once() {
    // No bonus to play in between: one action brings both out (D-23), as before.
    let g = game("classic+two-out Y:n,n,n,n B:5,n,n,n turn=Y move=5");
    let (g, ev) = act(&g, "exit");
    let exits = ev
        .iter()
        .filter(|e| matches!(e, Event::PieceExited { .. }))
        .count();
    assert_eq!(exits, 2);
    assert_eq!(legal(&g), vec!["bonus 0 20", "bonus 1 20"]);
    assert!(!g.to_string().contains("exit2"), "{g}");
}

#[test]
fn d32_the_owed_second_exit_is_read_and_written_in_both_formats() {
    let text = "classic+two-out Y:25,n,n,n B:5,n,n,n R:n,n,n,n turn=Y move=5* exit2=1 first5=-";
    let g = game(text);
    assert_eq!(g.to_string(), text);
    assert!(
        g.to_json().contains(r#""second_exit":true"#),
        "{}",
        g.to_json()
    );
    assert_eq!(Game::from_json(&g.to_json()).unwrap(), g);
    for bad in [
        // Not a two-out game.
        "classic Y:25,n,n,n B:5,n,n,n turn=Y move=5* exit2=1",
        "online Y:25,n,n,n B:5,n,n,n turn=Y move=5*,3* exit2=1",
        // The die is not a used 5.
        "classic+two-out Y:25,n,n,n B:5,n,n,n turn=Y move=5 exit2=1 first5=-",
        "classic+two-out Y:25,n,n,n B:5,n,n,n turn=Y move=4* exit2=1 first5=-",
        // Nobody left in the nest.
        "classic+two-out Y:25,30,40,50 B:5,n,n,n turn=Y move=5* exit2=1 first5=-",
    ] {
        let e = bad.parse::<Game>().expect_err(bad).to_string();
        assert!(e.contains("D-32"), "{bad}: {e}");
    }
    let e = "classic+two-out Y:25,n,n,n B:5,n,n,n turn=Y roll exit2=1 first5=-"
        .parse::<Game>()
        .expect_err("exit2 on a roll")
        .to_string();
    assert!(e.contains("belong to a move= stage"), "{e}");
}

#[test]
fn d32_a_two_out_game_stored_before_d32_replays_both_exits_first() {
    // A game_started position stored earlier has no `two_out_bonus_between_exits` field:
    // it reads as false, and the game plays on as it was played then — both pieces out,
    // both opponents captured, both bonuses after (bonus=20,20).
    let rules = parchis_engine::RuleSet::from_name("classic+two-out").unwrap();
    assert!(rules.two_out_bonus_between_exits);
    let mut json: serde_json::Value = serde_json::to_value(rules).unwrap();
    json.as_object_mut()
        .unwrap()
        .remove("two_out_bonus_between_exits");
    let old: parchis_engine::RuleSet = serde_json::from_value(json).unwrap();
    assert!(!old.two_out_bonus_between_exits && old.two_out_on_first_five);
    let mut p = game("classic+two-out Y:n,n,n,n B:5,n,n,n R:5',n,n,n turn=Y move=5").to_position();
    p.rules = old;
    let g = Game::try_from(&p).unwrap();
    let (g, ev) = g.apply(&Action::Exit).unwrap();
    let captured: Vec<Colour> = ev
        .iter()
        .filter_map(|e| match e {
            Event::PieceCaptured { colour, .. } => Some(*colour),
            _ => None,
        })
        .collect();
    assert_eq!(captured, vec![R, B]);
    let stage = g.to_position().stage;
    assert!(
        matches!(&stage, parchis_engine::StagePosition::Move { bonus, second_exit: false, .. } if *bonus == vec![20, 20]),
        "{stage:?}"
    );
    // The rule set is written back with the field, keeping the older rule.
    let back = Game::from_json(&g.to_json()).unwrap();
    assert_eq!(back, g);
    assert!(!back.rules().two_out_bonus_between_exits);
}

// ===== classic+safe-only: blockades form only on safe squares (D-29) =========================

#[test]
fn d29_safe_only_two_pieces_of_one_colour_share_only_a_safe_square() {
    // Landing on one's own piece on normal square 10 would form a blockade there.
    let g = game("classic+safe-only Y:10,8,n,n R:n,n,n,n turn=Y move=2");
    assert_eq!(legal(&g), vec!["move 0 2"]);
    let e = refuse(&g, "move 1 2");
    assert_eq!((e.rule, e.kind), ("D-29", ErrorKind::Blocked), "{e}");
    // On safe square 12 it may: the two form a blockade.
    let g = game("classic+safe-only Y:12,8,n,n R:n,n,n,n turn=Y move=4");
    assert_eq!(legal(&g), vec!["move 0 4", "move 1 4"]);
    // The home column is not a safe square (seguro) either.
    let g = game("classic+safe-only Y:h2,h1,n,n R:n,n,n,n turn=Y move=1");
    assert_eq!(legal(&g), vec!["move 0 1"]);
    assert_eq!(refuse(&g, "move 1 1").rule, "D-29");
    // Captures on normal squares are unchanged.
    let g = game("classic+safe-only Y:10,n,n,n R:13,n,n,n turn=Y move=3");
    let (_, ev) = act(&g, "move 0 3");
    assert!(ev.iter().any(|e| matches!(e, Event::PieceCaptured { .. })));
}

#[test]
fn d29_safe_only_a_blockade_on_a_safe_square_bars_passing_and_a_six_opens_it() {
    // Yellow's pair on safe 12 blocks yellow's piece on 8 (8+6 passes 12); the 6 must
    // open the pair (R-OPEN with one die): 12 → 18 by either of its pieces.
    let g = game("classic+safe-only Y:12,12',8,n R:n,n,n,n turn=Y move=6");
    assert_eq!(legal(&g), vec!["move 0 6", "move 1 6"]);
    assert_eq!(refuse(&g, "move 2 6").rule, "R-BLOCK");
    // A red piece cannot pass it either.
    let g = game("classic+safe-only Y:12,12',n,n R:8,n,n,n turn=R move=6");
    assert_eq!(refuse(&g, "move 0 6").rule, "R-BLOCK");
}

#[test]
fn d29_safe_only_positions_with_a_pair_off_a_safe_square_are_refused() {
    for text in [
        "classic+safe-only Y:10,10',n,n R:n,n,n,n turn=Y roll",
        "classic+safe-only Y:h3,h3',n,n R:n,n,n,n turn=Y roll",
    ] {
        let e = text.parse::<Game>().expect_err(text).to_string();
        assert!(
            e.contains("D-29") && e.contains("not a safe square"),
            "{text}: {e}"
        );
    }
    assert!("classic+safe-only Y:12,12',n,n R:n,n,n,n turn=Y roll"
        .parse::<Game>()
        .is_ok());
}

#[test]
fn d33_pairs_refuses_safe_only_yet_a_game_stored_with_it_still_plays() {
    // Seed 004 "Se permite formar barreras en cualquier lugar": the variant is refused on
    // `pairs`, naming the preset, the variant and the seed's sentence.
    let e = format!("pairs+safe-only Y:10,n,n,n R:13,n,n,n {PAIRS_EMPTY} turn=Y move=3")
        .parse::<Game>()
        .expect_err("pairs+safe-only")
        .to_string();
    assert!(
        e.contains("the variant safe-only is not played with pairs")
            && e.contains("Se permite formar barreras en cualquier lugar"),
        "{e}"
    );
    // A game created before D-33 carries its rule set as JSON and plays on as it began
    // (D-29 there): the blockade cannot form on normal square 13, so capturing the lone
    // partner piece is the only landing.
    let mut p = game(&format!(
        "pairs Y:10,n,n,n R:13,n,n,n {PAIRS_EMPTY} turn=Y move=3"
    ))
    .to_position();
    p.rules = parchis_engine::RuleSet::from_stored_name("pairs+safe-only").unwrap();
    let g = Game::try_from(&p).expect("a stored pairs+safe-only position");
    assert_eq!(legal(&g), vec!["move 0 3 capture"]);
    assert_eq!(refuse(&g, "move 0 3").rule, "D-29");
}
