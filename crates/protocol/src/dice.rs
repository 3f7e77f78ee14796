//! Provably fair dice on the wire (`docs/FAIR_DICE.md`): the commitment, the seeds and
//! the revealed server seed of a game, as the room view, `game_started` and the games
//! API show them.

use parchis_engine::Colour;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a game's dice were made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiceMode {
    /// The server seed came from the OS CSPRNG: the game's dice can be verified.
    Fair,
    /// Test configuration (`PARCHIS_DICE_SEED`, a fixed server seed): the server seed
    /// was not secret, so the game is never reported as verified.
    Test,
}

/// One player's client seed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClientSeedEntry {
    /// The seat.
    pub colour: Colour,
    /// 1 to 64 characters from `A-Z a-z 0-9 _ -`; the colour's name when the player gave
    /// none.
    pub seed: String,
}

/// A game's dice: what is public of them at this point of the game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiceInfo {
    /// The construction, `parchis-fair-dice-v1`.
    pub scheme: String,
    /// `fair`, or `test` for a test configuration (never verifiable).
    pub mode: DiceMode,
    /// `SHA-256(server_seed)`, 64 lower-case hex digits; known from the lobby on.
    pub commitment: String,
    /// Every seated colour's client seed, in board order, fixed at the start; empty
    /// (absent) before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_seeds: Vec<ClientSeedEntry>,
    /// The server seed (64 hex digits), revealed once the game is over; absent before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_seed: Option<String>,
}

/// A stored game's fair dice, as the games API shows them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GameDice {
    /// Scheme, mode, commitment, client seeds, and `server_seed` once the game is over.
    #[serde(flatten)]
    pub info: DiceInfo,
    /// Dice per throw of the game's rule set (1 or 2).
    pub dice_per_throw: u8,
}
