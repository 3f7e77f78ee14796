//! One named test per rule id and decision of the reference (§2, §4) that applies to
//! the `online` preset. Positions are in the text notation (proto/NOTATION.md).
//!
//! Why one long file: it is a list of one independent test per rule id, sharing the helpers at its top;
//! one test binary also keeps the build short.

use parchis_engine::{
    Action, BonusReason, Colour, Dice, ErrorKind, Event, Expect, Game, Location, MoveKind, RuleSet,
    SetupError, WinReason,
};

mod common;

use common::{act, game, legal, refuse, roll};

// ----- §2.1 seating, first player, order ------------------------------------------------

#[test]
fn r_seat_two_to_four_distinct_colours() {
    let r = RuleSet::online();
    assert!(matches!(
        Game::new(r, &[Colour::Yellow], Colour::Yellow),
        Err(SetupError::Seats(_))
    ));
    assert!(matches!(
        Game::new(r, &[Colour::Red, Colour::Red], Colour::Red),
        Err(SetupError::Seats(_))
    ));
    assert!(Game::new(r, &Colour::ALL, Colour::Green).is_ok());
}

#[test]
fn r_first_creator_rolls_first() {
    let g = Game::new(
        RuleSet::online(),
        &[Colour::Yellow, Colour::Red],
        Colour::Red,
    )
    .unwrap();
    assert_eq!(
        g.expect(),
        Expect::Roll {
            colour: Colour::Red
        }
    );
    assert_eq!(
        Game::new(
            RuleSet::online(),
            &[Colour::Yellow, Colour::Red],
            Colour::Blue
        ),
        Err(SetupError::FirstNotSeated(Colour::Blue))
    );
}

#[test]
fn r_order_clockwise_yellow_green_red_blue_skipping_free_colours() {
    // Yellow, red and blue seated: yellow → red → blue → yellow (green is free).
    let mut g = Game::new(
        RuleSet::online(),
        &[Colour::Yellow, Colour::Red, Colour::Blue],
        Colour::Yellow,
    )
    .unwrap();
    let mut order = vec![g.turn()];
    for _ in 0..3 {
        g = roll(&g, 1, 2).0; // no 5, nothing out: the turn passes (R-MUST)
        order.push(g.turn());
    }
    assert_eq!(
        order,
        vec![Colour::Yellow, Colour::Red, Colour::Blue, Colour::Yellow]
    );
    let g4 = game("online Y:n,n,n,n B:n,n,n,n R:n,n,n,n G:n,n,n,n turn=Y roll");
    let (g4, ev) = roll(&g4, 1, 2);
    assert_eq!(g4.turn(), Colour::Green);
    assert!(ev.contains(&Event::TurnPassed {
        from: Colour::Yellow,
        to: Colour::Green
    }));
}

// ----- §2.2 roll, doubles, third doubles ------------------------------------------------

#[test]
fn r_roll_dice_are_validated() {
    let g = game("online Y:n,n,n,n R:n,n,n,n turn=Y roll");
    assert!(Dice::two(0, 3).is_err());
    assert!(Dice::two(7, 3).is_err());
    let e = g
        .apply(&Action::Roll {
            dice: Dice::from_slice(&[4]).unwrap(),
        })
        .unwrap_err();
    assert_eq!((e.kind, e.rule), (ErrorKind::BadDice, "R-ROLL"));
    let e = refuse(&g, "move 0 3");
    assert_eq!((e.kind, e.rule), (ErrorKind::AwaitingRoll, "R-ROLL"));
}

#[test]
fn r_doubles_and_d9_doubles_with_no_legal_move_still_roll_again() {
    let g = game("online Y:n,n,n,n R:n,n,n,n turn=Y roll");
    let (g, ev) = roll(&g, 2, 2);
    assert_eq!(
        ev,
        vec![
            Event::DiceRolled {
                colour: Colour::Yellow,
                dice: Dice::two(2, 2).unwrap(),
                doubles_in_row: 1
            },
            Event::NoLegalMove {
                colour: Colour::Yellow,
                dice: Dice::two(2, 2).unwrap()
            },
            Event::RollAgain {
                colour: Colour::Yellow
            },
        ]
    );
    assert_eq!(
        g.to_string(),
        "online Y:n,n,n,n R:n,n,n,n turn=Y roll doubles=1"
    );
}

#[test]
fn r_third_last_moved_piece_goes_to_nest_and_turn_ends() {
    let g = game("online Y:20,30,n,n R:n,n,n,n turn=Y roll doubles=2 last=0");
    let (g, ev) = roll(&g, 3, 3);
    assert!(ev.contains(&Event::ThirdDoublesPenalty {
        colour: Colour::Yellow,
        piece: Some(0),
        from: Some(Location::Ring(20)),
        piece_colour: None,
    }));
    assert_eq!(g.to_string(), "online Y:n,30,n,n R:n,n,n,n turn=R roll");
}

