//! The position format: [`Position`], a plain, unvalidated description of the whole
//! game state with public fields (serde JSON, documented in `proto/POSITION.md`), and
//! its validation into a [`Game`].

use crate::board::{cell, is_safe, Colour, Location, COLOURS, GOAL, NEST, PIECES};
use crate::game::{Game, OpenPairs, Stage, Throw};
use crate::rules::RuleSet;
use crate::types::{Dice, Outcome, PieceId, SeatStatus, WinReason};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One piece in a [`Position`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PieceState {
    /// Where it stands.
    pub at: Location,
    /// It arrived after the other piece on its square (D-6). Only meaningful, and
    /// required on exactly one of them, when two pieces share a square.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub late: bool,
}

/// One seated colour in a [`Position`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlayerPosition {
    /// The seat's colour.
    pub colour: Colour,
    /// `playing` or `abandoned`.
    pub status: SeatStatus,
    /// The four pieces, by index 0..=3.
    pub pieces: [PieceState; PIECES],
    /// Consecutive timeouts (R-CLOCK, R-LEAVE).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timeouts: u8,
}

fn is_zero(v: &u8) -> bool {
    *v == 0
}

/// What the game waits for, in a [`Position`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StagePosition {
    /// The player to act must roll.
    Roll,
    /// The player to act is playing a throw.
    Move {
        /// The throw's dice.
        dice: Dice,
        /// Which dice are used, by index.
        #[serde(default)]
        used: [bool; 2],
        /// A pending bonus move, in squares (R-BONUS).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bonus: Option<u8>,
        /// Blockades (as piece pairs) the doubles force open (R-OPEN, D-3).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        must_open: Vec<[PieceId; 2]>,
    },
    /// The game has ended.
    Finished {
        /// The result.
        outcome: Outcome,
    },
}

/// The whole state of a game, unvalidated. `Game::try_from(position)` validates it;
/// `Position::from(&game)` describes a game. JSON round-trips exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Position {
    /// The rule set.
    pub rules: RuleSet,
    /// Seated colours, in board order (yellow, blue, red, green).
    pub players: Vec<PlayerPosition>,
    /// Whose turn it is.
    pub turn: Colour,
    /// What the game waits for.
    pub stage: StagePosition,
    /// Doubles thrown in a row this turn (R-THIRD): 0..=2.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub doubles_in_row: u8,
    /// Index of the current player's piece that moved last this turn (R-THIRD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_moved: Option<u8>,
}

/// Why a [`Position`] is not a possible game state.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// The rule set is not playable.
    #[error("{0}")]
    Unsupported(String),
    /// Seats are invalid (R-SEAT).
    #[error("R-SEAT: {0}")]
    Seats(String),
    /// More than two pieces share a square (R-CAP).
    #[error("R-CAP: {0}")]
    Capacity(String),
    /// Two colours share a square that is not safe (R-CAPTURE would have captured).
    #[error("R-CAPTURE: {0}")]
    Mixed(String),
    /// Arrival order marks are inconsistent (D-6).
    #[error("D-6: {0}")]
    Arrival(String),
    /// The turn state is impossible.
    #[error("{0}")]
    Stage(String),
}

impl From<&Game> for Position {
    fn from(g: &Game) -> Position {
        let players = Colour::ALL
            .into_iter()
            .filter(|c| g.seats[c.index()] != SeatStatus::Empty)
            .map(|c| {
                let k = c.index();
                PlayerPosition {
                    colour: c,
                    status: g.seats[k],
                    pieces: std::array::from_fn(|i| PieceState {
                        at: Location::from_progress(c, g.pos[k][i]),
                        late: g.late & (1 << (k * PIECES + i)) != 0,
                    }),
                    timeouts: g.timeouts[k],
                }
            })
            .collect();
        let stage = match g.stage {
            Stage::Roll => StagePosition::Roll,
            Stage::Move(t) => StagePosition::Move {
                dice: t.dice,
                used: t.used,
                bonus: t.bonus,
                must_open: t
                    .open
                    .as_slice()
                    .iter()
                    .map(|&(a, b)| [PieceId::from_gid(a as usize), PieceId::from_gid(b as usize)])
                    .collect(),
            },
            Stage::Finished(o) => StagePosition::Finished { outcome: o },
        };
        Position {
            rules: g.rules,
            players,
            turn: g.turn,
            stage,
            doubles_in_row: g.doubles,
            last_moved: g.last_moved,
        }
    }
}

