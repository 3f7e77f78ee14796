//! Board geometry (reference §1): colours, the ring, safe squares, home columns, goal
//! and nest, and the per-piece *progress* coordinate the engine works in.
//!
//! Every colour owns a stretch of 17 ring squares. Within colour `k`'s stretch the exit
//! square is `17k + 5`, the other safe squares are `17k + 12` and `17k + 17`, and the
//! colour turns off into its home column after square `17k` (68 for yellow). The
//! functions here are written in terms of the colour count so that 6- and 8-colour
//! boards (seed 001) only need a larger [`COLOURS`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Number of colours (seats) on the standard board.
pub const COLOURS: usize = 4;
/// Pieces per colour.
pub const PIECES: usize = 4;
/// Ring squares in one colour's stretch.
pub const STRETCH: u8 = 17;
/// Ring squares on the standard board (`17 × 4 = 68`), numbered `1..=68`.
pub const RING: u8 = STRETCH * COLOURS as u8;
/// Squares in a home column (`h1..=h7`).
pub const HOME_COLUMN: u8 = 7;

/// Progress value of a piece in the nest.
pub(crate) const NEST: u8 = 0;
/// Progress value of a piece on its exit square (step 0 of its path).
pub(crate) const EXIT: u8 = 1;
/// Progress value of the colour's last ring square (63 steps after the exit square).
pub(crate) const LAST_RING: u8 = 64;
/// Progress value of `h1`.
pub(crate) const H1: u8 = 65;
/// Progress value of the goal (71 steps after the exit square).
pub(crate) const GOAL: u8 = 72;
/// Number of occupancy cells: ring squares `1..=68`, then 7 home-column squares per colour.
pub(crate) const CELLS: usize = RING as usize + COLOURS * HOME_COLUMN as usize + 1;

/// A seat colour. The board index `k` (0..=3) orders colours counter-clockwise,
/// the direction pieces move: yellow, blue, red, green.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Colour {
    /// Amarillo; exit square 5, enters its home column after 68.
    Yellow,
    /// Azul; exit square 22, enters its home column after 17.
    Blue,
    /// Rojo; exit square 39, enters its home column after 34.
    Red,
    /// Verde; exit square 56, enters its home column after 51.
    Green,
}

impl Colour {
    /// All colours in board order (counter-clockwise).
    pub const ALL: [Colour; COLOURS] = [Colour::Yellow, Colour::Blue, Colour::Red, Colour::Green];

    /// Board index `k` (0..=3).
    pub fn index(self) -> usize {
        self as usize
    }

    /// Colour of board index `k`; `None` when `k >= 4`.
    pub fn from_index(k: usize) -> Option<Colour> {
        Colour::ALL.get(k).copied()
    }

    /// One-letter code used by the text notation: `Y`, `B`, `R`, `G`.
    pub fn letter(self) -> char {
        ['Y', 'B', 'R', 'G'][self.index()]
    }

    /// Inverse of [`Colour::letter`] (case-insensitive).
    pub fn from_letter(c: char) -> Option<Colour> {
        match c.to_ascii_uppercase() {
            'Y' => Some(Colour::Yellow),
            'B' => Some(Colour::Blue),
            'R' => Some(Colour::Red),
            'G' => Some(Colour::Green),
            _ => None,
        }
    }

    /// Lower-case English name, as on the wire (`"yellow"`).
    pub fn name(self) -> &'static str {
        ["yellow", "blue", "red", "green"][self.index()]
    }

    /// This colour's exit square (salida): `17k + 5`.
    pub fn exit_square(self) -> u8 {
        exit_square(self.index())
    }

    /// The last ring square before this colour's home column: `17k`, 68 for yellow.
    pub fn last_ring_square(self) -> u8 {
        ring_square(self.index(), LAST_RING)
    }
}

impl fmt::Display for Colour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Colour {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "yellow" | "y" | "amarillo" => Ok(Colour::Yellow),
            "blue" | "b" | "azul" => Ok(Colour::Blue),
            "red" | "r" | "rojo" => Ok(Colour::Red),
            "green" | "g" | "verde" => Ok(Colour::Green),
            other => Err(format!(
                "unknown colour {other:?} (expected yellow, blue, red or green)"
            )),
        }
    }
}

/// Exit square of colour index `k`: `17k + 5`.
pub(crate) fn exit_square(k: usize) -> u8 {
    STRETCH * k as u8 + 5
}

/// Whether ring square `square` (1..=68) is a safe square (seguro): `17k+5`, `17k+12`
/// or `17k+17` for some `k` (§1). The four exit squares are among them.
pub fn is_safe(square: u8) -> bool {
    matches!(square % STRETCH, 0 | 5 | 12)
}

/// Ring square (1..=68) where a piece of colour index `k` with ring progress
/// `pos` (1..=64) stands.
pub(crate) fn ring_square(k: usize, pos: u8) -> u8 {
    debug_assert!((EXIT..=LAST_RING).contains(&pos));
    ((exit_square(k) as u16 - 1 + pos as u16 - 1) % RING as u16) as u8 + 1
}

/// Occupancy cell of a piece: ring squares are cells `1..=68`, colour `k`'s home column
/// square `h_i` is cell `68 + 7k + i`; nest and goal are cell 0 (no capacity limit).
#[inline]
pub(crate) fn cell(k: usize, pos: u8) -> usize {
    CELL_TABLE[k][pos as usize] as usize
}

const fn cell_slow(k: usize, pos: u8) -> u8 {
    if pos == NEST || pos >= GOAL {
        0
    } else if pos <= LAST_RING {
        ((STRETCH as u16 * k as u16 + 5 - 1 + pos as u16 - 1) % RING as u16) as u8 + 1
    } else {
        RING + HOME_COLUMN * k as u8 + (pos - LAST_RING)
    }
}