#[test]
fn r_third_last_moved_piece_in_home_column_stays() {
    let g = game("online Y:h2,30,n,n R:n,n,n,n turn=Y roll doubles=2 last=0");
    let (g, ev) = roll(&g, 4, 4);
    assert!(ev.contains(&Event::ThirdDoublesPenalty {
        colour: Colour::Yellow,
        piece: None,
        from: None,
        piece_colour: None,
    }));
    assert_eq!(g.to_string(), "online Y:h2,30,n,n R:n,n,n,n turn=R roll");
}

#[test]
fn d10_third_doubles_before_any_move_sends_nothing_home() {
    let g = game("online Y:20,30,n,n R:n,n,n,n turn=Y roll doubles=2");
    let (g, ev) = roll(&g, 6, 6);
    assert!(ev.contains(&Event::ThirdDoublesPenalty {
        colour: Colour::Yellow,
        piece: None,
        from: None,
        piece_colour: None,
    }));
    assert_eq!(g.to_string(), "online Y:20,30,n,n R:n,n,n,n turn=R roll");
}

#[test]
fn d16_an_exit_counts_as_the_last_move_for_r_third() {
    let g = game("online Y:30,n,n,n R:n,n,n,n turn=Y roll doubles=1");
    let (g, _) = roll(&g, 5, 5);
    let (g, _) = act(&g, "exit"); // piece 1 out
    assert_eq!(legal(&g), vec!["exit"]);
    let (g, _) = act(&g, "exit"); // piece 2 out: the last moved piece
    assert_eq!(
        g.to_string(),
        "online Y:30,5,5',n R:n,n,n,n turn=Y roll doubles=2 last=Y2"
    );
    let (g, ev) = roll(&g, 1, 1);
    assert!(ev.contains(&Event::ThirdDoublesPenalty {
        colour: Colour::Yellow,
        piece: Some(2),
        from: Some(Location::Ring(5)),
        piece_colour: None,
    }));
    assert_eq!(g.to_string(), "online Y:30,5,n,n R:n,n,n,n turn=R roll");
}

// ----- §2.3 exits -------------------------------------------------------------------------

#[test]
fn r_exit_1_a_five_on_one_die_exits_first_then_the_other_die() {
    let g = game("online Y:n,n,n,n R:n,n,n,n turn=Y roll");
    let (g, _) = roll(&g, 5, 3);
    assert_eq!(legal(&g), vec!["exit"]);
    let e = refuse(&g, "move 0 3");
    assert_eq!(e.rule, "R-EXIT-1");
    let (g, ev) = act(&g, "exit");
    assert_eq!(
        ev,
        vec![Event::PieceExited {
            colour: Colour::Yellow,
            piece: 0,
            square: 5
        }]
    );
    assert_eq!(legal(&g), vec!["move 0 3"]);
    let (g, _) = act(&g, "move 0 3");
    assert_eq!(g.to_string(), "online Y:8,n,n,n R:n,n,n,n turn=R roll");
}

#[test]
fn r_exit_1_a_sum_of_five_uses_both_dice() {
    let g = game("online Y:20,n,n,n R:n,n,n,n turn=Y roll");
    let (g, _) = roll(&g, 4, 1);
    assert_eq!(legal(&g), vec!["exit"]);
    let (g, _) = act(&g, "exit");
    assert_eq!(g.to_string(), "online Y:20,5,n,n R:n,n,n,n turn=R roll");
}

#[test]
fn r_exit_1_double_five_exits_two_pieces_then_rolls_again() {
    let g = game("online Y:n,n,n,n R:n,n,n,n turn=Y roll");
    let (g, _) = roll(&g, 5, 5);
    assert_eq!(legal(&g), vec!["exit"]);
    let (g, _) = act(&g, "exit");
    assert_eq!(legal(&g), vec!["exit"]);
    let (g, ev) = act(&g, "exit");
    assert_eq!(
        ev.last(),
        Some(&Event::RollAgain {
            colour: Colour::Yellow
        })
    );
    assert_eq!(
        g.to_string(),
        "online Y:5,5',n,n R:n,n,n,n turn=Y roll doubles=1 last=Y1"
    );
}

#[test]
fn d11_double_five_with_one_piece_in_the_nest_exits_one_and_moves_five() {
    let g = game("online Y:30,n,g,g R:n,n,n,n turn=Y roll");
    let (g, _) = roll(&g, 5, 5);
    assert_eq!(legal(&g), vec!["exit"]);
    let (g, _) = act(&g, "exit");
    assert_eq!(legal(&g), vec!["move 0 5", "move 1 5"]);
}

