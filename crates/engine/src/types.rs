//! Value types shared by the game state, actions and events: dice, seats, outcomes,
//! piece identifiers.

use crate::board::Colour;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The dice of one throw: one or two values, each 1..=6.
///
/// Serialized as a JSON array: `[3, 4]` (two dice) or `[6]` (one die).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dice {
    values: [u8; 2],
    len: u8,
}

impl Dice {
    /// Two dice. Errors when a value is outside 1..=6 (R-ROLL).
    pub fn two(a: u8, b: u8) -> Result<Dice, String> {
        Dice::from_slice(&[a, b])
    }

    /// One or two dice from a slice. Errors on any other length or a value outside 1..=6.
    pub fn from_slice(values: &[u8]) -> Result<Dice, String> {
        if values.is_empty() || values.len() > 2 {
            return Err(format!("a throw has one or two dice, got {}", values.len()));
        }
        if let Some(v) = values.iter().find(|v| !(1..=6).contains(*v)) {
            return Err(format!("a die shows 1 to 6, got {v}"));
        }
        let mut d = Dice {
            values: [0, 0],
            len: values.len() as u8,
        };
        d.values[..values.len()].copy_from_slice(values);
        Ok(d)
    }

    /// The values, in the order rolled.
    pub fn values(&self) -> &[u8] {
        &self.values[..self.len as usize]
    }

    /// Number of dice (1 or 2).
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Always false: a throw has at least one die.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Two dice showing the same value (R-DOUBLES).
    pub fn is_doubles(&self) -> bool {
        self.len == 2 && self.values[0] == self.values[1]
    }
}

impl fmt::Display for Dice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.values();
        if v.len() == 2 {
            write!(f, "{},{}", v[0], v[1])
        } else {
            write!(f, "{}", v[0])
        }
    }
}

impl Serialize for Dice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.values().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Dice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Vec::<u8>::deserialize(d)?;
        Dice::from_slice(&v).map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for Dice {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Dice".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "array",
            "description": "The dice of one throw: one or two values 1..6.",
            "items": { "type": "integer", "minimum": 1, "maximum": 6 },
            "minItems": 1,
            "maxItems": 2
        })
    }
}

/// State of a colour's seat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeatStatus {
    /// Nobody plays this colour.
    Empty,
    /// A player is in the game with this colour.
    Playing,
    /// The player abandoned (R-LEAVE): pieces off the board, turns skipped.
    Abandoned,
    /// The player has all four pieces in the goal and the game plays on for the other
    /// places (seed 001): turns skipped.
    Finished,
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WinReason {
    /// Four pieces in the goal (R-WIN).
    Goal,
    /// Every other player abandoned (R-LEAVE, D-5).
    Forfeit,
}

/// The result of a finished game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    /// The winning colour.
    pub winner: Colour,
    /// How the game was won.
    pub reason: WinReason,
    /// The winner's partner, in pair play (seed 004).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner: Option<Colour>,
}

/// One piece: its colour and its index 0..=3 within the colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct PieceId {
    /// The piece's colour.
    pub colour: Colour,
    /// Index 0..=3 within its colour.
    pub piece: u8,
}

impl PieceId {
    pub(crate) fn gid(self) -> usize {
        self.colour.index() * 4 + self.piece as usize
    }
    pub(crate) fn from_gid(g: usize) -> PieceId {
        PieceId {
            colour: Colour::ALL[g / 4],
            piece: (g % 4) as u8,
        }
    }
}

impl fmt::Display for PieceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.colour.letter(), self.piece)
    }
}
