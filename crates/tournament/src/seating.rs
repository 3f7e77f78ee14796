//! Which colour each player of a match's entrants takes.

use crate::ids::EntrantId;
use parchis_engine::Colour;
use serde::{Deserialize, Serialize};

/// One reserved seat of a match: the colour, the entrant, and which of its players
/// (index into the entrant's players).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seat {
    /// The colour.
    pub colour: Colour,
    /// The entrant.
    pub entrant: EntrantId,
    /// Index of the player within the entrant (0 the registrant, 1 the partner).
    pub player: u8,
}

/// The seats of a table whose entrants are `entrants` (best seed first).
///
/// Teams (seed 004: "los compañeros se sitúan en extremos opuestos del tablero, con lo
/// que una pareja utilizará el azul y el verde y la otra el rojo y el amarillo"): the
/// first entrant takes blue (its registrant) and green (its partner), the second red
/// and yellow. Individual tables: two players sit opposite (yellow, red), three take
/// yellow, blue, red, four every colour in board order, the best seed yellow.
pub fn seats(entrants: &[EntrantId], teams: bool) -> Vec<Seat> {
    if teams {
        let colours = [[Colour::Blue, Colour::Green], [Colour::Red, Colour::Yellow]];
        return entrants
            .iter()
            .zip(colours)
            .flat_map(|(&entrant, pair)| {
                (0u8..).zip(pair).map(move |(player, colour)| Seat {
                    colour,
                    entrant,
                    player,
                })
            })
            .collect();
    }
    let colours: &[Colour] = match entrants.len() {
        2 => &[Colour::Yellow, Colour::Red],
        3 => &[Colour::Yellow, Colour::Blue, Colour::Red],
        _ => &Colour::ALL,
    };
    entrants
        .iter()
        .zip(colours)
        .map(|(&entrant, &colour)| Seat {
            colour,
            entrant,
            player: 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 004: "una pareja utilizará el azul y el verde y la otra el rojo y el
    /// amarillo" — partners opposite, blue with green, red with yellow.
    #[test]
    fn pairs_sit_partners_opposite_blue_with_green_red_with_yellow() {
        let s = seats(&[EntrantId(3), EntrantId(9)], true);
        let of = |c| {
            s.iter()
                .find(|x| x.colour == c)
                .map(|x| (x.entrant, x.player))
        };
        assert_eq!(s.len(), 4);
        assert_eq!(of(Colour::Blue), Some((EntrantId(3), 0)));
        assert_eq!(of(Colour::Green), Some((EntrantId(3), 1)));
        assert_eq!(of(Colour::Red), Some((EntrantId(9), 0)));
        assert_eq!(of(Colour::Yellow), Some((EntrantId(9), 1)));
        // The engine's teams agree: partners are on one team.
        for pair in [[Colour::Blue, Colour::Green], [Colour::Red, Colour::Yellow]] {
            assert_eq!(
                parchis_protocol::team_of(pair[0]),
                parchis_protocol::team_of(pair[1])
            );
        }
    }

    #[test]
    fn two_individual_players_sit_opposite() {
        let s = seats(&[EntrantId(1), EntrantId(2)], false);
        let colours: Vec<Colour> = s.iter().map(|x| x.colour).collect();
        assert_eq!(colours, vec![Colour::Yellow, Colour::Red]);
    }
}
