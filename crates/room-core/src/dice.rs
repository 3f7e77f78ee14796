//! The room's dice source: provably fair dice (`docs/FAIR_DICE.md`).
//!
//! A room draws its server seed when it is created and shows only the commitment; the
//! client seeds are fixed at the start; throw `k` is then
//! [`parchis_engine::fair_dice::Dice::throw`]`(k)`: a pure function of the seeds and the
//! throw's number, so a restart, a recovery or a disconnection gives the same dice. The
//! room counts the throws it has committed; a throw that is not committed (a refused
//! roll, a store failure) does not use up its number.

use parchis_engine::fair_dice::{self, ClientSeeds, ServerSeed};
use parchis_engine::Colour;
use parchis_protocol::{ClientSeedEntry, DiceInfo, DiceMode, GameDice, RoomEvent};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::Digest;

/// The dice record kept with a game in the store (`GameRecord::dice`). Holds the secret
/// server seed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredDice {
    /// `parchis-fair-dice-v1`.
    pub scheme: String,
    /// `fair` or `test`.
    pub mode: DiceMode,
    /// The server seed, 64 hex digits. Secret until the game is over.
    pub server_seed: String,
    /// The client seeds fixed at the start, board order.
    pub client_seeds: Vec<ClientSeedEntry>,
}

impl StoredDice {
    /// What of this record is public: everything but the server seed, which is shown
    /// only when `revealed` (the game is over).
    ///
    /// # Errors
    /// A message when the stored server seed is not 32 bytes of hex.
    pub fn info(&self, revealed: bool) -> Result<DiceInfo, String> {
        let seed = ServerSeed::from_hex(&self.server_seed)?;
        Ok(DiceInfo {
            scheme: self.scheme.clone(),
            mode: self.mode,
            commitment: seed.commitment_hex(),
            client_seeds: self.client_seeds.clone(),
            server_seed: revealed.then(|| seed.to_hex()),
        })
    }
}

/// Why a room has no dice source.
#[derive(Debug, thiserror::Error)]
pub enum DiceError {
    /// The OS random source failed.
    #[error("the OS random source failed: {0}")]
    Entropy(String),
    /// A stored dice record does not parse.
    #[error("stored dice record unreadable: {0}")]
    Stored(String),
}

/// Where a room's server seeds come from: the OS CSPRNG (the default, `mode: fair`) or,
/// in a test configuration, a fixed seed or one derived from a number (`mode: test`,
/// never verifiable). The server's `--dice-seed` sets `dice_seed`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiceConfig {
    /// Server seeds derived from this number and the room's ordinal (tests only).
    pub dice_seed: Option<u64>,
    /// Fixed server seed for every game (tests only, takes precedence over `dice_seed`).
    pub fixed_server_seed: Option<[u8; 32]>,
}

/// The game's seeds once fixed at the start.
#[derive(Clone, Debug)]
struct Fixed {
    seeds: ClientSeeds,
    dice: fair_dice::Dice,
}

/// One room's dice: server seed, mode, the seeds once the game started and the number of
/// the next throw.
#[derive(Clone, Debug)]
pub struct DiceSource {
    mode: DiceMode,
    server_seed: ServerSeed,
    fixed: Option<Fixed>,
    next: u64,
}

impl DiceSource {
    /// A new room's dice: a server seed from the OS CSPRNG (`mode: fair`), or in a test
    /// configuration the fixed server seed, else one derived from `dice_seed` and the
    /// room's `ordinal` (`mode: test`).
    ///
    /// # Errors
    /// [`DiceError::Entropy`] when the OS random source fails.
    pub fn draw(config: &DiceConfig, ordinal: u64) -> Result<DiceSource, DiceError> {
        let (mode, seed) = match (config.fixed_server_seed, config.dice_seed) {
            (Some(seed), _) => (DiceMode::Test, seed),
            (None, Some(dice_seed)) => {
                let mut h = sha2::Sha256::new();
                h.update(b"parchis-test-dice");
                h.update(dice_seed.to_be_bytes());
                h.update(ordinal.to_be_bytes());
                (DiceMode::Test, h.finalize().into())
            }
            (None, None) => {
                let mut seed = [0u8; fair_dice::SERVER_SEED_BYTES];
                rand::rngs::OsRng
                    .try_fill_bytes(&mut seed)
                    .map_err(|e| DiceError::Entropy(e.to_string()))?;
                (DiceMode::Fair, seed)
            }
        };
        Ok(DiceSource {
            mode,
            server_seed: ServerSeed(seed),
            fixed: None,
            next: 0,
        })
    }

