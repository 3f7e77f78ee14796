//! Quick pairing: players choose a rule set, 2 or 4 seats and rated or casual, and wait
//! in that queue; [`match_groups`], a pure function of the waiting players, the blocked
//! pairs and now, says which groups to seat.
//!
//! The rule, per queue, oldest waiter first:
//!
//! * The oldest waiter not yet seated is the *anchor*. Its window is
//!   `base_window + widen_per_second × seconds waited` (μ points; defaults 2.0 and 0.25:
//!   ±2 at once, ±7 after 20 s, ±12 after 40 s), and unlimited once it has waited
//!   `open_after_ms` (default 60 s): then anybody in the queue will do.
//! * Its group is filled with the waiters whose μ is within the anchor's window,
//!   closest μ first (then the longest waiting; an older waiter who could not fill a
//!   group of its own may join a younger anchor's), skipping anyone blocked with someone
//!   already in the group, in either direction.
//! * A full group (the queue's seat count) is seated; otherwise the anchor keeps waiting
//!   and the next oldest waiter becomes the anchor.
//! * Guests wait only in casual queues: a guest in a rated queue is never seated. A
//!   player is seated at most once per call, even when waiting in several queues (the
//!   oldest of its entries counts first) or listed twice.
//!
//! Cost: O(n² · seats) for n waiters in a queue; the caller bounds how many may wait.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::pool::Pool;

/// A quick-pairing queue: a pool (rule set), a seat count and rated or casual.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Queue {
    /// The rule set.
    pub pool: Pool,
    /// Seats of the room to create: 2 or 4 (the caller checks the rule set allows it).
    pub seats: u8,
    /// A rated game (accounts only) or a casual one (guests welcome).
    pub rated: bool,
}

/// One player waiting in a queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Waiting {
    /// Who: the account id, or for a guest an id made for this wait.
    pub player: Uuid,
    /// A guest (no account): casual queues only.
    pub guest: bool,
    /// The queue waited in.
    pub queue: Queue,
    /// The player's μ in the queue's pool (25 without a rating, and for guests).
    pub mu: f64,
    /// When the player started waiting (unix ms).
    pub since_ms: i64,
}

/// A group to seat together in a new room of its queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// The queue the group came from.
    pub queue: Queue,
    /// The players, the anchor (longest waiting) first; exactly `queue.seats` of them.
    pub players: Vec<Uuid>,
}

/// The matcher's numbers (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchConfig {
    /// The window at once, in μ points either side of the anchor's μ.
    pub base_window: f64,
    /// How much the window widens per second waited, in μ points.
    pub widen_per_second: f64,
    /// After this long (ms) the window is unlimited.
    pub open_after_ms: i64,
}

impl Default for MatchConfig {
    fn default() -> MatchConfig {
        MatchConfig {
            base_window: 2.0,
            widen_per_second: 0.25,
            open_after_ms: 60_000,
        }
    }
}

impl MatchConfig {
    /// The window (μ points either side) of a player waiting since `since_ms` at
    /// `now_ms`; `f64::INFINITY` once `open_after_ms` have passed. A `since_ms` in the
    /// future counts as no wait.
    pub fn window(&self, since_ms: i64, now_ms: i64) -> f64 {
        let waited = now_ms.saturating_sub(since_ms).max(0);
        if waited >= self.open_after_ms {
            return f64::INFINITY;
        }
        self.base_window + self.widen_per_second * (waited as f64 / 1000.0)
    }
}

/// The groups to seat now (module docs for the rule), in queue order then anchor age.
/// `blocks` holds pairs `(a, b)`: `a` blocked `b`; neither is ever grouped with the other.
pub fn match_groups(
    waiting: &[Waiting],
    blocks: &HashSet<(Uuid, Uuid)>,
    now_ms: i64,
    config: &MatchConfig,
) -> Vec<Group> {
    let blocked = |a: Uuid, b: Uuid| blocks.contains(&(a, b)) || blocks.contains(&(b, a));
    let mut queues: BTreeMap<&Queue, Vec<&Waiting>> = BTreeMap::new();
    for w in waiting {
        let admitted = !(w.guest && w.queue.rated) && w.mu.is_finite() && w.queue.seats >= 2;
        if admitted {
            queues.entry(&w.queue).or_default().push(w);
        }
    }
    let mut seated: HashSet<Uuid> = HashSet::new();
    let mut groups = Vec::new();
    for (queue, mut entries) in queues {
        entries.sort_by_key(|w| (w.since_ms, w.player));
        // One entry per player and queue: the earliest (a player listed twice in a queue
        // waits from their first entry, at its rating).
        let mut listed = HashSet::new();
        entries.retain(|w| listed.insert(w.player));
        for anchor in &entries {
            if seated.contains(&anchor.player) {
                continue;
            }
            let window = config.window(anchor.since_ms, now_ms);
            let mut near: Vec<&Waiting> = entries
                .iter()
                .copied()
                .filter(|w| w.player != anchor.player && !seated.contains(&w.player))
                .filter(|w| (w.mu - anchor.mu).abs() <= window)
                .collect();
            near.sort_by(|a, b| {
                let (da, db) = ((a.mu - anchor.mu).abs(), (b.mu - anchor.mu).abs());
                da.total_cmp(&db)
                    .then(a.since_ms.cmp(&b.since_ms))
                    .then(a.player.cmp(&b.player))
            });
            let mut players = vec![anchor.player];
            for w in near {
                if players.len() == usize::from(queue.seats) {
                    break;
                }
                if !players.contains(&w.player) && players.iter().all(|&p| !blocked(p, w.player)) {
                    players.push(w.player);
                }
            }
            if players.len() == usize::from(queue.seats) {
                seated.extend(players.iter().copied());
                groups.push(Group {
                    queue: queue.clone(),
                    players,
                });
            }
        }
    }
    groups
}
