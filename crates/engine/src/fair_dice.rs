//! Provably fair dice (`docs/FAIR_DICE.md`): the dice of every throw are a pure function
//! of a secret server seed, the players' client seeds and the throw's number, so anyone
//! can check them once the server seed is revealed.
//!
//! This is not an RNG: the server draws the server seed from the OS and passes it in.
//! Scheme `parchis-fair-dice-v1`:
//!
//! - commitment = `SHA-256(server_seed)` (32 raw bytes in, lower-case hex out);
//! - `C` = for every seated colour in board order (Y, B, R, G): the colour letter as one
//!   ASCII byte, the client seed's length as one byte, the seed's ASCII bytes;
//! - block `j` of throw `k` = `HMAC-SHA256(key = server_seed, message = C ‖ u64_be(k) ‖
//!   u32_be(j))`, `j` = 0, 1, 2…;
//! - the dice of throw `k` are read from the bytes of block 0, then block 1…: a byte
//!   `b ≥ 252` is dropped, otherwise it gives the die `b mod 6 + 1`, until the rule set's
//!   number of dice (1 or 2) is reached.

use crate::board::Colour;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::fmt;

/// Name of the construction, as recorded with every game.
pub const SCHEME: &str = "parchis-fair-dice-v1";

/// Length of a server seed in bytes.
pub const SERVER_SEED_BYTES: usize = 32;

/// Longest client seed, in characters (each one ASCII byte).
pub const MAX_CLIENT_SEED_CHARS: usize = 64;

/// Bytes at or above this are dropped: 252 = 42 × 6, so every face keeps 42 of the
/// 252 accepted byte values.
pub const REJECT_FROM: u8 = 252;

/// A server seed: 32 secret bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ServerSeed(pub [u8; SERVER_SEED_BYTES]);

impl fmt::Debug for ServerSeed {
    /// Never prints the secret itself, only its commitment.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ServerSeed(commitment {})", self.commitment_hex())
    }
}

impl ServerSeed {
    /// Parses 64 hex digits (either case).
    ///
    /// # Errors
    /// A message when the text is not 32 bytes of hex.
    pub fn from_hex(text: &str) -> Result<ServerSeed, String> {
        let bytes = hex::decode(text.trim()).map_err(|e| format!("server seed: {e}"))?;
        let seed: [u8; SERVER_SEED_BYTES] = bytes.try_into().map_err(|b: Vec<u8>| {
            format!(
                "server seed: {} bytes, expected {SERVER_SEED_BYTES}",
                b.len()
            )
        })?;
        Ok(ServerSeed(seed))
    }

    /// The seed as 64 lower-case hex digits (reveal it only when the game is over).
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// `SHA-256(server_seed)`, the commitment published before the first throw.
    pub fn commitment(&self) -> [u8; 32] {
        Sha256::digest(self.0).into()
    }

    /// The commitment as 64 lower-case hex digits.
    pub fn commitment_hex(&self) -> String {
        hex::encode(self.commitment())
    }
}

/// Checks a client seed: 1 to [`MAX_CLIENT_SEED_CHARS`] characters from `A-Z a-z 0-9 _ -`.
///
/// # Errors
/// A message naming the rule broken.
pub fn validate_client_seed(seed: &str) -> Result<(), String> {
    if seed.is_empty() || seed.len() > MAX_CLIENT_SEED_CHARS {
        return Err(format!(
            "a client seed has 1 to {MAX_CLIENT_SEED_CHARS} characters"
        ));
    }
    if !seed
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err("a client seed uses only A-Z, a-z, 0-9, '_' and '-'".into());
    }
    Ok(())
}

/// The client seed recorded for a player who gave none: the colour's name (`"yellow"`).
pub fn default_client_seed(colour: Colour) -> String {
    colour.name().to_owned()
}

/// The client seeds of a game, one per seated colour, in board order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientSeeds(Vec<(Colour, String)>);