#[test]
fn r_exit_2_two_own_pieces_on_the_exit_square_one_must_move_first() {
    let g = game("online Y:5,5',n,n R:n,n,n,n turn=Y roll");
    let (g, _) = roll(&g, 5, 3);
    // Moving one of the two with the 3 first lets the 5 bring a piece out: compulsory.
    assert_eq!(legal(&g), vec!["move 0 3", "move 1 3"]);
    assert_eq!(refuse(&g, "exit").rule, "R-EXIT-2");
    let (g, _) = act(&g, "move 1 3");
    assert_eq!(legal(&g), vec!["exit"]);
    let (g, _) = act(&g, "exit");
    assert_eq!(g.to_string(), "online Y:5,8,5',n R:n,n,n,n turn=R roll");
}

#[test]
fn r_exit_capture_and_d4_own_and_opponent_captures_the_opponent_with_bonus_20_played_at_once() {
    let g = game("online Y:5,n,n,n R:5',n,n,n turn=Y roll");
    let (g, ev) = roll(&g, 5, 2);
    assert!(ev.iter().all(|e| !matches!(e, Event::PieceCaptured { .. })));
    let (g, ev) = act(&g, "exit");
    assert_eq!(
        ev,
        vec![
            Event::PieceExited {
                colour: Colour::Yellow,
                piece: 1,
                square: 5
            },
            Event::PieceCaptured {
                colour: Colour::Red,
                piece: 0,
                square: 5,
                by: Colour::Yellow
            },
            Event::BonusEarned {
                colour: Colour::Yellow,
                amount: 20,
                reason: BonusReason::Capture
            },
        ]
    );
    // D-4: the bonus is played right away, before the remaining 2.
    assert_eq!(legal(&g), vec!["bonus 0 20", "bonus 1 20"]);
    assert_eq!(refuse(&g, "move 0 2").rule, "R-BONUS");
    let (g, _) = act(&g, "bonus 0 20");
    assert_eq!(
        g.to_string(),
        "online Y:25,5,n,n R:n,n,n,n turn=Y move=5*,2"
    );
}

#[test]
fn r_exit_capture_two_opponents_captures_the_last_arrived() {
    let g = game("online Y:n,n,n,n B:n,n,n,n R:5,n,n,n turn=Y roll");
    // Blue arrives on square 5 after red (D-6).
    let g = game(&g.to_string().replace("B:n,n,n,n", "B:5',n,n,n"));
    let (g, _) = roll(&g, 5, 1);
    let (g, ev) = act(&g, "exit");
    assert!(ev.contains(&Event::PieceCaptured {
        colour: Colour::Blue,
        piece: 0,
        square: 5,
        by: Colour::Yellow
    }));
    assert!(ev.contains(&Event::BonusEarned {
        colour: Colour::Yellow,
        amount: 20,
        reason: BonusReason::Capture
    }));
    assert_eq!(
        g.location(parchis_engine::PieceId {
            colour: Colour::Red,
            piece: 0
        }),
        Location::Ring(5)
    );
    assert_eq!(legal(&g), vec!["bonus 0 20"]);
}

#[test]
fn r_exit_capture_one_opponent_is_joined_forming_a_blockade() {
    let g = game("online Y:n,n,n,n R:5,n,n,n turn=Y roll");
    let (g, _) = roll(&g, 5, 1);
    let (g, ev) = act(&g, "exit");
    assert_eq!(
        ev,
        vec![Event::PieceExited {
            colour: Colour::Yellow,
            piece: 0,
            square: 5
        }]
    );
    assert_eq!(
        g.to_string(),
        "online Y:5',n,n,n R:5,n,n,n turn=Y move=5*,1"
    );
    // The mixed blockade on 5 now stops red's own piece too: the 1 is played by... nobody
    // but yellow's piece 0 (5 → 6).
    assert_eq!(legal(&g), vec!["move 0 1"]);
}

// ----- §2.4 moves, blockades, captures, safe squares ---------------------------------------

#[test]
fn r_move_pieces_in_nest_or_goal_cannot_move() {
    let g = game("online Y:n,g,20,n R:n,n,n,n turn=Y move=3,4");
    assert_eq!(refuse(&g, "move 0 3").rule, "R-EXIT-1");
    assert_eq!(refuse(&g, "move 1 3").rule, "R-MOVE");
    assert_eq!(refuse(&g, "move 2 6").kind, ErrorKind::DieNotAvailable);
    assert_eq!(refuse(&g, "move 7 3").kind, ErrorKind::BadPiece);
    assert_eq!(legal(&g), vec!["move 2 3", "move 2 4"]);
}

#[test]
fn r_block_a_blockade_stops_its_own_owners_pieces() {
    // Yellow's own blockade on 10; yellow's piece on 8 cannot pass it.
    let g = game("online Y:10,10',8,n R:n,n,n,n turn=Y move=3,4");
    assert_eq!(
        legal(&g),
        vec!["move 0 3", "move 0 4", "move 1 3", "move 1 4"]
    );
    let e = refuse(&g, "move 2 3");
    assert_eq!((e.kind, e.rule), (ErrorKind::Blocked, "R-BLOCK"));
}

