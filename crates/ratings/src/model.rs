//! Weng-Lin (OpenSkill) ratings: μ (skill) and σ (uncertainty) per player and pool,
//! updated from a game's places with the `skillratings` crate.
//!
//! * Every player starts at μ = 25, σ = 25/3 ([`Rating::INITIAL`]).
//! * A game with 2 to 4 units (players, or in `pairs` the two partners as one team) is
//!   rated by the Bradley-Terry full-pairing model of Weng and Lin (2011),
//!   `skillratings::weng_lin::weng_lin_multi_team`, with the crate's default constants
//!   (β = 25/6, the σ floor 10⁻⁶). Ties (a shared place) count as draws.
//! * The leaderboard orders by the conservative rating μ − 3σ ([`Rating::conservative`]),
//!   listing only players with at least [`MIN_LEADERBOARD_GAMES`] rated games.
//! * Players see [`Rating::display`]: `1000 + 40·(μ − 3σ)`, rounded, never below 0 (a new
//!   player shows 1000).

use parchis_engine::{Colour, Standing};
use serde::{Deserialize, Serialize};
use skillratings::weng_lin::{weng_lin_multi_team, WengLinConfig, WengLinRating};
use skillratings::MultiTeamOutcome;

/// Fewest rated games a player needs in a pool to appear on its leaderboard.
pub const MIN_LEADERBOARD_GAMES: u32 = 5;

/// Most units (players or teams) in one rated game: four seats.
pub const MAX_UNITS: usize = 4;
/// Most players in one unit: a `pairs` team.
pub const MAX_UNIT_SIZE: usize = 2;
/// Largest |μ| accepted as input (a stored rating far outside what games produce is
/// corrupt, and would make the arithmetic meaningless).
pub const MAX_ABS_MU: f64 = 1000.0;
/// Largest σ accepted as input.
pub const MAX_SIGMA: f64 = 100.0;

/// One player's rating in one pool.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// The skill estimate μ (25 for a new player).
    pub mu: f64,
    /// The uncertainty σ of μ (25/3 for a new player); shrinks with games.
    pub sigma: f64,
}

impl Rating {
    /// A new player's rating: μ = 25, σ = 25/3.
    pub const INITIAL: Rating = Rating {
        mu: 25.0,
        sigma: 25.0 / 3.0,
    };

    /// The conservative rating μ − 3σ that orders the leaderboard: the skill the player
    /// has with about 99.7 % confidence (0 for a new player).
    pub fn conservative(&self) -> f64 {
        self.mu - 3.0 * self.sigma
    }

    /// The integer shown to players: `1000 + 40·(μ − 3σ)`, rounded, at least 0 (1000 for
    /// a new player; about +40 per point of conservative rating).
    pub fn display(&self) -> i32 {
        let shown = (1000.0 + 40.0 * self.conservative()).round();
        if shown.is_finite() {
            shown.clamp(0.0, f64::from(i32::MAX)) as i32
        } else {
            0
        }
    }

    fn check(&self) -> Result<(), RateError> {
        let ok = self.mu.is_finite()
            && self.mu.abs() <= MAX_ABS_MU
            && self.sigma.is_finite()
            && self.sigma > 0.0
            && self.sigma <= MAX_SIGMA;
        if ok {
            Ok(())
        } else {
            Err(RateError::BadRating {
                mu: self.mu,
                sigma: self.sigma,
            })
        }
    }
}

impl Default for Rating {
    fn default() -> Rating {
        Rating::INITIAL
    }
}

/// Whether a player with `games` rated games in a pool is listed on its leaderboard.
pub fn on_leaderboard(games: u32) -> bool {
    games >= MIN_LEADERBOARD_GAMES
}

/// Why a game cannot be rated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RateError {
    /// Fewer than 2 or more than [`MAX_UNITS`] units.
    #[error("a rated game has 2 to {MAX_UNITS} players or teams, got {0}")]
    Units(usize),
    /// A unit with no player, or more than [`MAX_UNIT_SIZE`].
    #[error("a rated team has 1 to {MAX_UNIT_SIZE} players, got {0}")]
    UnitSize(usize),
    /// A place of 0 or beyond the number of units.
    #[error("place {place} is not between 1 and the {units} units")]
    Place {
        /// The place given.
        place: u8,
        /// How many units the game has.
        units: usize,
    },
    /// A rating that is not finite, or out of range.
    #[error("rating mu={mu} sigma={sigma} is out of range")]
    BadRating {
        /// The μ given.
        mu: f64,
        /// The σ given.
        sigma: f64,
    },
}

