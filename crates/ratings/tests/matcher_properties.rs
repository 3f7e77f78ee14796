//! Properties of the quick-pairing matcher (issue 26): nobody in two groups, groups are
//! full, blocks respected, guests only in casual queues, the window respected, and a lone
//! player's window widens while they wait.

use std::collections::HashSet;

use parchis_ratings::{match_groups, MatchConfig, Pool, Queue, Waiting};
use proptest::prelude::*;
use uuid::Uuid;

const NOW: i64 = 1_800_000_000_000;

fn queue(pool: &str, seats: u8, rated: bool) -> Queue {
    Queue {
        pool: Pool::parse(pool).unwrap(),
        seats,
        rated,
    }
}

fn queues() -> Vec<Queue> {
    vec![
        queue("online", 2, true),
        queue("online", 4, false),
        queue("classic", 2, false),
        queue("pairs", 4, true),
    ]
}

/// Up to 24 waiters drawn from 12 players, so some wait in two queues (or twice in one).
fn waiting() -> impl Strategy<Value = Vec<Waiting>> {
    proptest::collection::vec((0usize..12, 0usize..4, 0.0f64..50.0, 0i64..90_000), 0..24).prop_map(
        |rows| {
            rows.into_iter()
                .map(|(p, q, mu, waited)| Waiting {
                    player: Uuid::from_u128(p as u128 + 1),
                    guest: p % 4 == 0, // the players with ids 1, 5 and 9 are guests
                    queue: queues()[q].clone(),
                    mu,
                    since_ms: NOW - waited,
                })
                .collect()
        },
    )
}

fn blocks() -> impl Strategy<Value = HashSet<(Uuid, Uuid)>> {
    proptest::collection::hash_set((1u128..=12, 1u128..=12), 0..10).prop_map(|pairs| {
        pairs
            .into_iter()
            .map(|(a, b)| (Uuid::from_u128(a), Uuid::from_u128(b)))
            .collect()
    })
}

proptest! {
    #[test]
    fn groups_are_full_disjoint_unblocked_and_within_the_window(
        waiting in waiting(), blocks in blocks(),
    ) {
        let config = MatchConfig::default();
        let groups = match_groups(&waiting, &blocks, NOW, &config);
        let mut seen = HashSet::new();
        for g in &groups {
            prop_assert_eq!(g.players.len(), usize::from(g.queue.seats));
            for p in &g.players {
                prop_assert!(seen.insert(*p), "{p} is in two groups");
                // Every member waits in the group's queue, and no guest is rated.
                let entry = waiting.iter().find(|w| w.player == *p && w.queue == g.queue);
                prop_assert!(entry.is_some());
                prop_assert!(!(g.queue.rated && entry.unwrap().guest));
            }
            for a in &g.players {
                for b in g.players.iter().filter(|b| *b != a) {
                    prop_assert!(!blocks.contains(&(*a, *b)), "{a} blocked {b}");
                }
            }
            let anchor = waiting
                .iter()
                .filter(|w| w.player == g.players[0] && w.queue == g.queue)
                .min_by_key(|w| w.since_ms)
                .unwrap();
            let window = config.window(anchor.since_ms, NOW);
            for p in &g.players[1..] {
                let near = waiting
                    .iter()
                    .any(|w| w.player == *p && w.queue == g.queue && (w.mu - anchor.mu).abs() <= window);
                prop_assert!(near, "{p} is outside the anchor's window {window}");
            }
        }
    }

    #[test]
    fn a_window_only_widens(since in 0i64..100_000, a in 0i64..200_000, b in 0i64..200_000) {
        let config = MatchConfig::default();
        let (early, late) = (a.min(b), a.max(b));
        prop_assert!(config.window(since, early) <= config.window(since, late));
    }
}

#[test]
fn a_lone_pair_far_apart_meets_once_the_window_has_widened() {
    let config = MatchConfig::default();
    let q = queue("online", 2, true);
    let start = NOW;
    let waiting = vec![
        Waiting {
            player: Uuid::from_u128(1),
            guest: false,
            queue: q.clone(),
            mu: 20.0,
            since_ms: start,
        },
        Waiting {
            player: Uuid::from_u128(2),
            guest: false,
            queue: q.clone(),
            mu: 30.0,
            since_ms: start,
        },
    ];
    let none = HashSet::new();
    // ±2 at once, ±7 after 20 s: ten points apart is still too far.
    assert_eq!(config.window(start, start), 2.0);
    assert_eq!(config.window(start, start + 20_000), 7.0);
    assert!(match_groups(&waiting, &none, start, &config).is_empty());
    assert!(match_groups(&waiting, &none, start + 20_000, &config).is_empty());
    // ±12 after 40 s: seated.
    let groups = match_groups(&waiting, &none, start + 40_000, &config);
    assert_eq!(groups.len(), 1);
    assert_eq!(
        groups[0].players,
        vec![Uuid::from_u128(1), Uuid::from_u128(2)]
    );
    // Blocked: never, even with the window open.
    let blocks: HashSet<_> = [(Uuid::from_u128(2), Uuid::from_u128(1))]
        .into_iter()
        .collect();
    assert!(match_groups(&waiting, &blocks, start + 600_000, &config).is_empty());
    assert_eq!(config.window(start, start + 60_000), f64::INFINITY);
}

#[test]
fn four_in_a_two_seat_queue_make_two_games_of_close_ratings() {
    let config = MatchConfig::default();
    let q = queue("online", 2, true);
    let mk = |id: u128, mu: f64| Waiting {
        player: Uuid::from_u128(id),
        guest: false,
        queue: q.clone(),
        mu,
        since_ms: NOW,
    };
    let waiting = vec![mk(1, 10.0), mk(2, 30.0), mk(3, 11.0), mk(4, 31.0)];
    let groups = match_groups(&waiting, &HashSet::new(), NOW, &config);
    let players: Vec<Vec<Uuid>> = groups.into_iter().map(|g| g.players).collect();
    assert_eq!(
        players,
        vec![
            vec![Uuid::from_u128(1), Uuid::from_u128(3)],
            vec![Uuid::from_u128(2), Uuid::from_u128(4)],
        ]
    );
}

#[test]
fn guests_wait_in_casual_queues_only() {
    let config = MatchConfig::default();
    let mk = |id: u128, rated: bool| Waiting {
        player: Uuid::from_u128(id),
        guest: true,
        queue: queue("classic", 2, rated),
        mu: 25.0,
        since_ms: NOW,
    };
    let none = HashSet::new();
    assert!(match_groups(&[mk(1, true), mk(2, true)], &none, NOW, &config).is_empty());
    assert_eq!(
        match_groups(&[mk(1, false), mk(2, false)], &none, NOW, &config).len(),
        1
    );
}