impl ClientSeeds {
    /// Sorts `seeds` into board order.
    ///
    /// # Errors
    /// A message when a seed is invalid ([`validate_client_seed`]) or a colour repeats.
    pub fn new(mut seeds: Vec<(Colour, String)>) -> Result<ClientSeeds, String> {
        seeds.sort_by_key(|(c, _)| c.index());
        for w in seeds.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(format!("two client seeds for {}", w[0].0));
            }
        }
        for (colour, seed) in &seeds {
            validate_client_seed(seed).map_err(|e| format!("{colour}: {e}"))?;
        }
        Ok(ClientSeeds(seeds))
    }

    /// The seeds in board order.
    pub fn seeds(&self) -> &[(Colour, String)] {
        &self.0
    }

    /// `C`, the combined client seeds: per colour, its letter byte, the seed's length
    /// byte and the seed's bytes.
    pub fn combined(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (colour, seed) in &self.0 {
            out.push(colour.letter() as u8);
            // validate_client_seed bounds the length to 64.
            out.push(seed.len() as u8);
            out.extend_from_slice(seed.as_bytes());
        }
        out
    }
}

/// The HMAC message of block `j` of throw `k`: `C ‖ u64_be(k) ‖ u32_be(j)`.
pub fn message(combined: &[u8], k: u64, j: u32) -> Vec<u8> {
    let mut m = Vec::with_capacity(combined.len() + 12);
    m.extend_from_slice(combined);
    m.extend_from_slice(&k.to_be_bytes());
    m.extend_from_slice(&j.to_be_bytes());
    m
}

/// Block `j` of throw `k`: `HMAC-SHA256(key = server_seed, message(C, k, j))`.
pub fn block(server_seed: &ServerSeed, combined: &[u8], k: u64, j: u32) -> [u8; 32] {
    keyed(server_seed).block(combined, k, j)
}

/// An HMAC keyed once with the server seed, for many throws.
#[derive(Clone)]
struct Keyed(Hmac<Sha256>);

fn keyed(server_seed: &ServerSeed) -> Keyed {
    // HMAC takes keys of any length: this cannot fail.
    Keyed(
        <Hmac<Sha256> as Mac>::new_from_slice(&server_seed.0)
            .unwrap_or_else(|_| unreachable!("HMAC accepts any key length")),
    )
}

impl Keyed {
    fn block(&self, combined: &[u8], k: u64, j: u32) -> [u8; 32] {
        let mut mac = self.0.clone();
        mac.update(combined);
        mac.update(&k.to_be_bytes());
        mac.update(&j.to_be_bytes());
        mac.finalize().into_bytes().into()
    }

    fn throw(&self, combined: &[u8], k: u64, n: usize) -> Vec<u8> {
        let mut dice = Vec::with_capacity(n);
        let mut j = 0u32;
        while dice.len() < n {
            for b in self.block(combined, k, j) {
                if b < REJECT_FROM {
                    dice.push(b % 6 + 1);
                    if dice.len() == n {
                        break;
                    }
                }
            }
            j += 1;
        }
        dice
    }
}

/// The `n` dice (each 1..=6) of throw `k` (opening rolls included, counted from 0).
pub fn throw(server_seed: &ServerSeed, seeds: &ClientSeeds, k: u64, n: usize) -> Vec<u8> {
    keyed(server_seed).throw(&seeds.combined(), k, n)
}

/// Throws of one game in a row: the server's dice source and the verifier's reference.
#[derive(Clone)]
pub struct Dice {
    keyed: Keyed,
    combined: Vec<u8>,
    per_throw: usize,
}

impl fmt::Debug for Dice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fair_dice::Dice({} per throw)", self.per_throw)
    }
}

impl Dice {
    /// The dice of a game with these seeds and `per_throw` dice per throw (1 or 2).
    pub fn new(server_seed: &ServerSeed, seeds: &ClientSeeds, per_throw: usize) -> Dice {
        Dice {
            keyed: keyed(server_seed),
            combined: seeds.combined(),
            per_throw,
        }
    }

    /// The dice of throw `k`.
    pub fn throw(&self, k: u64) -> Vec<u8> {
        self.keyed.throw(&self.combined, k, self.per_throw)
    }
}

/// One recorded throw, as a game's log shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedThrow {
    /// The throw number the log gives it.
    pub number: u64,
    /// Who threw.
    pub colour: Colour,
    /// The dice shown.
    pub dice: Vec<u8>,
}

