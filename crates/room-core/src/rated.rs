//! The rated result of a rated room's game (issue 26): the places of the engine's
//! standings (D-40) grouped into units, each colour replaced by its seat's account, in the
//! rule set's pool. Carried by the game's end write ([`parchis_records::GameEnd::rated`]),
//! so the store updates the ratings in the transaction that ends the game.

use crate::seat::Seat;
use parchis_engine::{standings, Colour, Game, RuleSet};
use parchis_ratings::{units, Pool};
use parchis_records::{RatedGame, RatedPlayer};

/// The rated result of `game` (ended: a winner, or every other unit gone) played under
/// `rules` by `seats`. A colour whose seat abandoned or forfeited is placed last (D-40),
/// even if the engine finished it later. `None` when a seated colour has no account (a
/// rated room seats logged-in players only, so only a room restored from older data) or
/// fewer than two units played: nothing is rated then.
pub fn rated_game(rules: &RuleSet, game: &Game, seats: &[Seat]) -> Option<RatedGame> {
    let abandoned: Vec<Colour> = seats
        .iter()
        .filter(|s| s.abandoned)
        .map(|s| s.colour)
        .collect();
    let units = units(&standings(game, &abandoned));
    if units.len() < 2 {
        return None;
    }
    let mut players = Vec::new();
    for (i, unit) in units.iter().enumerate() {
        for colour in &unit.colours {
            let account_id = seats.iter().find(|s| s.colour == *colour)?.account?;
            players.push(RatedPlayer {
                account_id,
                unit: i as u8,
                place: unit.place,
            });
        }
    }
    Some(RatedGame {
        pool: Pool::of(rules).as_str().to_owned(),
        players,
    })
}

impl crate::core::Core {
    /// The rated result of this room's ended `game`: `None` unless the room is rated.
    pub(crate) fn rated_result(&self, game: &Game) -> Option<RatedGame> {
        if !self.settings.rated {
            return None;
        }
        rated_game(&self.rules, game, &self.seats)
    }
}
