//! Small deterministic PRNG (xorshift64*) for the action choices, think times and the
//! nodes drawn for rooms and clients: a run is reproduced by its `--seed`.

use std::time::Duration;

/// xorshift64* state (never 0).
pub struct Rng(u64);

impl Rng {
    /// A generator from any seed (0 is mapped to a non-zero state).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The generator of one room's `game`-th game and its client `client` (0–3; 4 is the
    /// room's own draw of nodes), all distinct for distinct inputs of one run.
    pub fn for_room(seed: u64, room: usize, game: u64, client: u64) -> Rng {
        Rng::new(seed ^ ((room as u64) << 20) ^ (game << 8) ^ (client + 1))
    }

    /// Uniform in `[0, n)` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x % n.max(1) as u64) as usize
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.below(1 << 30) as f64 / (1u64 << 30) as f64
    }

    /// A think time: uniform in `think × [1 − jitter, 1 + jitter]`.
    pub fn think(&mut self, think: Duration, jitter: f64) -> Duration {
        think.mul_f64(1.0 - jitter + 2.0 * jitter * self.unit())
    }
}

/// Where one game's room and clients go among `nodes` nodes (indexes into `--url`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The node that gets `POST /api/rooms` (and so owns the room: CLUSTER.md,
    /// "Placement", unless it is draining or full).
    pub room: usize,
    /// The node of each client's socket, creator first.
    pub clients: [usize; 4],
}

impl Placement {
    /// Uniform, independent draws for the room and each client, from the room's own
    /// generator (`Rng::for_room(seed, room, game, 4)`).
    pub fn draw(seed: u64, room: usize, game: u64, nodes: usize) -> Placement {
        let mut rng = Rng::for_room(seed, room, game, 4);
        let room = rng.below(nodes);
        let clients = [0; 4].map(|_| rng.below(nodes));
        Placement { room, clients }
    }

    /// Whether client `i`'s commands cross nodes (its socket is not on the owner).
    pub fn crosses(&self, i: usize) -> bool {
        self.clients.get(i).is_some_and(|&c| c != self.room)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_stay_in_range_and_cover_it() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let mut seen = [0u32; 5];
        for _ in 0..1000 {
            seen[rng.below(5)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 100), "{seen:?}");
        assert_eq!(Rng::new(7).below(0), 0);
    }

    #[test]
    fn think_times_stay_in_the_jitter_band_with_the_requested_mean() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let think = Duration::from_millis(1000);
        let draws: Vec<Duration> = (0..10_000).map(|_| rng.think(think, 0.5)).collect();
        let (lo, hi) = (Duration::from_millis(500), Duration::from_millis(1500));
        assert!(draws.iter().all(|d| *d >= lo && *d <= hi));
        let mean = draws.iter().map(Duration::as_secs_f64).sum::<f64>() / draws.len() as f64;
        assert!((mean - 1.0).abs() < 0.02, "mean {mean}");
        assert!(draws.iter().any(|d| *d < Duration::from_millis(600)));
        assert!(draws.iter().any(|d| *d > Duration::from_millis(1400)));
        assert_eq!(rng.think(think, 0.0), think);
    }

    #[test]
    fn one_node_means_no_crossing() {
        for room in 0..50 {
            let p = Placement::draw(1, room, 0, 1);
            assert_eq!(
                p,
                Placement {
                    room: 0,
                    clients: [0; 4]
                }
            );
            assert!((0..4).all(|i| !p.crosses(i)));
        }
    }

    #[test]
    fn rooms_and_clients_spread_over_three_nodes_and_two_thirds_cross() {
        let rooms = 3000;
        let mut per_node = [0usize; 3];
        let mut sockets = [0usize; 3];
        let mut crossing = 0;
        for room in 0..rooms {
            let p = Placement::draw(42, room, 0, 3);
            per_node[p.room] += 1;
            for (i, c) in p.clients.iter().enumerate() {
                sockets[*c] += 1;
                crossing += usize::from(p.crosses(i));
            }
        }
        // 1,000 expected per node; σ ≈ 26.
        assert!(
            per_node.iter().all(|&n| (900..=1100).contains(&n)),
            "{per_node:?}"
        );
        assert!(
            sockets.iter().all(|&n| (3700..=4300).contains(&n)),
            "{sockets:?}"
        );
        // 8,000 of the 12,000 commands' sockets expected off the owner.
        assert!((7700..=8300).contains(&crossing), "crossing {crossing}");
    }

    #[test]
    fn placements_follow_the_seed_and_differ_between_games() {
        assert_eq!(Placement::draw(5, 17, 0, 3), Placement::draw(5, 17, 0, 3));
        let a: Vec<Placement> = (0..20).map(|r| Placement::draw(5, r, 0, 3)).collect();
        let b: Vec<Placement> = (0..20).map(|r| Placement::draw(6, r, 0, 3)).collect();
        let c: Vec<Placement> = (0..20).map(|r| Placement::draw(5, r, 1, 3)).collect();
        assert_ne!(a, b, "another seed, other nodes");
        assert_ne!(a, c, "the room's next game is placed afresh");
    }
}