impl TryFrom<&Position> for Game {
    type Error = PositionError;

    /// Validates a position: a supported rule set; 2..=4 distinct seats; at most two
    /// pieces on a ring or home-column square; two colours together only on safe
    /// squares; consistent arrival marks; abandoned colours' pieces in the nest; a
    /// possible turn state.
    fn try_from(p: &Position) -> Result<Game, PositionError> {
        p.rules
            .check_supported()
            .map_err(PositionError::Unsupported)?;
        let mut seats = [SeatStatus::Empty; COLOURS];
        let mut pos = [[NEST; PIECES]; COLOURS];
        let mut late: u16 = 0;
        let mut timeouts = [0u8; COLOURS];
        for pl in &p.players {
            let k = pl.colour.index();
            if seats[k] != SeatStatus::Empty {
                return Err(PositionError::Seats(format!(
                    "colour {} is listed twice",
                    pl.colour
                )));
            }
            if pl.status == SeatStatus::Empty {
                return Err(PositionError::Seats(format!(
                    "colour {} is listed with status empty; leave empty seats out",
                    pl.colour
                )));
            }
            seats[k] = pl.status;
            timeouts[k] = pl.timeouts;
            for (i, piece) in pl.pieces.iter().enumerate() {
                pos[k][i] = piece.at.to_progress(pl.colour).ok_or_else(|| {
                    PositionError::Seats(format!(
                        "{} piece {i}: impossible location {}",
                        pl.colour, piece.at
                    ))
                })?;
                if piece.late {
                    late |= 1 << (k * PIECES + i);
                }
                if pl.status == SeatStatus::Abandoned && pos[k][i] != NEST {
                    return Err(PositionError::Seats(format!(
                        "{} abandoned, so its pieces are off the board, but piece {i} is on {}",
                        pl.colour, piece.at
                    )));
                }
            }
        }
        let n = p.players.len();
        if n < p.rules.min_players as usize || n > p.rules.max_players as usize {
            return Err(PositionError::Seats(format!(
                "{n} seated colours; this rule set plays with {} to {}",
                p.rules.min_players, p.rules.max_players
            )));
        }
        // Capacity, mixing and arrival order per cell.
        let mut by_cell: Vec<Vec<usize>> = vec![Vec::new(); crate::board::CELLS];
        for k in 0..COLOURS {
            for i in 0..PIECES {
                let c = cell(k, pos[k][i]);
                if c != 0 {
                    by_cell[c].push(k * PIECES + i);
                } else if late & (1 << (k * PIECES + i)) != 0 {
                    return Err(PositionError::Arrival(format!(
                        "{} is marked late but stands in the nest or goal",
                        PieceId::from_gid(k * PIECES + i)
                    )));
                }
            }
        }
        for (c, occ) in by_cell.iter().enumerate() {
            let name = || {
                let g = occ[0];
                Location::from_progress(Colour::ALL[g / PIECES], pos[g / PIECES][g % PIECES])
                    .to_string()
            };
            match occ.len() {
                0 => {}
                1 => {
                    if late & (1 << occ[0]) != 0 {
                        return Err(PositionError::Arrival(format!(
                            "{} is marked late but is alone on {}",
                            PieceId::from_gid(occ[0]),
                            name()
                        )));
                    }
                }
                2 => {
                    let (a, b) = (occ[0], occ[1]);
                    if a / PIECES != b / PIECES
                        && (c > crate::board::RING as usize || !is_safe(c as u8))
                    {
                        return Err(PositionError::Mixed(format!(
                            "{} and {} share square {}, which is not a safe square",
                            PieceId::from_gid(a),
                            PieceId::from_gid(b),
                            name()
                        )));
                    }
                    match (late & (1 << a) != 0, late & (1 << b) != 0) {
                        (true, true) => {
                            return Err(PositionError::Arrival(format!(
                            "both pieces on {} are marked late; only the one that arrived last is",
                            name()
                        )))
                        }
                        (false, false) => late |= 1 << b,
                        _ => {}
                    }
                }
                m => {
                    return Err(PositionError::Capacity(format!(
                        "{m} pieces on square {}; at most two fit on a square",
                        name()
                    )))
                }
            }
        }
        let stage = match &p.stage {
            StagePosition::Roll => Stage::Roll,
            StagePosition::Move {
                dice,
                used,
                bonus,
                must_open,
            } => {
                if dice.len() != p.rules.dice as usize {
                    return Err(PositionError::Stage(format!(
                        "R-ROLL: this rule set throws {} dice, the position has {}",
                        p.rules.dice,
                        dice.len()
                    )));
                }
                if let Some(b) = bonus {
                    if *b != p.rules.capture_bonus && *b != p.rules.goal_bonus {
                        return Err(PositionError::Stage(format!(
                            "R-BONUS: a bonus is {} or {} squares, not {b}",
                            p.rules.capture_bonus, p.rules.goal_bonus
                        )));
                    }
                }
                let mut open = OpenPairs::default();
                for [a, b] in must_open {
                    if a.piece as usize >= PIECES || b.piece as usize >= PIECES || a == b {
                        return Err(PositionError::Stage(format!(
                            "R-OPEN: bad blockade pair {a}+{b}"
                        )));
                    }
                    if a.colour != p.turn && b.colour != p.turn {
                        return Err(PositionError::Stage(format!(
                            "R-OPEN: blockade {a}+{b} has no piece of the player to move"
                        )));
                    }
                    if !open.push(a.gid(), b.gid()) {
                        return Err(PositionError::Stage(
                            "R-OPEN: at most four blockades".into(),
                        ));
                    }
                }
                let mut used = *used;
                if dice.len() == 1 {
                    used[1] = true;
                }
                if used.iter().all(|u| *u) && bonus.is_none() {
                    return Err(PositionError::Stage(
                        "every die is used and no bonus is pending: the throw is over".into(),
                    ));
                }
                Stage::Move(Throw {
                    dice: *dice,
                    used: if dice.len() == 1 {
                        [used[0], false]
                    } else {
                        used
                    },
                    bonus: *bonus,
                    open,
                })
            }
            StagePosition::Finished { outcome } => {
                let w = outcome.winner.index();
                if seats[w] != SeatStatus::Playing {
                    return Err(PositionError::Stage(format!(
                        "R-WIN: the winner {} is not playing",
                        outcome.winner
                    )));
                }
                if outcome.reason == WinReason::Goal && pos[w].iter().any(|&q| q != GOAL) {
                    return Err(PositionError::Stage(format!(
                        "R-WIN: {} won by the goal but not all its pieces are there",
                        outcome.winner
                    )));
                }
                Stage::Finished(*outcome)
            }
        };
        if !matches!(stage, Stage::Finished(_)) {
            if seats[p.turn.index()] != SeatStatus::Playing {
                return Err(PositionError::Stage(format!(
                    "R-ORDER: {} is to act but is not playing",
                    p.turn
                )));
            }
            if let Some(c) = Colour::ALL
                .into_iter()
                .find(|c| pos[c.index()].iter().all(|&q| q == GOAL))
            {
                return Err(PositionError::Stage(format!(
                    "R-WIN: {c} has four pieces in the goal, so the game is over"
                )));
            }
        }
        if p.doubles_in_row > 2 {
            return Err(PositionError::Stage(format!(
                "R-THIRD: {} doubles in a row; the third ends the turn",
                p.doubles_in_row
            )));
        }
        if let Some(i) = p.last_moved {
            if i as usize >= PIECES {
                return Err(PositionError::Stage(format!(
                    "last moved piece {i} does not exist"
                )));
            }
        }
        Ok(Game {
            rules: p.rules,
            seats,
            pos,
            late,
            turn: p.turn,
            stage,
            doubles: p.doubles_in_row,
            last_moved: p.last_moved,
            timeouts,
            occ: [0; crate::board::CELLS],
        }
        .recounted())
    }
}

impl TryFrom<Position> for Game {
    type Error = PositionError;
    fn try_from(p: Position) -> Result<Game, PositionError> {
        Game::try_from(&p)
    }
}

impl Game {
    /// The whole state as a [`Position`].
    pub fn to_position(&self) -> Position {
        Position::from(self)
    }

    /// The state as JSON (the position format).
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.to_position()).unwrap_or_default()
    }

    /// Parses and validates a JSON position.
    pub fn from_json(s: &str) -> Result<Game, String> {
        let p: Position = serde_json::from_str(s).map_err(|e| format!("bad position JSON: {e}"))?;
        Game::try_from(&p).map_err(|e| e.to_string())
    }
}