    /// The dice of a stored game, `next` being the number of throws its log holds.
    ///
    /// # Errors
    /// [`DiceError::Stored`] when the record does not parse or its seeds are invalid.
    pub fn restored(
        stored: &serde_json::Value,
        per_throw: usize,
        next: u64,
    ) -> Result<DiceSource, DiceError> {
        let stored: StoredDice =
            serde_json::from_value(stored.clone()).map_err(|e| DiceError::Stored(e.to_string()))?;
        if stored.scheme != fair_dice::SCHEME {
            return Err(DiceError::Stored(format!("scheme {:?}", stored.scheme)));
        }
        let server_seed = ServerSeed::from_hex(&stored.server_seed).map_err(DiceError::Stored)?;
        let seeds = ClientSeeds::new(
            stored
                .client_seeds
                .iter()
                .map(|e| (e.colour, e.seed.clone()))
                .collect(),
        )
        .map_err(DiceError::Stored)?;
        Ok(DiceSource {
            mode: stored.mode,
            fixed: Some(Fixed {
                dice: fair_dice::Dice::new(&server_seed, &seeds, per_throw),
                seeds,
            }),
            server_seed,
            next,
        })
    }

    /// Dice for a game stored before fair dice (no dice record): a new server seed and
    /// the default client seeds, marked `test` since nothing was committed to at its
    /// start.
    ///
    /// # Errors
    /// [`DiceError::Entropy`] when the OS random source fails.
    pub fn legacy(
        config: &DiceConfig,
        ordinal: u64,
        colours: &[Colour],
        per_throw: usize,
    ) -> Result<DiceSource, DiceError> {
        let seeds: Vec<(Colour, Option<String>)> = colours.iter().map(|&c| (c, None)).collect();
        let mut dice = DiceSource::draw(config, ordinal)?
            .fixed(&seeds, per_throw)
            .map_err(DiceError::Stored)?;
        dice.mode = DiceMode::Test;
        Ok(dice)
    }

    /// A copy with the client seeds fixed for the start: `seeds` gives each seated
    /// colour's chosen seed, `None` for the default (the colour's name).
    ///
    /// # Errors
    /// A message when a seed is invalid (they are checked when given, so only a bug).
    pub fn fixed(
        &self,
        seeds: &[(Colour, Option<String>)],
        per_throw: usize,
    ) -> Result<DiceSource, String> {
        let seeds = ClientSeeds::new(
            seeds
                .iter()
                .map(|(c, s)| {
                    (
                        *c,
                        s.clone()
                            .unwrap_or_else(|| fair_dice::default_client_seed(*c)),
                    )
                })
                .collect(),
        )?;
        Ok(DiceSource {
            mode: self.mode,
            server_seed: self.server_seed,
            fixed: Some(Fixed {
                dice: fair_dice::Dice::new(&self.server_seed, &seeds, per_throw),
                seeds,
            }),
            next: 0,
        })
    }

    /// Whether the client seeds are fixed, i.e. a game was started with this server seed
    /// (which its end reveals).
    pub fn is_fixed(&self) -> bool {
        self.fixed.is_some()
    }

    /// The dice of the room's next game (a rematch): a new server seed, so a revealed one
    /// is never reused, no client seeds, throw numbers from 0. `fair`: 32 bytes from
    /// `entropy` (a CSPRNG the caller seeded from the OS); `test`: derived from this seed,
    /// so a seeded test run stays reproducible.
    pub fn successor(&self, entropy: &mut impl RngCore) -> DiceSource {
        let seed = match self.mode {
            DiceMode::Fair => {
                let mut seed = [0u8; fair_dice::SERVER_SEED_BYTES];
                entropy.fill_bytes(&mut seed);
                seed
            }
            DiceMode::Test => {
                let mut h = sha2::Sha256::new();
                h.update(b"parchis-test-dice-next-game");
                h.update(self.server_seed.0);
                h.finalize().into()
            }
        };
        DiceSource {
            mode: self.mode,
            server_seed: ServerSeed(seed),
            fixed: None,
            next: 0,
        }
    }

