//! The knockout bracket: how many rounds and tables, where each seed sits in the first
//! round (byes to the top seeds), and which tables feed which.
//!
//! The bracket is fixed at the draw: table `j` of round `r + 1` takes the qualifiers of
//! tables `j·f … j·f + f − 1` of round `r`, where the fan-in `f` is
//! `table / advance` (2 in `pairs`: the winners of two matches meet).

use crate::ids::EntrantId;

/// The shape of a knockout for `n` entrants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Entrants per table (2 in `pairs`).
    pub table: u32,
    /// Qualifiers per table before the final (1 in `pairs`).
    pub advance: u32,
    /// Tables feeding one table of the next round: `table / advance`.
    pub fan_in: u32,
    /// Rounds, the final included: the fewest with `table · fan_in^(rounds − 1) ≥ n`.
    pub rounds: u32,
    /// Tables in round 1: `fan_in^(rounds − 1)`.
    pub first_tables: u32,
}

impl Layout {
    /// The layout for `n ≥ 1` entrants at tables of `table` where `advance` go through
    /// (`advance < table`, dividing it, as the settings check).
    pub fn new(n: u32, table: u32, advance: u32) -> Layout {
        let fan_in = (table / advance.max(1)).max(2);
        let (mut rounds, mut tables) = (1, 1u32);
        while table.saturating_mul(tables) < n {
            rounds += 1;
            tables = tables.saturating_mul(fan_in);
        }
        Layout {
            table,
            advance,
            fan_in,
            rounds,
            first_tables: tables,
        }
    }

    /// Tables in round `round` (1-based).
    pub fn tables_in(&self, round: u32) -> u32 {
        let mut t = self.first_tables;
        for _ in 1..round {
            t /= self.fan_in;
        }
        t.max(1)
    }

    /// How many of a table of round `round` go through: 1 (the champion) in the final.
    pub fn advance_in(&self, round: u32) -> u32 {
        if round >= self.rounds {
            1
        } else {
            self.advance
        }
    }

    /// The first round's tables in bracket order, each a list of entrants best seed
    /// first, from `seeded` (best first).
    ///
    /// Table sizes differ by at most one and the top seeds' tables are the small ones
    /// (byes to the top seeds: a table of at most `advance` entrants plays no game). The
    /// seeds are dealt in a snake over the tables ranked by their top seed (1 … T, then
    /// T … 1, …), which for `pairs` is the usual 1 v 2T, 2 v 2T − 1, …; the tables are
    /// placed by [`bracket_order`], so the top seeds meet as late as possible.
    pub fn first_round(&self, seeded: &[EntrantId]) -> Vec<Vec<EntrantId>> {
        let t = self.first_tables as usize;
        let n = seeded.len();
        let (base, extra) = (n / t, n % t);
        // Capacity of the table of rank r (0-based): the last `extra` ranks take one more.
        let cap = |r: usize| base + usize::from(r >= t - extra);
        let mut by_rank: Vec<Vec<EntrantId>> = vec![Vec::new(); t];
        let mut next = seeded.iter();
        'deal: for layer in 0.. {
            let ranks: Box<dyn Iterator<Item = usize>> = if layer % 2 == 0 {
                Box::new(0..t)
            } else {
                Box::new((0..t).rev())
            };
            let mut dealt = false;
            for r in ranks {
                if cap(r) > layer {
                    match next.next() {
                        Some(&e) => {
                            by_rank[r].push(e);
                            dealt = true;
                        }
                        None => break 'deal,
                    }
                }
            }
            if !dealt {
                break;
            }
        }
        bracket_order(self.first_tables, self.fan_in)
            .into_iter()
            .map(|rank| std::mem::take(&mut by_rank[rank as usize - 1]))
            .collect()
    }
}

/// The rank (1 = holds the top seed) of the table at each bracket position, for
/// `tables = fan_in^k` tables: built from `[1]` by replacing each rank `v` of a bracket
/// of `m` tables with a group of `fan_in`, layer `j` of which is `j·m + v` for even `j`
/// and `(j + 1)·m + 1 − v` for odd `j`. For `fan_in` 2 and 4 tables: `[1, 4, 2, 3]`
/// (seeds 1 and 2 in different halves, 1 meets 4 and 2 meets 3 in the semi-finals).
pub fn bracket_order(tables: u32, fan_in: u32) -> Vec<u32> {
    let mut order = vec![1u32];
    let mut m = 1u32;
    while m < tables {
        order = order
            .iter()
            .flat_map(|&v| {
                (0..fan_in).map(move |j| {
                    if j % 2 == 0 {
                        j * m + v
                    } else {
                        (j + 1) * m + 1 - v
                    }
                })
            })
            .collect();
        m *= fan_in;
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u32]) -> Vec<EntrantId> {
        v.iter().map(|&i| EntrantId(i)).collect()
    }

    #[test]
    fn eight_pairs_follow_the_usual_bracket() {
        let l = Layout::new(8, 2, 1);
        assert_eq!((l.rounds, l.first_tables, l.fan_in), (3, 4, 2));
        let seeded = ids(&[1, 2, 3, 4, 5, 6, 7, 8]);
        let tables = l.first_round(&seeded);
        assert_eq!(
            tables,
            vec![ids(&[1, 8]), ids(&[4, 5]), ids(&[2, 7]), ids(&[3, 6])]
        );
    }

    #[test]
    fn five_pairs_give_the_three_top_seeds_a_bye() {
        let l = Layout::new(5, 2, 1);
        assert_eq!((l.rounds, l.first_tables), (3, 4));
        let tables = l.first_round(&ids(&[1, 2, 3, 4, 5]));
        assert_eq!(tables, vec![ids(&[1]), ids(&[4, 5]), ids(&[2]), ids(&[3])]);
    }

    #[test]
    fn tables_of_four_with_two_through_feed_pairs_of_tables() {
        let l = Layout::new(16, 4, 2);
        assert_eq!((l.fan_in, l.rounds, l.first_tables), (2, 3, 4));
        assert_eq!((l.tables_in(2), l.tables_in(3)), (2, 1));
        assert_eq!(
            (l.advance_in(1), l.advance_in(2), l.advance_in(3)),
            (2, 2, 1)
        );
        let l = Layout::new(4, 4, 2);
        assert_eq!((l.rounds, l.first_tables), (1, 1));
    }

    #[test]
    fn bracket_orders_are_permutations() {
        for f in 2..=4u32 {
            for k in 0..4 {
                let t = f.pow(k);
                let mut o = bracket_order(t, f);
                assert_eq!(o[0], 1);
                o.sort_unstable();
                assert_eq!(o, (1..=t).collect::<Vec<_>>());
            }
        }
        assert_eq!(bracket_order(8, 2), vec![1, 8, 4, 5, 2, 7, 3, 6]);
    }
}