/// `CELL_TABLE[k][pos]`: the cell of colour `k`'s piece at progress `pos`.
static CELL_TABLE: [[u8; GOAL as usize + 1]; COLOURS] = {
    let mut t = [[0u8; GOAL as usize + 1]; COLOURS];
    let mut k = 0;
    while k < COLOURS {
        let mut p = 0;
        while p <= GOAL as usize {
            t[k][p] = cell_slow(k, p as u8);
            p += 1;
        }
        k += 1;
    }
    t
};

/// Where a piece stands, in board terms.
///
/// Serialized (JSON and text notation) as a string: `"nest"`, `"goal"`, `"h1"`..`"h7"`
/// for the piece's own home column, or the ring square number `"1"`..`"68"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    /// In the nest (casa): not on the board.
    Nest,
    /// On ring square 1..=68.
    Ring(u8),
    /// On square 1..=7 of its own home column (pasillo).
    HomeColumn(u8),
    /// In the goal (meta).
    Goal,
}

impl Location {
    /// Location of a piece of colour `colour` with internal progress `pos`.
    pub(crate) fn from_progress(colour: Colour, pos: u8) -> Location {
        match pos {
            NEST => Location::Nest,
            EXIT..=LAST_RING => Location::Ring(ring_square(colour.index(), pos)),
            H1..=71 => Location::HomeColumn(pos - LAST_RING),
            _ => Location::Goal,
        }
    }

    /// Internal progress of a piece of `colour` at this location; `None` for an
    /// impossible location (ring square out of 1..=68 or not on the colour's path,
    /// home square out of 1..=7).
    pub(crate) fn to_progress(self, colour: Colour) -> Option<u8> {
        match self {
            Location::Nest => Some(NEST),
            Location::Goal => Some(GOAL),
            Location::HomeColumn(h) if (1..=HOME_COLUMN).contains(&h) => Some(LAST_RING + h),
            Location::Ring(sq) if (1..=RING).contains(&sq) => {
                // §1: the ring part of a colour's path is its exit square .. its last ring
                // square; the squares behind its exit are not on it.
                let exit = colour.exit_square();
                Some((sq + RING - exit) % RING + 1).filter(|&p| p <= LAST_RING)
            }
            _ => None,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Nest => f.write_str("nest"),
            Location::Goal => f.write_str("goal"),
            Location::HomeColumn(h) => write!(f, "h{h}"),
            Location::Ring(sq) => write!(f, "{sq}"),
        }
    }
}

impl FromStr for Location {
    type Err = String;
    /// Accepts `nest`/`n`, `goal`/`g`, `h1`..`h7`, `1`..`68`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "nest" | "n" => return Ok(Location::Nest),
            "goal" | "g" => return Ok(Location::Goal),
            _ => {}
        }
        if let Some(rest) = s.strip_prefix('h') {
            return match rest.parse::<u8>() {
                Ok(h) if (1..=HOME_COLUMN).contains(&h) => Ok(Location::HomeColumn(h)),
                _ => Err(format!("bad home-column square {s:?} (expected h1..h7)")),
            };
        }
        match s.parse::<u8>() {
            Ok(sq) if (1..=RING).contains(&sq) => Ok(Location::Ring(sq)),
            _ => Err(format!(
                "bad location {s:?} (expected nest, goal, h1..h7 or a ring square 1..68)"
            )),
        }
    }
}

impl Serialize for Location {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Location {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for Location {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Location".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "Where a piece stands: \"nest\", \"goal\", \"h1\"..\"h7\" (own home column) or a ring square \"1\"..\"68\".",
            "pattern": "^(nest|goal|h[1-7]|[1-9]|[1-5][0-9]|6[0-8])$"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_and_last_ring_squares_match_reference_table() {
        let got: Vec<(u8, u8)> = Colour::ALL
            .iter()
            .map(|c| (c.exit_square(), c.last_ring_square()))
            .collect();
        assert_eq!(got, vec![(5, 68), (22, 17), (39, 34), (56, 51)]);
    }

    #[test]
    fn twelve_safe_squares() {
        let safe: Vec<u8> = (1..=RING).filter(|&s| is_safe(s)).collect();
        assert_eq!(safe, vec![5, 12, 17, 22, 29, 34, 39, 46, 51, 56, 63, 68]);
    }

    #[test]
    fn progress_round_trips_through_locations() {
        for c in Colour::ALL {
            for pos in 0..=GOAL {
                let loc = Location::from_progress(c, pos);
                assert_eq!(loc.to_progress(c), Some(pos), "{c} {pos} {loc}");
                assert_eq!(loc.to_string().parse::<Location>(), Ok(loc));
            }
        }
    }

    #[test]
    fn cell_table_matches_ring_squares() {
        for k in 0..COLOURS {
            for pos in EXIT..=LAST_RING {
                assert_eq!(cell(k, pos), ring_square(k, pos) as usize);
            }
            assert_eq!(cell(k, NEST), 0);
            assert_eq!(cell(k, GOAL), 0);
            assert_eq!(cell(k, H1), RING as usize + 7 * k + 1);
        }
    }

    #[test]
    fn path_is_71_steps_from_exit_to_goal() {
        // §1: exit square → … → last ring square → h1 … h7 → goal is 63 + 8 = 71 steps.
        assert_eq!(GOAL - EXIT, 71);
        assert_eq!(
            Location::from_progress(Colour::Blue, LAST_RING),
            Location::Ring(17)
        );
        assert_eq!(
            Location::from_progress(Colour::Blue, H1),
            Location::HomeColumn(1)
        );
    }
}
