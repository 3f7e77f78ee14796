//! Swiss pairings and standings: two-entrant matches paired by score, no repeat
//! opponents while avoidable, at most one bye per entrant.
//!
//! Round 1 pairs the top half of the seeds with the bottom half (1 v n/2 + 1, …); later
//! rounds follow the Monrad rule: entrants in order of score (then seed), the first
//! unpaired one meets the next one it has not met, with backtracking when that leaves
//! the rest unpairable. A win and a bye are worth one point.

use crate::ids::EntrantId;
use std::collections::{BTreeMap, BTreeSet};

/// Steps the no-repeat search may take per round before it gives up and allows repeats
/// (bounds the cost of a hostile or unlucky history: 256 entrants at most).
pub const SEARCH_BUDGET: u32 = 200_000;

/// The swiss record of a tournament so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Points: one per win and per bye.
    pub score: BTreeMap<EntrantId, u32>,
    /// Opponents met, each entrant's list.
    pub opponents: BTreeMap<EntrantId, Vec<EntrantId>>,
    /// Byes received.
    pub byes: BTreeMap<EntrantId, u32>,
}

impl Tally {
    /// Counts a decided match between `a` and `b` (a double forfeit has no winner).
    pub fn add_match(&mut self, a: EntrantId, b: EntrantId, winner: Option<EntrantId>) {
        self.opponents.entry(a).or_default().push(b);
        self.opponents.entry(b).or_default().push(a);
        if let Some(w) = winner {
            *self.score.entry(w).or_default() += 1;
        }
    }

    /// Counts a bye (one point).
    pub fn add_bye(&mut self, e: EntrantId) {
        *self.byes.entry(e).or_default() += 1;
        *self.score.entry(e).or_default() += 1;
    }

    /// `e`'s points.
    pub fn score_of(&self, e: EntrantId) -> u32 {
        self.score.get(&e).copied().unwrap_or(0)
    }

    /// Whether `a` and `b` have met.
    pub fn met(&self, a: EntrantId, b: EntrantId) -> bool {
        self.opponents.get(&a).is_some_and(|o| o.contains(&b))
    }

    /// The Buchholz tie-break: the sum of the points of every opponent met.
    pub fn buchholz(&self, e: EntrantId) -> u32 {
        self.opponents
            .get(&e)
            .map(|o| o.iter().map(|&x| self.score_of(x)).sum())
            .unwrap_or(0)
    }

    /// `active` (seed order, best first) ranked by points, then Buchholz, then seed.
    pub fn standings(&self, active: &[EntrantId]) -> Vec<EntrantId> {
        let mut list: Vec<(usize, EntrantId)> = active.iter().copied().enumerate().collect();
        list.sort_by_key(|&(seed, e)| {
            (
                std::cmp::Reverse(self.score_of(e)),
                std::cmp::Reverse(self.buchholz(e)),
                seed,
            )
        });
        list.into_iter().map(|(_, e)| e).collect()
    }
}

/// One round's pairings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// The matches, best ranked first; in each the better ranked entrant first.
    pub pairs: Vec<[EntrantId; 2]>,
    /// The entrant without an opponent (odd count).
    pub bye: Option<EntrantId>,
    /// Some pair repeats an earlier one (only when no pairing without repeats exists or
    /// the search ran out of budget).
    pub repeats: bool,
}

/// Pairs round `round` of `active` entrants (seed order, best first) given `tally`.
pub fn pair_round(round: u32, active: &[EntrantId], tally: &Tally) -> Pairing {
    let order: Vec<EntrantId> = if round <= 1 {
        active.to_vec()
    } else {
        let mut ranked: Vec<(usize, EntrantId)> = active.iter().copied().enumerate().collect();
        ranked.sort_by_key(|&(seed, e)| (std::cmp::Reverse(tally.score_of(e)), seed));
        ranked.into_iter().map(|(_, e)| e).collect()
    };
    let no_bye_yet = |e: &EntrantId| tally.byes.get(e).copied().unwrap_or(0) == 0;
    let mut budget = SEARCH_BUDGET;
    // Bye candidates: the lowest ranked first, among those without a bye.
    let candidates: Vec<Option<EntrantId>> = if order.len().is_multiple_of(2) {
        vec![None]
    } else {
        order
            .iter()
            .rev()
            .filter(|e| no_bye_yet(e))
            .map(|&e| Some(e))
            .collect()
    };
    for &bye in &candidates {
        let rest: Vec<EntrantId> = order.iter().copied().filter(|&e| Some(e) != bye).collect();
        let found = if round <= 1 {
            Some(fold(&rest))
        } else {
            search(&rest, tally, &mut budget)
        };
        if let Some(pairs) = found {
            return Pairing {
                pairs,
                bye,
                repeats: false,
            };
        }
        if budget == 0 {
            break;
        }
    }
    // No pairing without repeats (or out of budget): the lowest ranked without a bye
    // sits out, the rest are paired preferring opponents not met.
    let odd = !order.len().is_multiple_of(2);
    let bye = candidates
        .first()
        .copied()
        .flatten()
        .or_else(|| odd.then(|| order[order.len() - 1]));
    let rest: Vec<EntrantId> = order.iter().copied().filter(|&e| Some(e) != bye).collect();
    Pairing {
        pairs: greedy(&rest, tally),
        bye,
        repeats: true,
    }
}