/// What a verifier needs from a game's record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    /// The scheme named by the record ([`SCHEME`]).
    pub scheme: String,
    /// The commitment published at the start (hex).
    pub commitment: String,
    /// The revealed server seed (hex); `None` while the game runs.
    pub server_seed: Option<String>,
    /// The client seeds published at the start.
    pub client_seeds: Vec<(Colour, String)>,
    /// Dice per throw of the game's rule set (1 or 2).
    pub per_throw: usize,
    /// Every throw in the log's order.
    pub throws: Vec<RecordedThrow>,
}

/// Why a record's dice do not verify.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The record names another construction.
    #[error("unknown dice scheme {0:?} (this verifier knows {SCHEME})")]
    Scheme(String),
    /// The server seed has not been revealed (the game is not over).
    #[error("the server seed is not revealed yet: the game is not over")]
    NotRevealed,
    /// A seed in the record is malformed.
    #[error("{0}")]
    BadSeed(String),
    /// `SHA-256(server_seed)` is not the published commitment.
    #[error("the revealed server seed does not match the commitment {commitment}")]
    Commitment {
        /// The published commitment.
        commitment: String,
    },
    /// The `index`-th throw of the log (0-based) carries the wrong number: throws were
    /// left out, repeated or reordered.
    #[error(
        "throw {expected} is missing: the log's throw at position {index} is numbered {found}"
    )]
    Order {
        /// Position in the log.
        index: usize,
        /// The number it should carry.
        expected: u64,
        /// The number it carries.
        found: u64,
    },
    /// Throw `number` shows other dice than the seeds give.
    #[error("throw {number} ({colour}): the log shows {recorded:?}, the seeds give {expected:?}")]
    Dice {
        /// The throw number.
        number: u64,
        /// Who threw.
        colour: Colour,
        /// The dice in the log.
        recorded: Vec<u8>,
        /// The dice the seeds give.
        expected: Vec<u8>,
    },
}

impl VerifyError {
    /// The number of the first throw that fails, for errors about one throw.
    pub fn throw_number(&self) -> Option<u64> {
        match self {
            VerifyError::Order { expected, .. } => Some(*expected),
            VerifyError::Dice { number, .. } => Some(*number),
            _ => None,
        }
    }
}

