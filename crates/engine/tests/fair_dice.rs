//! Provably fair dice (`docs/FAIR_DICE.md`): the document's test vectors, and the
//! distribution of a million dice.

use parchis_engine::fair_dice::{self, ClientSeeds, Dice, ServerSeed};
use parchis_engine::Colour;

fn seeds(text: &str) -> ClientSeeds {
    let pairs = text
        .split_whitespace()
        .map(|p| {
            let (c, s) = p.split_once('=').expect("C=seed");
            let colour = Colour::from_letter(c.chars().next().expect("letter")).expect("colour");
            (colour, s.to_owned())
        })
        .collect();
    ClientSeeds::new(pairs).expect("valid seeds")
}

/// Every ```` ```text vector ```` block of docs/FAIR_DICE.md holds for the implementation.
#[test]
fn the_documented_test_vectors_hold() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/FAIR_DICE.md");
    let text = std::fs::read_to_string(path).expect("read docs/FAIR_DICE.md");
    let mut lines = text.lines();
    let (mut vectors, mut throws, mut blocks) = (0, 0, 0);
    while let Some(line) = lines.next() {
        if line.trim() != "```text vector" {
            continue;
        }
        vectors += 1;
        let body: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        let field = |name: &str| -> &str {
            body.iter()
                .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
                .unwrap_or_else(|| panic!("vector {vectors} has no {name}"))
        };
        let server_seed = ServerSeed::from_hex(field("server_seed")).expect("seed hex");
        let client_seeds = seeds(field("client_seeds"));
        let per_throw: usize = field("dice").parse().expect("dice");
        assert_eq!(
            server_seed.commitment_hex(),
            field("commitment"),
            "vector {vectors}"
        );
        let c = client_seeds.combined();
        assert_eq!(hex::encode(&c), field("combined"), "vector {vectors}");
        let dice = Dice::new(&server_seed, &client_seeds, per_throw);
        for l in &body {
            let words: Vec<&str> = l.split_whitespace().collect();
            match words.as_slice() {
                ["message", k, j, hex] => {
                    let m = fair_dice::message(&c, k.parse().unwrap(), j.parse().unwrap());
                    assert_eq!(hex::encode(m), *hex, "vector {vectors}: {l}");
                }
                ["block", k, j, hex] => {
                    blocks += 1;
                    let b =
                        fair_dice::block(&server_seed, &c, k.parse().unwrap(), j.parse().unwrap());
                    assert_eq!(hex::encode(b), *hex, "vector {vectors}: {l}");
                }
                ["throw", k, values] => {
                    throws += 1;
                    let want: Vec<u8> = values.split(',').map(|v| v.parse().unwrap()).collect();
                    let k: u64 = k.parse().unwrap();
                    assert_eq!(dice.throw(k), want, "vector {vectors}: {l}");
                    assert_eq!(
                        fair_dice::throw(&server_seed, &client_seeds, k, per_throw),
                        want
                    );
                }
                _ => {}
            }
        }
    }
    assert!(vectors >= 2, "vectors found: {vectors}");
    assert!(
        throws >= 16 && blocks >= 4,
        "{throws} throws, {blocks} blocks checked"
    );
}

/// Pearson's chi-square statistic of observed counts against equal expected counts.
fn chi_square(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    let expected = total as f64 / counts.len() as f64;
    counts
        .iter()
        .map(|&o| (o as f64 - expected).powi(2) / expected)
        .sum()
}

/// 10^6 dice (500,000 two-dice throws) from fixed seeds: each face, and each ordered
/// pair of a throw, is as frequent as uniform dice make it. Thresholds are the 0.1 %
/// critical values of chi-square with 5 and 35 degrees of freedom. Deterministic: the
/// seeds are fixed, so the statistic is the same on every run.
#[test]
fn a_million_dice_pass_chi_square() {
    let server_seed = ServerSeed(std::array::from_fn(|i| (i as u8).wrapping_mul(37)));
    let client_seeds = seeds("Y=chi B=square R=test G=green");
    let dice = Dice::new(&server_seed, &client_seeds, 2);
    let mut faces = [0u64; 6];
    let mut pairs = [0u64; 36];
    for k in 0..500_000u64 {
        let d = dice.throw(k);
        assert_eq!(d.len(), 2);
        for &v in &d {
            assert!((1..=6).contains(&v));
            faces[usize::from(v - 1)] += 1;
        }
        pairs[usize::from(d[0] - 1) * 6 + usize::from(d[1] - 1)] += 1;
    }
    assert_eq!(faces.iter().sum::<u64>(), 1_000_000);
    let faces_chi = chi_square(&faces);
    let pairs_chi = chi_square(&pairs);
    assert!(
        faces_chi < 20.515,
        "faces {faces:?}: chi-square {faces_chi}"
    );
    assert!(pairs_chi < 66.619, "pairs: chi-square {pairs_chi}");
}

/// Without rejection (taking `b mod 6 + 1` of every byte), faces 1 to 4 would be
/// favoured: the same test catches that bias, so it can fail.
#[test]
fn chi_square_catches_modulo_bias() {
    let mut faces = [0u64; 6];
    for b in 0..=255u32 {
        faces[(b % 6) as usize] += 3906; // 256 × 3906 ≈ 10^6 bytes
    }
    assert!(chi_square(&faces) > 20.515);
}