/// Top half against bottom half: 1 v n/2 + 1, 2 v n/2 + 2, …
fn fold(list: &[EntrantId]) -> Vec<[EntrantId; 2]> {
    let half = list.len() / 2;
    (0..half).map(|i| [list[i], list[i + half]]).collect()
}

fn search(list: &[EntrantId], tally: &Tally, budget: &mut u32) -> Option<Vec<[EntrantId; 2]>> {
    let mut used = vec![false; list.len()];
    let mut out = Vec::with_capacity(list.len() / 2);
    dfs(list, tally, &mut used, budget, &mut out).then_some(out)
}

fn dfs(
    list: &[EntrantId],
    tally: &Tally,
    used: &mut [bool],
    budget: &mut u32,
    out: &mut Vec<[EntrantId; 2]>,
) -> bool {
    let Some(i) = used.iter().position(|u| !u) else {
        return true;
    };
    used[i] = true;
    for j in i + 1..list.len() {
        if used[j] || tally.met(list[i], list[j]) {
            continue;
        }
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        used[j] = true;
        out.push([list[i], list[j]]);
        if dfs(list, tally, used, budget, out) {
            return true;
        }
        out.pop();
        used[j] = false;
    }
    used[i] = false;
    false
}

/// Each first unpaired entrant meets the next it has not met, or else the next one.
fn greedy(list: &[EntrantId], tally: &Tally) -> Vec<[EntrantId; 2]> {
    let mut left: Vec<EntrantId> = list.to_vec();
    let mut out = Vec::new();
    while left.len() >= 2 {
        let a = left.remove(0);
        let k = left.iter().position(|&b| !tally.met(a, b)).unwrap_or(0);
        out.push([a, left.remove(k)]);
    }
    out
}

/// Every pair of `pairs` as an unordered set, for tests and checks.
pub fn pair_set(pairs: &[[EntrantId; 2]]) -> BTreeSet<(EntrantId, EntrantId)> {
    pairs.iter().map(|&[a, b]| (a.min(b), a.max(b))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: u32) -> Vec<EntrantId> {
        (1..=n).map(EntrantId).collect()
    }

    #[test]
    fn round_one_folds_the_seeds_and_gives_the_last_seed_the_bye() {
        let p = pair_round(1, &ids(5), &Tally::default());
        assert_eq!(
            p.pairs,
            vec![[EntrantId(1), EntrantId(3)], [EntrantId(2), EntrantId(4)]]
        );
        assert_eq!(p.bye, Some(EntrantId(5)));
    }

    #[test]
    fn later_rounds_pair_by_score_and_avoid_repeats() {
        let mut t = Tally::default();
        // Round 1 of four: 1 beat 3, 2 beat 4.
        t.add_match(EntrantId(1), EntrantId(3), Some(EntrantId(1)));
        t.add_match(EntrantId(2), EntrantId(4), Some(EntrantId(2)));
        let p = pair_round(2, &ids(4), &t);
        assert_eq!(
            p.pairs,
            vec![[EntrantId(1), EntrantId(2)], [EntrantId(3), EntrantId(4)]]
        );
        t.add_match(EntrantId(1), EntrantId(2), Some(EntrantId(1)));
        t.add_match(EntrantId(3), EntrantId(4), Some(EntrantId(4)));
        // Scores 1:2, 2:1, 4:1, 3:0; 1 has met 3 and 2, so it meets 4; 2 meets 3.
        let p = pair_round(3, &ids(4), &t);
        assert!(!p.repeats);
        assert_eq!(
            p.pairs,
            vec![[EntrantId(1), EntrantId(4)], [EntrantId(2), EntrantId(3)]]
        );
    }

    #[test]
    fn repeats_only_when_unavoidable() {
        let mut t = Tally::default();
        t.add_match(EntrantId(1), EntrantId(2), Some(EntrantId(1)));
        let p = pair_round(2, &ids(2), &t);
        assert!(p.repeats);
        assert_eq!(p.pairs, vec![[EntrantId(1), EntrantId(2)]]);
    }
}
