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

/// The display rating a seat of `account` shows in a room of `rules`: its entry of
/// `ratings` (display ratings by pool name) for the rule set's pool; `None` for a guest
/// or an account with no rating in that pool.
pub(crate) fn seat_rating(
    rules: &RuleSet,
    account: Option<uuid::Uuid>,
    ratings: &std::collections::BTreeMap<String, i64>,
) -> Option<i64> {
    account?;
    pool_rating(rules, ratings)
}

/// The entry of `ratings` (display ratings by pool name) for the pool of `rules`, `None`
/// when it has none there.
pub fn pool_rating(
    rules: &RuleSet,
    ratings: &std::collections::BTreeMap<String, i64>,
) -> Option<i64> {
    ratings.get(Pool::of(rules).as_str()).copied()
}

/// An account's display ratings by pool name from its stored ratings (`ratings_of`):
/// `1000 + 40·(μ − 3σ)`, as `GET /api/players/{name}` shows them (issue 26).
pub fn display_ratings(
    records: &[parchis_records::RatingRecord],
) -> std::collections::BTreeMap<String, i64> {
    records
        .iter()
        .map(|r| {
            let rating = parchis_ratings::Rating {
                mu: r.mu,
                sigma: r.sigma,
            };
            (r.pool.clone(), i64::from(rating.display()))
        })
        .collect()
}

impl crate::core::Core {
    /// Sets the rating every seat of `account` shows to its entry of `ratings` (display
    /// ratings by pool name, [`display_ratings`]) for this room's pool, `None` when it has
    /// none there: used when the seats' ratings are read again (a restored room, a
    /// rematch; issue 26). Announces nothing: views read the seats.
    pub fn set_account_ratings(
        &mut self,
        account: uuid::Uuid,
        ratings: &std::collections::BTreeMap<String, i64>,
    ) {
        let rating = seat_rating(&self.rules, Some(account), ratings);
        for seat in self.seats.iter_mut().filter(|s| s.account == Some(account)) {
            seat.rating = rating;
        }
    }

    /// The ratings of `account` changed elsewhere (a rated game it played in another
    /// room ended, an administrator reset them; issue 26): `ratings` are its display
    /// ratings by pool name read again ([`display_ratings`]). Each seat it holds here
    /// whose rating in this room's pool differs shows the new one from now on, told to
    /// every connection ([`parchis_protocol::ServerMessage::Rating`]), and the listing is
    /// published again. Nothing happens in a room where the account holds no seat, nor
    /// where its rating is unchanged (the room whose game just ended already shows it).
    pub fn rerate_account(
        &mut self,
        account: uuid::Uuid,
        ratings: &std::collections::BTreeMap<String, i64>,
    ) -> Vec<crate::core::Effect> {
        let rating = seat_rating(&self.rules, Some(account), ratings);
        let mut changed = Vec::new();
        for seat in &mut self.seats {
            if seat.account == Some(account) && seat.rating != rating {
                seat.rating = rating;
                changed.push(seat.colour);
            }
        }
        for colour in changed {
            let msg = parchis_protocol::ServerMessage::Rating {
                room: self.code.clone(),
                colour,
                rating,
            };
            self.emit(crate::core::Effect::Broadcast {
                frame: crate::encode(&msg),
            });
            self.emit(crate::core::Effect::Publish);
        }
        std::mem::take(&mut self.out)
    }

    /// The accounts seated in this room, each once, in seat order.
    pub fn seated_accounts(&self) -> Vec<uuid::Uuid> {
        let mut accounts: Vec<uuid::Uuid> = Vec::new();
        for account in self.seats.iter().filter_map(|s| s.account) {
            if !accounts.contains(&account) {
                accounts.push(account);
            }
        }
        accounts
    }

    /// The rated result of this room's ended `game`: `None` unless the room is rated.
    pub(crate) fn rated_result(&self, game: &Game) -> Option<RatedGame> {
        if !self.settings.rated {
            return None;
        }
        rated_game(&self.rules, game, &self.seats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parchis_engine::Action;

    fn seat(id: u64, colour: Colour, account: Option<uuid::Uuid>, abandoned: bool) -> Seat {
        Seat {
            id,
            colour,
            name: format!("p{id}"),
            token_hash: String::new(),
            creator: id == 0,
            joined_at_ms: 0,
            conn: None,
            reattached: false,
            grace_until: None,
            abandoned,
            bot: None,
            client_seed: None,
            stale_seqs: false,
            rating: None,
            account,
        }
    }

    fn online() -> RuleSet {
        RuleSet::from_name("online").expect("online")
    }

    #[test]
    fn a_two_player_game_ended_by_abandonment_rates_the_leaver_second() {
        let (y, r) = (uuid::Uuid::from_u128(1), uuid::Uuid::from_u128(2));
        let game =
            Game::new(online(), &[Colour::Yellow, Colour::Red], Colour::Yellow).expect("game");
        let (game, _) = game
            .apply(&Action::Abandon {
                colour: Colour::Yellow,
            })
            .expect("abandon");
        let seats = [
            seat(0, Colour::Yellow, Some(y), true),
            seat(1, Colour::Red, Some(r), false),
        ];
        let rated = rated_game(&online(), &game, &seats).expect("rated");
        assert_eq!(rated.pool, "online");
        assert_eq!(
            rated.players,
            vec![
                RatedPlayer {
                    account_id: r,
                    unit: 0,
                    place: 1
                },
                RatedPlayer {
                    account_id: y,
                    unit: 1,
                    place: 2
                },
            ]
        );
    }

    #[test]
    fn a_seat_marked_abandoned_is_last_and_a_guest_seat_rates_nothing() {
        let ids: Vec<uuid::Uuid> = (1..=3).map(uuid::Uuid::from_u128).collect();
        let colours = [Colour::Yellow, Colour::Blue, Colour::Red];
        let game = Game::new(online(), &colours, Colour::Yellow).expect("game");
        // Blue is marked abandoned by the room (say a bot played on for it): last alone.
        let seats: Vec<Seat> = (0..3)
            .map(|k| seat(k as u64, colours[k], Some(ids[k]), k == 1))
            .collect();
        let rated = rated_game(&online(), &game, &seats).expect("rated");
        let blue = rated
            .players
            .iter()
            .find(|p| p.account_id == ids[1])
            .expect("blue");
        assert_eq!(blue.place, 3);
        assert!(rated
            .players
            .iter()
            .filter(|p| p.account_id != ids[1])
            .all(|p| p.place == 1));
        let mut guest = seats;
        guest[2].account = None;
        assert_eq!(rated_game(&online(), &game, &guest), None);
    }
}