#[test]
fn r_block_two_colours_on_a_safe_square_block_everyone() {
    let g = game("online Y:10,12,n,n R:12',n,n,n turn=Y move=3,4");
    assert_eq!(legal(&g), vec!["move 1 3", "move 1 4"]);
    assert_eq!(refuse(&g, "move 0 4").rule, "R-BLOCK");
}

#[test]
fn r_block_cannot_land_on_a_blockade() {
    let g = game("online Y:10,n,n,n R:14,14',n,n turn=Y move=4,2");
    assert_eq!(refuse(&g, "move 0 4").rule, "R-BLOCK");
    // 10+2 = 12, then 12+4 passes 14: only the 2 can be played.
    assert_eq!(legal(&g), vec!["move 0 2"]);
}

#[test]
fn d1_blockade_in_the_home_column_stops_a_bouncing_piece() {
    // Yellow's two pieces on h7 form a blockade; piece 0 on h4 with a 6 would run to
    // the goal and bounce back to h6, passing h7: barred.
    let g = game("online Y:h4,h7,h7',n R:n,n,n,n turn=Y move=6,1");
    let e = refuse(&g, "move 0 6");
    assert_eq!(e.rule, "R-BLOCK");
    assert!(!legal(&g).contains(&"move 0 6".to_string()));
}

#[test]
fn r_capture_on_a_normal_square_sends_home_and_earns_20() {
    let g = game("online Y:10,n,n,n R:13,n,n,n turn=Y move=3,6");
    let (g, ev) = act(&g, "move 0 3");
    assert_eq!(
        ev,
        vec![
            Event::PieceMoved {
                colour: Colour::Yellow,
                piece: 0,
                from: Location::Ring(10),
                to: Location::Ring(13),
                steps: 3,
                by: MoveKind::Die,
                bounced: false,
                die: None
            },
            Event::PieceCaptured {
                colour: Colour::Red,
                piece: 0,
                square: 13,
                by: Colour::Yellow
            },
            Event::BonusEarned {
                colour: Colour::Yellow,
                amount: 20,
                reason: BonusReason::Capture
            },
        ]
    );
    assert_eq!(legal(&g), vec!["bonus 0 20"]);
    let (g, _) = act(&g, "bonus 0 20");
    assert_eq!(legal(&g), vec!["move 0 6"]);
    let (g, _) = act(&g, "move 0 6");
    assert_eq!(g.to_string(), "online Y:39,n,n,n R:n,n,n,n turn=R roll");
}

#[test]
fn r_safe_a_lone_opponent_on_a_safe_square_is_joined_not_captured() {
    let g = game("online Y:10,n,n,n R:12,n,n,n turn=Y move=2,6");
    let (g, ev) = act(&g, "move 0 2");
    assert!(ev
        .iter()
        .all(|e| !matches!(e, Event::PieceCaptured { .. } | Event::BonusEarned { .. })));
    assert_eq!(
        g.to_string(),
        "online Y:12',n,n,n R:12,n,n,n turn=Y move=2*,6"
    );
}

// ----- §2.5 must play (D-2, D-13) -----------------------------------------------------------

#[test]
fn d2_only_one_die_playable_either_may_be_chosen() {
    // Yellow's only piece on 60; red's blockade on 67 bars every two-dice play.
    let g = game("online Y:60,n,n,n R:67,67',n,n turn=Y move=3,4");
    assert_eq!(legal(&g), vec!["move 0 3", "move 0 4"]);
    let (g, ev) = act(&g, "move 0 4");
    assert!(ev.contains(&Event::NoLegalMove {
        colour: Colour::Yellow,
        dice: Dice::from_slice(&[3]).unwrap()
    }));
    assert_eq!(g.turn(), Colour::Red);
}

#[test]
fn r_must_play_as_many_dice_as_possible() {
    // Piece 0 could take the 6 to 16, after which the 2 is unplayable (18 is a red blockade
    // ... no: piece 1 is stuck behind it); the plays that use both dice are compulsory.
    let g = game("online Y:10,n,n,n R:18,18',n,n turn=Y move=6,2");
    // 10+2=12, then +6=18 blocked; 10+6=16 then +2=18 blocked: only one die can be played.
    assert_eq!(legal(&g), vec!["move 0 2", "move 0 6"]);
    let g = game("online Y:10,40,n,n R:18,18',n,n turn=Y move=6,2");
    // With a second piece, every play of both dice is allowed; none strands a die.
    let l = legal(&g);
    assert_eq!(l, vec!["move 0 2", "move 0 6", "move 1 2", "move 1 6"]);
    let (g2, _) = act(&g, "move 0 6");
    assert_eq!(legal(&g2), vec!["move 1 2"]); // 16+2 = 18 is barred
}

