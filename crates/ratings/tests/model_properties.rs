//! Properties of the Weng-Lin updates (issue 26): the winner of a two-player game never
//! loses rating, partners move together, σ never grows and shrinks over games.

use parchis_ratings::{rate, Rating};
use proptest::prelude::*;

fn rating() -> impl Strategy<Value = Rating> {
    (0.0f64..50.0, 0.5f64..(25.0 / 3.0)).prop_map(|(mu, sigma)| Rating { mu, sigma })
}

proptest! {
    #[test]
    fn the_winner_of_two_never_loses_and_the_loser_never_gains(a in rating(), b in rating()) {
        let new = rate(&[(vec![a], 1), (vec![b], 2)]).unwrap();
        prop_assert!(new[0][0].mu >= a.mu, "winner {:?} -> {:?}", a, new[0][0]);
        prop_assert!(new[1][0].mu <= b.mu, "loser {:?} -> {:?}", b, new[1][0]);
    }

    #[test]
    fn partners_move_in_the_same_direction(
        a in rating(), b in rating(), c in rating(), d in rating(), first in 1u8..=2,
    ) {
        let new = rate(&[(vec![a, c], first), (vec![b, d], 3 - first)]).unwrap();
        for (before, after) in [(&[a, c], &new[0]), (&[b, d], &new[1])] {
            let up0 = after[0].mu - before[0].mu;
            let up1 = after[1].mu - before[1].mu;
            prop_assert!(up0 * up1 >= 0.0, "partners moved apart: {up0} and {up1}");
        }
        // The winning team goes up, the losing one down.
        let w = usize::from(first - 1);
        prop_assert!(new[w][0].mu >= [a, b][w].mu);
        prop_assert!(new[1 - w][0].mu <= [a, b][1 - w].mu);
    }

    #[test]
    fn sigma_never_grows(ratings in proptest::collection::vec(rating(), 2..=4), seed in any::<u64>()) {
        let n = ratings.len();
        // Places: a permutation-ish assignment with possible ties, all within 1..=n.
        let units: Vec<(Vec<Rating>, u8)> = ratings
            .iter()
            .enumerate()
            .map(|(i, r)| (vec![*r], ((seed >> (8 * i)) % n as u64) as u8 + 1))
            .collect();
        let new = rate(&units).unwrap();
        for (i, r) in ratings.iter().enumerate() {
            prop_assert!(new[i][0].sigma <= r.sigma + 1e-12);
            prop_assert!(new[i][0].mu.is_finite() && new[i][0].sigma > 0.0);
        }
    }
}

#[test]
fn sigma_shrinks_game_after_game() {
    let (mut a, mut b) = (Rating::INITIAL, Rating::INITIAL);
    let mut sigmas = vec![a.sigma];
    for game in 0..10 {
        let places = if game % 2 == 0 { (1, 2) } else { (2, 1) };
        let new = rate(&[(vec![a], places.0), (vec![b], places.1)]).unwrap();
        (a, b) = (new[0][0], new[1][0]);
        sigmas.push(a.sigma);
    }
    assert!(sigmas.windows(2).all(|w| w[1] < w[0]), "{sigmas:?}");
    assert!(sigmas[10] < 0.8 * sigmas[0]);
}

#[test]
fn a_draw_between_equals_changes_no_mu() {
    let new = rate(&[(vec![Rating::INITIAL], 1), (vec![Rating::INITIAL], 1)]).unwrap();
    assert!((new[0][0].mu - 25.0).abs() < 1e-9);
    assert!((new[1][0].mu - 25.0).abs() < 1e-9);
    assert!(new[0][0].sigma < Rating::INITIAL.sigma);
}
