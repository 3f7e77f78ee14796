//! Criterion benchmarks: legal-action generation on typical positions and complete
//! random 4-player games. Results and analysis: docs/BENCHMARKS.md.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use parchis_engine::{Action, Colour, Dice, Expect, Game, RuleSet};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A typical mid-game position: pieces spread on the ring, one blockade, one in a
/// home column, a throw of 3 and 4 to play.
const MID_GAME: &str = "online Y:20,33,h2,n B:40,40',n,g R:50,n,62,n G:2,9,n,n turn=Y move=3,4";
/// Doubles with a blockade to open and a piece in the nest: the widest search.
const DOUBLES: &str =
    "online Y:20,20',h2,n B:40,40',n,g R:50,n,62,n G:2,9,n,n turn=Y move=5,5 open=Y0+Y1";

fn random_game(rng: &mut ChaCha8Rng) -> Game {
    let mut g = Game::new(RuleSet::online(), &Colour::ALL, Colour::Yellow).expect("new game");
    loop {
        let action = match g.expect() {
            Expect::Finished(_) => return g,
            Expect::Roll { .. } => Action::Roll {
                dice: Dice::two(rng.gen_range(1..=6), rng.gen_range(1..=6)).expect("dice"),
            },
            Expect::Move { .. } => {
                let legal = g.legal_actions();
                legal[rng.gen_range(0..legal.len())]
            }
        };
        g.play(&action).expect("legal action");
    }
}

fn bench(c: &mut Criterion) {
    let mid: Game = MID_GAME.parse().expect("mid-game position");
    let doubles: Game = DOUBLES.parse().expect("doubles position");
    c.bench_function("legal_actions/mid_game", |b| {
        b.iter(|| black_box(&mid).legal_actions())
    });
    c.bench_function("legal_actions/doubles_open_exit", |b| {
        b.iter(|| black_box(&doubles).legal_actions())
    });
    let mut group = c.benchmark_group("random_game");
    group.throughput(Throughput::Elements(1));
    group.sample_size(20);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    group.bench_function("4_players", |b| b.iter(|| random_game(&mut rng)));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