#[test]
fn d13_a_die_playable_only_after_the_other_counts() {
    // Piece 2 on 7 can use the 3 (to 10) only once the blockade on 10 has opened.
    let g = game("online Y:10,10',7,n R:n,n,n,n turn=Y move=3,6");
    assert!(!legal(&g).iter().any(|a| a.starts_with("move 2")));
    let (g, _) = act(&g, "move 0 6");
    assert_eq!(legal(&g), vec!["move 0 3", "move 1 3", "move 2 3"]);
}

#[test]
fn r_must_no_legal_move_loses_the_turn() {
    let g = game("online Y:n,n,n,n R:n,n,n,n turn=Y roll");
    let (g, ev) = roll(&g, 1, 2);
    assert_eq!(
        ev[1],
        Event::NoLegalMove {
            colour: Colour::Yellow,
            dice: Dice::two(1, 2).unwrap()
        }
    );
    assert_eq!(
        ev[2],
        Event::TurnPassed {
            from: Colour::Yellow,
            to: Colour::Red
        }
    );
    assert_eq!(g.to_string(), "online Y:n,n,n,n R:n,n,n,n turn=R roll");
}

// ----- §2.6 doubles open blockades (D-3, D-8, D-15) -----------------------------------------

#[test]
fn r_open_and_d3_doubles_force_a_blockade_open_and_reforming_the_pair_does_not_count() {
    let g = game("online Y:10,10',30,n R:n,n,n,n turn=Y roll");
    let (g, _) = roll(&g, 2, 2);
    assert_eq!(
        g.to_string(),
        "online Y:10,10',30,n R:n,n,n,n turn=Y move=2,2 open=Y0+Y1@10 doubles=1"
    );
    assert_eq!(legal(&g), vec!["move 0 2", "move 1 2", "move 2 2"]);
    let (g1, _) = act(&g, "move 0 2");
    // D-3: moving piece 1 to 12 would re-form the same pair on a new square.
    assert_eq!(legal(&g1), vec!["move 0 2", "move 2 2"]);
    assert_eq!(refuse(&g1, "move 1 2").rule, "R-OPEN");
    let (g2, _) = act(&g, "move 2 2");
    assert_eq!(legal(&g2), vec!["move 0 2", "move 1 2"]);
}

#[test]
fn d15_a_home_column_blockade_must_open_on_doubles() {
    let g = game("online Y:h1,h1',30,n R:n,n,n,n turn=Y roll");
    let (g, _) = roll(&g, 1, 1);
    let (g, _) = act(&g, "move 2 1");
    assert_eq!(legal(&g), vec!["move 0 1", "move 1 1"]);
}

#[test]
fn d8_exit_first_then_the_doubles_open_the_blockade() {
    let g = game("online Y:10,10',n,40 R:n,n,n,n turn=Y roll");
    let (g, _) = roll(&g, 5, 5);
    assert_eq!(legal(&g), vec!["exit"]);
    let (g, _) = act(&g, "exit");
    assert_eq!(legal(&g), vec!["move 0 5", "move 1 5"]);
}

// ----- §2.7 bonus moves (D-4) -----------------------------------------------------------------

#[test]
fn r_bonus_and_d22_lost_when_no_piece_can_take_it() {
    // Yellow captures on 13; the only ring piece cannot count 20 past blue's blockade on 22,
    // and the home-column piece may not take it.
    let g = game("online Y:10,h1,n,n B:22,22',n,n R:13,n,n,n turn=Y move=3,6");
    let (g, ev) = act(&g, "move 0 3");
    assert_eq!(
        &ev[ev.len() - 2..],
        &[
            Event::BonusEarned {
                colour: Colour::Yellow,
                amount: 20,
                reason: BonusReason::Capture
            },
            Event::BonusForfeited {
                colour: Colour::Yellow,
                amount: 20
            },
        ]
    );
    assert_eq!(legal(&g), vec!["move 0 6", "move 1 6"]);
}

#[test]
fn r_bonus_chains_a_bonus_capture_earns_another_20() {
    let g = game("online Y:10,n,n,n R:13,n,n,n G:33,n,n,n turn=Y move=3,6");
    let (g, _) = act(&g, "move 0 3");
    let (g, ev) = act(&g, "bonus 0 20");
    assert!(ev.contains(&Event::PieceCaptured {
        colour: Colour::Green,
        piece: 0,
        square: 33,
        by: Colour::Yellow
    }));
    assert!(ev.contains(&Event::BonusEarned {
        colour: Colour::Yellow,
        amount: 20,
        reason: BonusReason::Capture
    }));
    assert_eq!(legal(&g), vec!["bonus 0 20"]);
    let (g, _) = act(&g, "bonus 0 20");
    assert_eq!(legal(&g), vec!["move 0 6"]);
}

