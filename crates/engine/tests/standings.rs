//! D-40: the standings of a finished or ended game (docs/RULES.md), used by ratings and
//! championships.

mod common;

use common::game;
use parchis_engine::{standings, Action, Colour, Game, Standing};
use Colour::{Blue as B, Green as G, Red as R, Yellow as Y};

/// `(colour, place)` in the order returned.
fn places(g: &Game, abandoned: &[Colour]) -> Vec<(Colour, u8)> {
    standings(g, abandoned)
        .iter()
        .map(|s| (s.colour, s.place))
        .collect()
}

#[test]
fn d40_online_others_by_pieces_in_goal_then_squares_to_travel() {
    // Green and blue have two pieces home each; green has 68 squares left, blue 87.
    let g = game("online Y:g,g,g,g B:g,g,10,n R:g,h3,n,n G:g,g,20,30 over=Y:goal");
    assert_eq!(places(&g, &[]), vec![(Y, 1), (G, 2), (B, 3), (R, 4)]);
    let all = standings(&g, &[]);
    let blue: &Standing = all.iter().find(|s| s.colour == B).unwrap();
    assert_eq!(
        (
            blue.pieces_in_goal,
            blue.squares_to_travel,
            blue.team,
            blue.abandoned
        ),
        (2, 15 + 72, 1, false)
    );
    let green = all.iter().find(|s| s.colour == G).unwrap();
    assert_eq!(
        (green.pieces_in_goal, green.squares_to_travel),
        (2, 39 + 29)
    );
    let red = all.iter().find(|s| s.colour == R).unwrap();
    assert_eq!(
        (red.pieces_in_goal, red.squares_to_travel),
        (1, 5 + 72 + 72)
    );
}

#[test]
fn d40_ties_share_the_place_and_the_next_place_skips() {
    let g = game("online Y:g,g,g,g B:g,g,n,n R:g,n,n,n G:g,g,n,n over=Y:goal");
    assert_eq!(places(&g, &[]), vec![(Y, 1), (B, 2), (G, 2), (R, 4)]);
}

#[test]
fn d40_a_player_who_abandoned_is_last_even_if_a_bot_won_for_them() {
    let g = game("online Y:g,g,g,g B:g,g,10,n R:g,h3,n,n G:g,g,20,30 over=Y:goal");
    assert_eq!(places(&g, &[Y]), vec![(G, 1), (B, 2), (R, 3), (Y, 4)]);
    // Two who left share the last place, whatever their pieces.
    assert_eq!(places(&g, &[Y, R]), vec![(G, 1), (B, 2), (Y, 3), (R, 3)]);
    let yellow = standings(&g, &[Y])[3];
    assert!(yellow.abandoned);
}

#[test]
fn d40_the_engine_s_abandoned_seat_counts_too() {
    // Two players: yellow abandons, red wins by forfeit (R-LEAVE, D-5).
    let g = game("online Y:10,n,n,n R:n,n,n,n turn=Y roll");
    let (g, _) = g.apply(&Action::Abandon { colour: Y }).unwrap();
    assert!(g.outcome().is_some());
    assert_eq!(places(&g, &[]), vec![(R, 1), (Y, 2)]);
}

#[test]
fn d40_a_game_ended_without_a_winner_is_ranked_by_pieces_and_squares() {
    // Yellow's piece on 10 has 66 squares to go, red's on 50 has 60.
    let g = game("online Y:10,n,n,n R:50,n,n,n turn=Y roll");
    assert_eq!(places(&g, &[]), vec![(R, 1), (Y, 2)]);
    let g = game("online Y:n,n,n,n R:n,n,n,n turn=Y roll");
    assert_eq!(places(&g, &[]), vec![(Y, 1), (R, 1)]);
}

#[test]
fn d40_play_on_keeps_the_finishing_places() {
    // Yellow finished first; blue and red left; green wins by forfeit but is second.
    let g = game("classic Y:g,g,g,g B!:n,n,n,n R!:n,n,n,n G:10,n,n,n over=G:forfeit places=Y1");
    assert_eq!(places(&g, &[]), vec![(Y, 1), (G, 2), (B, 3), (R, 3)]);
}

#[test]
fn d40_pairs_partners_are_one_team() {
    // Places count units: the losing pair is second.
    let g = game("pairs Y:g,g,g,g B:g,g,g,10 R:g,g,g,g G:n,n,n,n over=Y+R:goal places=Y1,R2");
    assert_eq!(places(&g, &[]), vec![(Y, 1), (R, 1), (B, 2), (G, 2)]);
    let teams: Vec<(Colour, u8)> = standings(&g, &[])
        .iter()
        .map(|s| (s.colour, s.team))
        .collect();
    assert_eq!(teams, vec![(Y, 0), (R, 0), (B, 1), (G, 1)]);
    // A partner who left places the whole team last.
    assert_eq!(places(&g, &[R]), vec![(B, 1), (G, 1), (Y, 2), (R, 2)]);
}

#[test]
fn d40_pairs_without_a_winner_add_the_partners_pieces() {
    // Yellow+red: 4 + 1 pieces home; blue+green: 3 + 1.
    let g = game("pairs Y:g,g,g,g B:g,g,g,30 R:g,31,n,n G:g,n,n,n turn=R roll places=Y1");
    assert_eq!(places(&g, &[]), vec![(Y, 1), (R, 1), (B, 2), (G, 2)]);
}
