//! The seeding at the close: by rating, then at random (issue 27: "seeding by rating,
//! then at random"), the randomness from the tournament's seed.

use crate::ids::{EntrantId, Player};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// An entrant's rating for the seeding: the mean of its players' ratings when every
/// player is rated, `None` (seeded after every rated entrant) otherwise. Bots are
/// unrated.
pub fn entrant_rating(players: &[Player]) -> Option<f64> {
    let ratings: Option<Vec<f64>> = players.iter().map(|p| p.rating).collect();
    let ratings = ratings?;
    if ratings.is_empty() {
        return None;
    }
    Some(ratings.iter().sum::<f64>() / ratings.len() as f64)
}

/// The seed order (best first) of `entrants` (id, rating): a shuffle by a ChaCha20 stream
/// from `seed`, then a stable sort by rating, highest first, unrated last. Entrants of
/// equal rating (and all unrated ones) are thus in random order, the same for the same
/// seed and the same entrants in the same order.
pub fn seed_order(entrants: &[(EntrantId, Option<f64>)], seed: [u8; 32]) -> Vec<EntrantId> {
    let mut list = entrants.to_vec();
    list.shuffle(&mut ChaCha20Rng::from_seed(seed));
    list.sort_by(|a, b| match (a.1, b.1) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    list.into_iter().map(|(id, _)| id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rated_first_by_rating_then_unrated_in_a_seeded_random_order() {
        let e = |i, r| (EntrantId(i), r);
        let list = [
            e(1, None),
            e(2, Some(10.0)),
            e(3, None),
            e(4, Some(30.0)),
            e(5, None),
            e(6, Some(20.0)),
        ];
        let a = seed_order(&list, [1; 32]);
        assert_eq!(&a[..3], &[EntrantId(4), EntrantId(6), EntrantId(2)]);
        assert_eq!(a, seed_order(&list, [1; 32]));
        // Some seed orders the unrated differently (the tie-break is random).
        let tails: std::collections::BTreeSet<Vec<EntrantId>> = (0..20u8)
            .map(|s| seed_order(&list, [s; 32])[3..].to_vec())
            .collect();
        assert!(tails.len() > 1);
    }

    #[test]
    fn a_team_is_rated_by_its_mean_and_unrated_with_an_unrated_player() {
        let p = |r| Player {
            account: None,
            name: String::new(),
            rating: r,
            bot: None,
        };
        assert_eq!(entrant_rating(&[p(Some(10.0)), p(Some(20.0))]), Some(15.0));
        assert_eq!(entrant_rating(&[p(Some(10.0)), p(None)]), None);
    }
}