#[test]
fn r_bonus_refused_to_a_home_column_piece() {
    let g = game("online Y:10,h1,n,n R:13,n,n,n turn=Y move=3,6");
    let (g, _) = act(&g, "move 0 3");
    assert_eq!(legal(&g), vec!["bonus 0 20"]);
    let e = refuse(&g, "bonus 1 20");
    assert_eq!((e.kind, e.rule), (ErrorKind::Bonus, "R-BONUS"));
    assert_eq!(refuse(&g, "bonus 0 10").rule, "R-BONUS");
}

#[test]
fn r_bonus_goal_earns_10_for_a_ring_piece() {
    let g = game("online Y:h5,20,n,n R:n,n,n,n turn=Y move=3,1");
    let (g, ev) = act(&g, "move 0 3");
    assert!(ev.contains(&Event::BonusEarned {
        colour: Colour::Yellow,
        amount: 10,
        reason: BonusReason::Goal
    }));
    assert_eq!(legal(&g), vec!["bonus 1 10"]);
    let (g, _) = act(&g, "bonus 1 10");
    assert_eq!(
        g.to_string(),
        "online Y:g,30,n,n R:n,n,n,n turn=Y move=3*,1"
    );
}

// ----- §2.8 goal and bounce -----------------------------------------------------------------

#[test]
fn r_goal_needs_the_exact_count_and_r_bounce_runs_back() {
    // h5 + 3 is the goal exactly.
    let g = game("online Y:h5,30,n,n R:n,n,n,n turn=Y move=3,1");
    let (g1, _) = act(&g, "move 0 3");
    assert_eq!(g1.pieces(Colour::Yellow)[0], Location::Goal);
    // h5 + 4 overshoots by one and bounces back to h7; then + 6 bounces to h3.
    let g = game("online Y:h5,n,n,n R:n,n,n,n turn=Y move=4,6");
    assert_eq!(legal(&g), vec!["move 0 4", "move 0 6"]);
    let (g2, ev) = act(&g, "move 0 4");
    assert_eq!(
        ev,
        vec![Event::PieceMoved {
            colour: Colour::Yellow,
            piece: 0,
            from: Location::HomeColumn(5),
            to: Location::HomeColumn(7),
            steps: 4,
            by: MoveKind::Die,
            bounced: true,
            die: None
        }]
    );
    let (g3, _) = act(&g2, "move 0 6");
    assert_eq!(g3.pieces(Colour::Yellow)[0], Location::HomeColumn(3));
}

#[test]
fn r_bounce_never_leaves_the_home_column() {
    // A bonus of 20 from square 64 overshoots the goal by 8 > 7: illegal.
    let g = game("online Y:64,n,n,n R:n,n,n,n turn=Y move=1,2 bonus=20");
    let e = refuse(&g, "bonus 0 20");
    assert_eq!(e.rule, "R-BOUNCE");
}

#[test]
fn d14_must_play_holds_even_when_it_bounces_instead_of_entering_the_goal() {
    // 3 enters the goal, but then the 6 is unplayable; 6 first (bounce to h5) then 3 uses both.
    let g = game("online Y:h5,n,n,n R:n,n,n,n turn=Y move=3,6");
    assert_eq!(legal(&g), vec!["move 0 6"]);
    assert_eq!(refuse(&g, "move 0 3").rule, "D-2");
}

// ----- §2.9 end -------------------------------------------------------------------------------

#[test]
fn r_win_four_pieces_in_the_goal_and_d14_a_win_uses_every_die() {
    let g = game("online Y:g,g,g,h5 R:n,n,n,n turn=Y move=3,4");
    assert_eq!(legal(&g), vec!["move 3 3", "move 3 4"]);
    let (g, ev) = act(&g, "move 3 3");
    assert_eq!(
        ev.last(),
        Some(&Event::GameWon {
            winner: Colour::Yellow,
            reason: WinReason::Goal,
            partner: None
        })
    );
    assert_eq!(g.to_string(), "online Y:g,g,g,g R:n,n,n,n over=Y:goal");
    assert_eq!(refuse(&g, "roll 1,2").kind, ErrorKind::GameOver);
}

// ----- §2.10 clock, §2.11 abandonment ---------------------------------------------------------