/// Checks a record: the scheme, the commitment against the revealed seed, that throws
/// are numbered 0, 1, 2… in order, and every throw's dice. Returns the number of throws
/// checked.
///
/// # Errors
/// The first problem found, in that order ([`VerifyError`]).
pub fn verify(claim: &Claim) -> Result<usize, VerifyError> {
    if claim.scheme != SCHEME {
        return Err(VerifyError::Scheme(claim.scheme.clone()));
    }
    let seed_hex = claim
        .server_seed
        .as_deref()
        .ok_or(VerifyError::NotRevealed)?;
    let server_seed = ServerSeed::from_hex(seed_hex).map_err(VerifyError::BadSeed)?;
    if server_seed.commitment_hex() != claim.commitment.trim().to_ascii_lowercase() {
        return Err(VerifyError::Commitment {
            commitment: claim.commitment.clone(),
        });
    }
    let seeds = ClientSeeds::new(claim.client_seeds.clone()).map_err(VerifyError::BadSeed)?;
    let dice = Dice::new(&server_seed, &seeds, claim.per_throw);
    for (index, t) in claim.throws.iter().enumerate() {
        let expected_number = index as u64;
        if t.number != expected_number {
            return Err(VerifyError::Order {
                index,
                expected: expected_number,
                found: t.number,
            });
        }
        let expected = dice.throw(t.number);
        if expected != t.dice {
            return Err(VerifyError::Dice {
                number: t.number,
                colour: t.colour,
                recorded: t.dice.clone(),
                expected,
            });
        }
    }
    Ok(claim.throws.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed() -> ServerSeed {
        ServerSeed(std::array::from_fn(|i| i as u8))
    }

    #[test]
    fn client_seeds_are_checked_and_sorted() {
        assert!(validate_client_seed("").is_err());
        assert!(validate_client_seed(&"a".repeat(65)).is_err());
        assert!(validate_client_seed("a b").is_err());
        assert!(validate_client_seed("ñ").is_err());
        assert!(validate_client_seed(&"a".repeat(64)).is_ok());
        let s = ClientSeeds::new(vec![
            (Colour::Red, "r".into()),
            (Colour::Yellow, "yy".into()),
        ])
        .unwrap();
        assert_eq!(s.combined(), b"Y\x02yyR\x01r".to_vec());
        assert!(
            ClientSeeds::new(vec![(Colour::Red, "a".into()), (Colour::Red, "b".into())]).is_err()
        );
    }

    #[test]
    fn the_message_is_seeds_then_big_endian_numbers() {
        assert_eq!(
            message(b"Y\x01a", 0x0102, 3),
            b"Y\x01a\x00\x00\x00\x00\x00\x00\x01\x02\x00\x00\x00\x03".to_vec()
        );
    }

    #[test]
    fn a_throw_drops_bytes_from_252_and_reads_further_blocks() {
        // Find a throw whose block 0 has a byte ≥ 252 among the bytes read.
        let seeds = ClientSeeds::new(vec![(Colour::Yellow, "a".into())]).unwrap();
        let c = seeds.combined();
        let k = (0..10_000u64)
            .find(|&k| {
                block(&seed(), &c, k, 0)[..2]
                    .iter()
                    .any(|&b| b >= REJECT_FROM)
            })
            .expect("some block starts with a rejected byte");
        let b = block(&seed(), &c, k, 0);
        let expected: Vec<u8> = b
            .iter()
            .filter(|&&x| x < REJECT_FROM)
            .take(2)
            .map(|x| x % 6 + 1)
            .collect();
        assert_eq!(throw(&seed(), &seeds, k, 2), expected);
        // 32 dice need block 1 too whenever block 0 rejects a byte.
        let stream: Vec<u8> = b
            .iter()
            .chain(block(&seed(), &c, k, 1).iter())
            .copied()
            .collect();
        let expected: Vec<u8> = stream
            .iter()
            .filter(|&&x| x < REJECT_FROM)
            .take(32)
            .map(|x| x % 6 + 1)
            .collect();
        assert_eq!(expected.len(), 32);
        assert_eq!(throw(&seed(), &seeds, k, 32), expected);
    }

    #[test]
    fn verify_names_the_first_bad_throw() {
        let seeds = vec![
            (Colour::Yellow, "ana".to_owned()),
            (Colour::Red, "red".to_owned()),
        ];
        let cs = ClientSeeds::new(seeds.clone()).unwrap();
        let dice = Dice::new(&seed(), &cs, 2);
        let throws: Vec<RecordedThrow> = (0..20)
            .map(|k| RecordedThrow {
                number: k,
                colour: if k % 2 == 0 {
                    Colour::Yellow
                } else {
                    Colour::Red
                },
                dice: dice.throw(k),
            })
            .collect();
        let good = Claim {
            scheme: SCHEME.into(),
            commitment: seed().commitment_hex(),
            server_seed: Some(seed().to_hex()),
            client_seeds: seeds,
            per_throw: 2,
            throws,
        };
        assert_eq!(verify(&good), Ok(20));

        let mut one_die = good.clone();
        let d = &mut one_die.throws[7].dice[1];
        *d = *d % 6 + 1;
        assert_eq!(verify(&one_die).unwrap_err().throw_number(), Some(7));

        let mut swapped = good.clone();
        let (a, b) = (
            swapped.throws[3].dice.clone(),
            swapped.throws[4].dice.clone(),
        );
        if a != b {
            swapped.throws[3].dice = b;
            swapped.throws[4].dice = a;
            assert_eq!(verify(&swapped).unwrap_err().throw_number(), Some(3));
        }
        let mut reordered = good.clone();
        reordered.throws.swap(5, 6);
        assert_eq!(
            verify(&reordered),
            Err(VerifyError::Order {
                index: 5,
                expected: 5,
                found: 6
            })
        );

        let mut other_seed = good.clone();
        let mut s = seed();
        s.0[0] ^= 1;
        other_seed.server_seed = Some(s.to_hex());
        assert!(matches!(
            verify(&other_seed),
            Err(VerifyError::Commitment { .. })
        ));

        let mut hidden = good.clone();
        hidden.server_seed = None;
        assert_eq!(verify(&hidden), Err(VerifyError::NotRevealed));
    }
}