    /// The number of the next throw (the throws committed so far).
    pub fn next(&self) -> u64 {
        self.next
    }

    /// The dice of throw `k`; empty before the seeds are fixed (no throw can happen
    /// then).
    pub fn throw(&self, k: u64) -> Vec<u8> {
        self.fixed
            .as_ref()
            .map(|f| f.dice.throw(k))
            .unwrap_or_default()
    }

    /// Marks `count` more throws as committed.
    pub fn advance(&mut self, count: u64) {
        self.next += count;
    }

    /// Fair or test.
    pub fn mode(&self) -> DiceMode {
        self.mode
    }

    fn client_seeds(&self) -> Vec<ClientSeedEntry> {
        self.fixed
            .as_ref()
            .map(|f| {
                f.seeds
                    .seeds()
                    .iter()
                    .map(|(colour, seed)| ClientSeedEntry {
                        colour: *colour,
                        seed: seed.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// What is public now: commitment and mode, the client seeds once fixed, and the
    /// server seed when `revealed` (the game is over).
    pub fn info(&self, revealed: bool) -> DiceInfo {
        DiceInfo {
            scheme: fair_dice::SCHEME.to_owned(),
            mode: self.mode,
            commitment: self.server_seed.commitment_hex(),
            client_seeds: self.client_seeds(),
            server_seed: revealed.then(|| self.server_seed.to_hex()),
        }
    }

    /// The record to store with the game (secret server seed included).
    pub fn stored(&self) -> serde_json::Value {
        serde_json::to_value(StoredDice {
            scheme: fair_dice::SCHEME.to_owned(),
            mode: self.mode,
            server_seed: self.server_seed.to_hex(),
            client_seeds: self.client_seeds(),
        })
        .unwrap_or_default()
    }

    /// The event that ends a game: the server seed revealed.
    pub fn reveal(&self) -> RoomEvent {
        RoomEvent::DiceRevealed {
            server_seed: self.server_seed.to_hex(),
        }
    }
}

/// The public part of a stored game's dice record (the games API, the export): the
/// server seed only once the game is finished. `Ok(None)` for games before fair dice.
///
/// # Errors
/// The text saying what is unreadable: the record or its server seed (the caller logs
/// it and shows the game without dice).
pub fn public(g: &parchis_records::GameRecord) -> Result<Option<GameDice>, String> {
    let Some(record) = g.dice.clone() else {
        return Ok(None);
    };
    let stored: StoredDice = serde_json::from_value(record)
        .map_err(|e| format!("stored dice record unreadable: {e}"))?;
    let info = stored
        .info(g.is_finished())
        .map_err(|e| format!("stored server seed unreadable: {e}"))?;
    let dice_per_throw = serde_json::from_value::<parchis_engine::RuleSet>(g.rules.clone())
        .map(|r| r.dice.clamp(1, 2))
        .unwrap_or(2);
    Ok(Some(GameDice {
        info,
        dice_per_throw,
    }))
}

/// The fair-dice tags of the text export (`docs/FAIR_DICE.md`): `DiceScheme`,
/// `DiceMode`, `DiceCommitment`, `ClientSeeds`, `ServerSeed` once over, `OpeningThrows`
/// (`"k C a,b; …"`, when there was an opening roll) and `FirstRollThrow`, the number of
/// the first `roll` line.
pub fn export_tags(
    tags: &mut Vec<(String, String)>,
    d: &GameDice,
    opening: &[String],
    first_roll_throw: Option<u64>,
) {
    let mode = match d.info.mode {
        DiceMode::Fair => "fair",
        DiceMode::Test => "test",
    };
    tags.push(("DiceScheme".into(), d.info.scheme.clone()));
    tags.push(("DiceMode".into(), mode.into()));
    tags.push(("DiceCommitment".into(), d.info.commitment.clone()));
    let seeds: Vec<String> = d
        .info
        .client_seeds
        .iter()
        .map(|s| format!("{}={}", s.colour.letter(), s.seed))
        .collect();
    tags.push(("ClientSeeds".into(), seeds.join(" ")));
    if let Some(seed) = &d.info.server_seed {
        tags.push(("ServerSeed".into(), seed.clone()));
    }
    if !opening.is_empty() {
        tags.push(("OpeningThrows".into(), opening.join("; ")));
    }
    let first = first_roll_throw.unwrap_or(opening.len() as u64);
    tags.push(("FirstRollThrow".into(), first.to_string()));
}

/// The number of throws a stored event log holds: every numbered opening-roll entry and
/// every numbered `dice_rolled` (one more than the last number).
pub fn throws_in<'a>(events: impl IntoIterator<Item = &'a RoomEvent>) -> u64 {
    events
        .into_iter()
        .flat_map(|e| match e {
            RoomEvent::OpeningRoll { rolls, .. } => rolls.iter().filter_map(|r| r.throw).collect(),
            RoomEvent::Game { throw, .. } => throw.iter().copied().collect(),
            _ => Vec::new(),
        })
        .map(|k| k + 1)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_configurations_are_marked_and_reproducible() {
        let fair = DiceSource::draw(&DiceConfig::default(), 1).unwrap();
        assert_eq!(fair.mode(), DiceMode::Fair);
        let other = DiceSource::draw(&DiceConfig::default(), 1).unwrap();
        assert_ne!(fair.info(true).server_seed, other.info(true).server_seed);

        let seeded = DiceConfig {
            dice_seed: Some(7),
            ..DiceConfig::default()
        };
        let a = DiceSource::draw(&seeded, 3).unwrap();
        assert_eq!(a.mode(), DiceMode::Test);
        assert_eq!(
            a.info(true),
            DiceSource::draw(&seeded, 3).unwrap().info(true)
        );
        assert_ne!(
            a.info(true),
            DiceSource::draw(&seeded, 4).unwrap().info(true)
        );

        let fixed = DiceConfig {
            fixed_server_seed: Some([9; 32]),
            dice_seed: Some(7),
        };
        let f = DiceSource::draw(&fixed, 3).unwrap();
        assert_eq!(f.mode(), DiceMode::Test);
        assert_eq!(f.info(true).server_seed, Some(hex::encode([9u8; 32])));
    }

    #[test]
    fn a_next_game_never_reuses_the_server_seed() {
        use rand::SeedableRng;
        let mut entropy = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        let fair = DiceSource::draw(&DiceConfig::default(), 1).unwrap();
        let played = fair.fixed(&[(Colour::Red, None)], 2).unwrap();
        let next = played.successor(&mut entropy);
        assert_eq!(next.mode(), DiceMode::Fair);
        assert!(!next.is_fixed() && played.is_fixed());
        assert_eq!(next.next(), 0);
        assert_ne!(next.info(true).server_seed, played.info(true).server_seed);
        let seeded = DiceConfig {
            dice_seed: Some(7),
            ..DiceConfig::default()
        };
        let test = DiceSource::draw(&seeded, 3).unwrap();
        let a = test.successor(&mut entropy).info(true);
        assert_eq!(
            a,
            test.successor(&mut entropy).info(true),
            "test: reproducible"
        );
        assert_eq!(a.mode, DiceMode::Test);
        assert_ne!(a.server_seed, test.info(true).server_seed);
    }

    #[test]
    fn the_server_seed_is_shown_only_when_revealed() {
        let d = DiceSource::draw(&DiceConfig::default(), 1).unwrap();
        let lobby = d.info(false);
        assert!(lobby.server_seed.is_none() && lobby.client_seeds.is_empty());
        let started = d
            .fixed(
                &[(Colour::Red, Some("abc".into())), (Colour::Yellow, None)],
                2,
            )
            .unwrap();
        let info = started.info(false);
        assert_eq!(info.commitment, lobby.commitment);
        assert_eq!(info.server_seed, None);
        assert_eq!(info.client_seeds[0].seed, "yellow");
        assert_eq!(info.client_seeds[1].seed, "abc");
        let stored = started.stored();
        let back = DiceSource::restored(&stored, 2, 5).unwrap();
        assert_eq!(back.next(), 5);
        assert_eq!(back.throw(4), started.throw(4));
        let revealed: StoredDice = serde_json::from_value(stored).unwrap();
        assert_eq!(revealed.info(true).unwrap(), started.info(true));
    }
}