#[test]
fn r_clock_timeout_forfeits_dice_bonus_and_reroll() {
    let g = game("online Y:10,n,n,n R:n,n,n,n turn=Y move=3,3 bonus=20 doubles=1");
    let (g, ev) = act(&g, "timeout");
    assert_eq!(
        ev,
        vec![
            Event::TimedOut {
                colour: Colour::Yellow,
                consecutive: 1
            },
            // R-BONUS: the pending bonus ends unplayed, so it is reported as forfeited.
            Event::BonusForfeited {
                colour: Colour::Yellow,
                amount: 20
            },
            Event::TurnPassed {
                from: Colour::Yellow,
                to: Colour::Red
            },
        ]
    );
    assert_eq!(
        g.to_string(),
        "online Y:10,n,n,n R:n,n,n,n turn=R roll timeouts=Y1"
    );
    assert_eq!(g.consecutive_timeouts(Colour::Yellow), 1);
}

#[test]
fn d5_two_players_abandon_ends_with_a_forfeit_winner() {
    let g = game("online Y:10,n,n,n R:n,n,n,n turn=Y move=3,4");
    let (g, ev) = act(&g, "abandon Y");
    assert_eq!(
        ev,
        vec![
            Event::PlayerAbandoned {
                colour: Colour::Yellow
            },
            Event::GameWon {
                winner: Colour::Red,
                reason: WinReason::Forfeit,
                partner: None
            },
        ]
    );
    assert_eq!(g.to_string(), "online Y!:n,n,n,n R:n,n,n,n over=R:forfeit");
}

#[test]
fn r_leave_with_three_players_the_game_goes_on_without_them() {
    let g = game("online Y:10,n,n,n B:22,n,n,n R:n,n,n,n turn=Y move=3,4");
    let (g, ev) = act(&g, "abandon Y");
    assert_eq!(
        ev,
        vec![
            Event::PlayerAbandoned {
                colour: Colour::Yellow
            },
            Event::TurnPassed {
                from: Colour::Yellow,
                to: Colour::Red
            },
        ]
    );
    assert_eq!(
        g.to_string(),
        "online Y!:n,n,n,n B:22,n,n,n R:n,n,n,n turn=R roll"
    );
    let (g, _) = roll(&g, 1, 2); // red has nothing out: blue's turn
    assert_eq!(g.turn(), Colour::Blue);
    let (g, _) = roll(&g, 1, 2);
    let (g, _) = act(&g, "move 0 1");
    let (g, ev) = act(&g, "move 0 2");
    assert_eq!(
        ev.last(),
        Some(&Event::TurnPassed {
            from: Colour::Blue,
            to: Colour::Red
        }),
        "yellow is skipped"
    );
    assert_eq!(refuse(&g, "abandon Y").rule, "R-LEAVE");
}

// ----- decisions added by this project (docs/RULES.md) -------------------------------------

#[test]
fn d17_consecutive_timeouts_reset_when_a_turn_ends_normally() {
    let g = game("online Y:n,n,n,n R:n,n,n,n turn=Y roll timeouts=Y2");
    assert_eq!(g.consecutive_timeouts(Colour::Yellow), 2);
    let (g, _) = roll(&g, 1, 2); // nothing to play: the turn ends normally
    assert_eq!(g.consecutive_timeouts(Colour::Yellow), 0);
    let (g, ev) = act(&g, "timeout"); // red times out: counted for red only
    assert_eq!(
        ev[0],
        Event::TimedOut {
            colour: Colour::Red,
            consecutive: 1
        }
    );
    assert_eq!(
        g.to_string(),
        "online Y:n,n,n,n R:n,n,n,n turn=Y roll timeouts=R1"
    );
}

#[test]
fn d21_a_bonus_move_makes_its_piece_the_last_moved_for_r_third() {
    // Doubles: piece 0 captures on 13, piece 1 takes the 20, then the other 3.
    let g = game("online Y:10,30,n,n R:13,n,n,n turn=Y roll doubles=1");
    let (g, _) = roll(&g, 3, 3);
    let (g, _) = act(&g, "move 0 3");
    let (g, _) = act(&g, "bonus 1 20");
    let (g, _) = act(&g, "move 1 3");
    assert_eq!(
        g.to_string(),
        "online Y:13,53,n,n R:n,n,n,n turn=Y roll doubles=2 last=Y1"
    );
    let (g, ev) = roll(&g, 2, 2);
    assert!(ev.contains(&Event::ThirdDoublesPenalty {
        colour: Colour::Yellow,
        piece: Some(1),
        from: Some(Location::Ring(53)),
        piece_colour: None,
    }));
    assert_eq!(g.to_string(), "online Y:13,n,n,n R:n,n,n,n turn=R roll");
}

// ----- the position reader is strict (rules.md §1, R-THIRD, R-OPEN; NOTATION.md) ----------

