//! The standings of a finished or ended game (D-40): every seated colour's place, for
//! ratings and for the championships of seed 004.
//!
//! The ranking, unit by unit (a unit is one colour, or in pair play the two partners,
//! who always share a place):
//!
//! 1. A unit with a player who abandoned or forfeited before finishing is placed last,
//!    even if a bot finished for them; such units tie with each other.
//! 2. Then the finishers: under play-on (`classic`) by their finishing places; otherwise
//!    the winner (or the winning pair) first.
//! 3. Then the others by pieces in the goal (more is better), then by squares still to
//!    travel (fewer is better; a piece in the nest counts one more than a piece on its
//!    exit square: 72). Partners' pieces and squares are added together.
//! 4. Units equal on all of this share a place, and the next place skips ("1, 2, 2, 4").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::board::{Colour, COLOURS, GOAL};
use crate::game::Game;
use crate::rules::GameEnd;
use crate::types::SeatStatus;

/// One seated colour's place in a finished or ended game ([`standings`], D-40).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Standing {
    /// The colour.
    pub colour: Colour,
    /// Its place, 1 = first. Tied units share a place and the next place skips (1, 2, 2,
    /// 4); partners in pair play always share one.
    pub place: u8,
    /// Its unit: the colour's board index (0 yellow … 3 green), or in pair play the team,
    /// `0` for yellow+red and `1` for blue+green.
    pub team: u8,
    /// Counted as abandoned (placed last): named by the caller, or left the game in the
    /// engine before finishing.
    pub abandoned: bool,
    /// The colour's pieces in the goal (0..=4).
    pub pieces_in_goal: u8,
    /// Squares the colour's four pieces still have to travel to the goal (0..=288; a
    /// piece in the nest counts 72, one on its exit square 71).
    pub squares_to_travel: u16,
}

/// The places of every seated colour of `game`, finished or not (a game ended without a
/// winner is ranked by pieces and squares alone), best first, ties in board order.
///
/// `abandoned`: the colours whose player abandoned or forfeited before finishing, as the
/// room knows it; a bot that took over and finished for them does not clear it. Colours
/// the engine already shows as abandoned without a finishing place count too. Colours
/// not seated are ignored.
pub fn standings(game: &Game, abandoned: &[Colour]) -> Vec<Standing> {
    let teams = game.rules.teams;
    let unit_of = |k: usize| if teams { k % 2 } else { k };
    let seated: Vec<usize> = (0..COLOURS)
        .filter(|&k| game.seats[k] != SeatStatus::Empty)
        .collect();
    let left = |k: usize| {
        abandoned.contains(&Colour::ALL[k])
            || (game.seats[k] == SeatStatus::Abandoned && game.places[k] == 0)
    };
    let in_goal = |k: usize| game.pos[k].iter().filter(|&&p| p == GOAL).count() as u8;
    let to_travel = |k: usize| {
        game.pos[k]
            .iter()
            .map(|&p| u16::from(GOAL - p))
            .sum::<u16>()
    };
    let outcome = game.outcome();
    let winner_unit = outcome.map(|o| unit_of(o.winner.index()));
    // The sort key of a unit: smaller is better.
    let key = |unit: usize| -> (bool, u8, u16, u16) {
        let members: Vec<usize> = seated
            .iter()
            .copied()
            .filter(|&k| unit_of(k) == unit)
            .collect();
        if members.iter().any(|&k| left(k)) {
            return (true, 0, 0, 0);
        }
        let finish = match game.rules.game_end {
            GameEnd::PlayOn => members
                .iter()
                .map(|&k| game.places[k])
                .find(|&p| p > 0)
                .unwrap_or(u8::MAX),
            GameEnd::FirstToFinish | GameEnd::FirstTeam => {
                if winner_unit == Some(unit) {
                    1
                } else {
                    u8::MAX
                }
            }
        };
        let goal: u16 = members.iter().map(|&k| u16::from(in_goal(k))).sum();
        let travel: u16 = members.iter().map(|&k| to_travel(k)).sum();
        (false, finish, u16::MAX - goal, travel)
    };
    let mut units: Vec<usize> = seated.iter().map(|&k| unit_of(k)).collect();
    units.sort_unstable();
    units.dedup();
    let keys: Vec<(usize, (bool, u8, u16, u16))> = units.iter().map(|&u| (u, key(u))).collect();
    let place_of = |unit: usize| -> u8 {
        let mine = keys.iter().find(|(u, _)| *u == unit).map(|(_, k)| *k);
        1 + keys
            .iter()
            .filter(|(_, k)| mine.is_some_and(|m| *k < m))
            .count() as u8
    };
    let mut out: Vec<Standing> = seated
        .iter()
        .map(|&k| Standing {
            colour: Colour::ALL[k],
            place: place_of(unit_of(k)),
            team: unit_of(k) as u8,
            abandoned: left(k),
            pieces_in_goal: in_goal(k),
            squares_to_travel: to_travel(k),
        })
        .collect();
    out.sort_by_key(|s| (s.place, s.colour));
    out
}