/// The new ratings after one game: `units[i]` is a unit's players' ratings before the
/// game with its place (1 = first; equal places are a draw between those units), and the
/// answer's `[i][j]` is the new rating of player `j` of unit `i`.
///
/// Guarantees (tested): in a game of two units, the winner's μ does not go down nor the
/// loser's up; partners move in the same direction; σ never grows.
///
/// # Errors
/// [`RateError`] for fewer than 2 or more than 4 units, an empty or over-full unit, a
/// place out of range, or a rating that is not finite or out of range.
pub fn rate(units: &[(Vec<Rating>, u8)]) -> Result<Vec<Vec<Rating>>, RateError> {
    if !(2..=MAX_UNITS).contains(&units.len()) {
        return Err(RateError::Units(units.len()));
    }
    for (players, place) in units {
        if !(1..=MAX_UNIT_SIZE).contains(&players.len()) {
            return Err(RateError::UnitSize(players.len()));
        }
        if *place == 0 || usize::from(*place) > units.len() {
            return Err(RateError::Place {
                place: *place,
                units: units.len(),
            });
        }
        for r in players {
            r.check()?;
        }
    }
    let teams: Vec<Vec<WengLinRating>> = units
        .iter()
        .map(|(players, _)| {
            players
                .iter()
                .map(|r| WengLinRating {
                    rating: r.mu,
                    uncertainty: r.sigma,
                })
                .collect()
        })
        .collect();
    let ranked: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(units)
        .map(|(team, (_, place))| (team.as_slice(), MultiTeamOutcome::new(usize::from(*place))))
        .collect();
    let new = weng_lin_multi_team(&ranked, &WengLinConfig::new());
    Ok(new
        .into_iter()
        .map(|team| {
            team.into_iter()
                .map(|r| Rating {
                    mu: r.rating,
                    sigma: r.uncertainty,
                })
                .collect()
        })
        .collect())
}

/// One rated unit of a game: its colours (one, or two partners in `pairs`) and its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The colours of the unit, in board order.
    pub colours: Vec<Colour>,
    /// The unit's place (D-40), 1 = first.
    pub place: u8,
}

/// The engine's standings (D-40) grouped into rated units, by `team`, best place first:
/// what [`rate`] takes once each colour is replaced by its player's rating.
pub fn units(standings: &[Standing]) -> Vec<Unit> {
    let mut out: Vec<(u8, Unit)> = Vec::new();
    for s in standings {
        match out.iter_mut().find(|(team, _)| *team == s.team) {
            Some((_, unit)) => unit.colours.push(s.colour),
            None => out.push((
                s.team,
                Unit {
                    colours: vec![s.colour],
                    place: s.place,
                },
            )),
        }
    }
    out.sort_by_key(|(team, unit)| (unit.place, *team));
    for (_, unit) in &mut out {
        unit.colours.sort();
    }
    out.into_iter().map(|(_, unit)| unit).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_player_shows_1000_and_is_not_listed_before_five_games() {
        assert_eq!(Rating::INITIAL.display(), 1000);
        assert!(Rating::INITIAL.conservative().abs() < 1e-9);
        assert_eq!(
            Rating {
                mu: 30.0,
                sigma: 2.0
            }
            .display(),
            1000 + 40 * 24
        );
        assert_eq!(
            Rating {
                mu: -100.0,
                sigma: 8.0
            }
            .display(),
            0
        );
        assert!(!on_leaderboard(4));
        assert!(on_leaderboard(5));
    }

    #[test]
    fn bad_input_is_refused_with_its_reason() {
        let one = vec![Rating::INITIAL];
        assert_eq!(rate(&[(one.clone(), 1)]), Err(RateError::Units(1)));
        assert_eq!(
            rate(&[(one.clone(), 1), (vec![], 2)]),
            Err(RateError::UnitSize(0))
        );
        assert_eq!(
            rate(&[(one.clone(), 1), (one.clone(), 3)]),
            Err(RateError::Place { place: 3, units: 2 })
        );
        let nan = vec![Rating {
            mu: f64::NAN,
            sigma: 1.0,
        }];
        assert!(matches!(
            rate(&[(one, 1), (nan, 2)]),
            Err(RateError::BadRating { .. })
        ));
    }

    #[test]
    fn four_players_by_places_match_the_crate_s_numbers() {
        let units: Vec<(Vec<Rating>, u8)> = (1..=4).map(|p| (vec![Rating::INITIAL], p)).collect();
        let new = rate(&units).unwrap();
        let mus: Vec<f64> = new.iter().map(|u| u[0].mu).collect();
        assert!(
            mus[0] > mus[1] && mus[1] > mus[2] && mus[2] > mus[3],
            "{mus:?}"
        );
        // Symmetric around 25 for equal players.
        assert!((mus[0] + mus[3] - 50.0).abs() < 1e-9);
        assert!((mus[1] + mus[2] - 50.0).abs() < 1e-9);
    }
}

#[cfg(test)]
mod unit_tests {
    use super::*;
    use parchis_engine::{standings, Game};
    use Colour::{Blue as B, Green as G, Red as R, Yellow as Y};

    fn game(s: &str) -> Game {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn pairs_partners_are_one_unit_and_online_players_four() {
        let g = game("pairs Y:g,g,g,g B:g,g,g,10 R:g,g,g,g G:n,n,n,n over=Y+R:goal places=Y1,R2");
        assert_eq!(
            units(&standings(&g, &[])),
            vec![
                Unit {
                    colours: vec![Y, R],
                    place: 1
                },
                Unit {
                    colours: vec![B, G],
                    place: 2
                },
            ]
        );
        let g = game("online Y:g,g,g,g B:g,g,n,n R:g,n,n,n G:g,g,n,n over=Y:goal");
        let u = units(&standings(&g, &[]));
        let places: Vec<(Vec<Colour>, u8)> = u.into_iter().map(|u| (u.colours, u.place)).collect();
        assert_eq!(
            places,
            vec![(vec![Y], 1), (vec![B], 2), (vec![G], 2), (vec![R], 4)]
        );
    }
}