#[test]
fn board_1_ring_squares_off_a_colours_path_are_refused_naming_square_and_rule() {
    // Issue 18's reproduction: yellow's path never touches ring squares 1..4 (it turns
    // into h1 after 68), so `Y:2` is not `Y:h2`.
    let e = "online Y:2,n,n,n R:n,n,n,n turn=Y roll"
        .parse::<Game>()
        .expect_err("off the path")
        .to_string();
    assert!(
        e.contains("rules.md §1") && e.contains("ring square 2") && e.contains("yellow"),
        "{e}"
    );
    // The same through the JSON position.
    let mut p = game("online Y:h2,n,n,n R:n,n,n,n turn=Y roll").to_position();
    p.players[0].pieces[0].at = Location::Ring(2);
    let json = serde_json::to_string(&p).unwrap();
    let e = Game::from_json(&json).expect_err("off the path in JSON");
    assert!(
        e.contains("rules.md §1") && e.contains("ring square 2"),
        "{e}"
    );
    // Every colour: exactly the four squares behind its exit are refused.
    for (c, off) in [
        (Colour::Yellow, 1..=4),
        (Colour::Blue, 18..=21),
        (Colour::Red, 35..=38),
        (Colour::Green, 52..=55),
    ] {
        let other = if c == Colour::Yellow { "R" } else { "Y" };
        for sq in 1..=68u8 {
            let text = format!(
                "online {}:{sq},n,n,n {other}:n,n,n,n turn={other} roll",
                c.letter()
            );
            match text.parse::<Game>() {
                Ok(_) => assert!(!off.contains(&sq), "{text} should be refused"),
                Err(e) => {
                    assert!(off.contains(&sq), "{text}: {e}");
                    assert!(e.to_string().contains(&format!("ring square {sq}")), "{e}");
                }
            }
        }
    }
}

#[test]
fn notation_a_position_without_a_stage_is_refused() {
    let e = "online Y:n,n,n,n R:n,n,n,n turn=Y"
        .parse::<Game>()
        .expect_err("no stage")
        .to_string();
    assert!(e.contains("missing stage"), "{e}");
}

#[test]
fn r_third_last_is_refused_without_a_repeat_and_names_a_colour() {
    let e = "online Y:10,n,n,n R:n,n,n,n turn=Y move=3*,4 last=0"
        .parse::<Game>()
        .expect_err("last without doubles")
        .to_string();
    assert!(e.contains("R-THIRD") && e.contains("doubles 0"), "{e}");
    let e = "online Y:10,n,n,n R:n,n,n,n turn=Y roll doubles=1 last=R0"
        .parse::<Game>()
        .expect_err("another colour's piece")
        .to_string();
    assert!(e.contains("R-THIRD") && e.contains("R0"), "{e}");
    // The older `last=0` still reads, as the piece of the colour to act.
    let g = game("online Y:10,n,n,n R:n,n,n,n turn=Y roll doubles=1 last=0");
    assert_eq!(
        g.to_string(),
        "online Y:10,n,n,n R:n,n,n,n turn=Y roll doubles=1 last=Y0"
    );
    // JSON: the same check.
    let mut p = game("online Y:10,n,n,n R:n,n,n,n turn=Y roll doubles=1 last=Y0").to_position();
    p.doubles_in_row = 0;
    let e = Game::try_from(&p)
        .expect_err("JSON last without doubles")
        .to_string();
    assert!(e.contains("R-THIRD"), "{e}");
}

#[test]
fn r_open_open_must_name_the_movers_own_blockade() {
    let e = "online Y:10,n,n,n R:30,30',n,n turn=Y move=2,2 open=R0+R1 doubles=1"
        .parse::<Game>()
        .expect_err("another colour's blockade")
        .to_string();
    assert!(
        e.contains("R-OPEN") && e.contains("R0+R1") && e.contains("yellow"),
        "{e}"
    );
    let mut p =
        game("online Y:10,10',n,n R:30,30',n,n turn=Y move=2,2 open=Y0+Y1 doubles=1").to_position();
    if let parchis_engine::StagePosition::Move { blockades, .. } = &mut p.stage {
        blockades[0].pieces = [
            parchis_engine::PieceId {
                colour: Colour::Red,
                piece: 0,
            },
            parchis_engine::PieceId {
                colour: Colour::Red,
                piece: 1,
            },
        ];
        blockades[0].at = Location::Ring(30);
    }
    let e = Game::try_from(&p)
        .expect_err("JSON open of another colour")
        .to_string();
    assert!(e.contains("R-OPEN"), "{e}");
}

#[test]
fn notation_flags_are_strict() {
    for (text, needle) in [
        (
            "online Y:n,n,n,n R:n,n,n,n turn=Y roll unplayed=0",
            "bad flag",
        ),
        ("online Y:10,n,n,n R:n,n,n,n turn=Y move=3,4 lost=1", "D-30"),
        (
            "online Y:n,n,n,n R:n,n,n,n turn=Y roll lost=1",
            "move= stage",
        ),
    ] {
        let e = text.parse::<Game>().expect_err(text).to_string();
        assert!(e.contains(needle), "{text}: {e}");
    }
}
