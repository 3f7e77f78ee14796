//! The position format: [`Position`], a plain, unvalidated description of the whole
//! game state with public fields (serde JSON, documented in `proto/POSITION.md`), and
//! its validation into a [`Game`].
//!
//! Why one file of ~640 lines: the validation is one ordered list of checks, each naming
//! the rule or section a bad position breaks; split, the order would be harder to follow.

use crate::board::{
    cell, is_safe, Colour, Location, COLOURS, GOAL, HOME_COLUMN, NEST, PIECES, RING,
};
use crate::game::{Game, Stage, Throw};
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
    /// Finishing place (1 = first) once all four pieces are in the goal, in play-on
    /// and pair games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<u8>,
    /// Variant `two-out` only: this colour's first 5 of the game is still to come, so
    /// it will bring out two pieces (seed 001 "al sacar el primer 5"; D-23). Written
    /// for every colour of a `two-out` game, omitted (false) otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_five: Option<bool>,
}

fn is_zero(v: &u8) -> bool {
    *v == 0
}

/// A blockade the player held when the throw began (R-OPEN, seeds 002/003).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HeldBlockade {
    /// Its two pieces.
    pub pieces: [PieceId; 2],
    /// Where it stood, in the first piece's terms.
    pub at: Location,
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
        /// Which values are used, by index (of `parts` when present, else of `dice`);
        /// empty means none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        used: Vec<bool>,
        /// The four parts of the doubles bonus (tops and bottoms, 14 squares; seeds
        /// 002/003), when this throw plays them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<u8>,
        /// Pending bonus moves, in squares, in the order they will be played (R-BONUS).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        bonus: Vec<u8>,
        /// Blockades held when the throw began.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        blockades: Vec<HeldBlockade>,
        /// The throw must open one of `blockades` (R-OPEN, D-3); otherwise they are
        /// only kept so that they do not move on together (seeds 002/003).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        must_open: bool,
        /// The unused dice could not be played and are lost; only the pending `bonus`
        /// moves remain (bonuses after the dice, D-4, D-30). Omitted when false.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        dice_lost: bool,
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
    /// The piece that moved last this turn, with its colour — the player's own, or in
    /// pair play the partner's once the player has finished (R-THIRD, D-21). Kept only
    /// when this turn has had a repeat (`doubles_in_row` > 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_moved: Option<PieceId>,
    /// The previous throw of this turn played no move (seed 004's R-THIRD exception).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub previous_throw_unplayed: bool,
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
    /// A piece stands on a ring square that is not on its colour's path (rules.md §1).
    #[error("rules.md §1 (path): {0}")]
    Path(String),
    /// Two pieces that would block share a square that is not safe, with the variant
    /// `safe-only` (D-29).
    #[error("D-29: {0}")]
    SafeOnly(String),
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
                    place: (g.places[k] > 0).then_some(g.places[k]),
                    first_five: g.rules.two_out_on_first_five.then_some(g.first_five[k]),
                }
            })
            .collect();
        let stage = match g.stage {
            Stage::Roll => StagePosition::Roll,
            Stage::Move(t) => StagePosition::Move {
                dice: t.dice,
                used: if t.used.iter().any(|u| *u) {
                    t.used[..t.nparts as usize].to_vec()
                } else {
                    Vec::new()
                },
                parts: if t.bonus14 {
                    t.part_values().to_vec()
                } else {
                    Vec::new()
                },
                bonus: t.bonus[..t.nbonus as usize].to_vec(),
                blockades: t
                    .open
                    .as_slice()
                    .iter()
                    .zip(t.open.cells)
                    .map(|(&(a, b), c)| {
                        let first = PieceId::from_gid(a as usize);
                        HeldBlockade {
                            pieces: [first, PieceId::from_gid(b as usize)],
                            at: cell_location(first.colour, c as usize),
                        }
                    })
                    .collect(),
                must_open: t.must_open && t.open.len > 0,
                dice_lost: t.dice_lost,
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
            previous_throw_unplayed: g.prev_unplayed,
        }
    }
}

/// The progress of a `colour` piece at `at`; `what` names it in the error. Ring
/// squares off the colour's path (those between its home-column entry and its exit,
/// e.g. 1..4 for yellow) are refused: the notation never means `h1..h4` by them.
fn progress_of(colour: Colour, at: Location, what: &str) -> Result<u8, PositionError> {
    at.to_progress(colour).ok_or_else(|| match at {
        Location::Ring(sq) => {
            let (exit, last) = (colour.exit_square(), colour.last_ring_square());
            let behind = format!("{} to {}", last % RING + 1, exit - 1);
            PositionError::Path(format!(
                "{what} stands on ring square {sq}, which is not on {colour}'s path: a {colour} \
                 piece goes from its exit square {exit} round to square {last}, then into its \
                 home column h1..h7, so it never stands on squares {behind}"
            ))
        }
        other => PositionError::Seats(format!("{what}: impossible location {other}")),
    })
}

/// The location of cell `c` in colour `colour`'s terms.
fn cell_location(_colour: Colour, c: usize) -> Location {
    if c <= RING as usize {
        Location::Ring(c as u8)
    } else {
        Location::HomeColumn(((c - RING as usize - 1) % HOME_COLUMN as usize) as u8 + 1)
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
        let mut places = [0u8; COLOURS];
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
            places[k] = pl.place.unwrap_or(0);
            for (i, piece) in pl.pieces.iter().enumerate() {
                pos[k][i] = progress_of(pl.colour, piece.at, &format!("{} piece {i}", pl.colour))?;
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
                    let (ka, kb) = (a / PIECES, b / PIECES);
                    let mates = p.rules.teams && ka % 2 == kb % 2;
                    let safe_ok = c <= RING as usize
                        && is_safe(c as u8)
                        && p.rules.safe_with_opponent == crate::rules::SafeWithOpponent::Join;
                    let off_safe = c > RING as usize || !is_safe(c as u8);
                    if p.rules.blockades_only_on_safe && off_safe && (ka == kb || mates) {
                        return Err(PositionError::SafeOnly(format!(
                            "{} and {} share square {}, which is not a safe square; with the \
                             variant safe-only, blockades form only on safe squares",
                            PieceId::from_gid(a),
                            PieceId::from_gid(b),
                            name()
                        )));
                    }
                    if ka != kb && !mates && !safe_ok {
                        return Err(PositionError::Mixed(format!(
                            "{} and {} share square {}, where two colours cannot stand together",
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
                parts,
                bonus,
                blockades,
                must_open,
                dice_lost,
            } => {
                if dice.len() != p.rules.dice as usize {
                    return Err(PositionError::Stage(format!(
                        "R-ROLL: this rule set throws {} dice, the position has {}",
                        p.rules.dice,
                        dice.len()
                    )));
                }
                for b in bonus {
                    if *b != p.rules.capture_bonus && *b != p.rules.goal_bonus {
                        return Err(PositionError::Stage(format!(
                            "R-BONUS: a bonus is {} or {} squares, not {b}",
                            p.rules.capture_bonus, p.rules.goal_bonus
                        )));
                    }
                }
                if bonus.len() > 4 {
                    return Err(PositionError::Stage(
                        "R-BONUS: at most four pending bonuses".into(),
                    ));
                }
                let mut t = Throw::new(*dice);
                if !parts.is_empty() {
                    let a = dice.values()[0];
                    if !dice.is_doubles()
                        || p.rules.doubles_bonus == crate::rules::DoublesBonus::None
                        || parts.as_slice() != [a, a, 7 - a, 7 - a]
                    {
                        return Err(PositionError::Stage(format!(
                            "R-DOUBLES: the doubles bonus of {dice} is tops and bottoms [{a}, {a}, {b}, {b}]",
                            b = 7 - a
                        )));
                    }
                    t.parts = [a, a, 7 - a, 7 - a];
                    t.nparts = 4;
                    t.bonus14 = true;
                }
                if !used.is_empty() && used.len() != t.nparts as usize {
                    return Err(PositionError::Stage(format!(
                        "used has {} flags for {} values",
                        used.len(),
                        t.nparts
                    )));
                }
                for (i, u) in used.iter().enumerate() {
                    t.used[i] = *u;
                }
                for b in bonus {
                    t.push_bonus(*b);
                }
                let mover = mover_of(p, &pos);
                for h in blockades {
                    let [a, b] = h.pieces;
                    if a.piece as usize >= PIECES || b.piece as usize >= PIECES || a == b {
                        return Err(PositionError::Stage(format!(
                            "R-OPEN: bad blockade pair {a}+{b}"
                        )));
                    }
                    if a.colour != mover {
                        return Err(PositionError::Stage(format!(
                            "R-OPEN: the blockade {a}+{b} is not {mover}'s: a throw holds only \
                             the blockades of the colour being moved, its own piece first"
                        )));
                    }
                    let c =
                        h.at.to_progress(a.colour)
                            .map(|q| cell(a.colour.index(), q))
                            .filter(|&c| c != 0)
                            .ok_or_else(|| {
                                PositionError::Stage(format!(
                                    "R-OPEN: blockade {a}+{b} at {} is not a square",
                                    h.at
                                ))
                            })?;
                    if !t.open.push(a.gid(), b.gid(), c) {
                        return Err(PositionError::Stage(
                            "R-OPEN: at most four blockades".into(),
                        ));
                    }
                }
                t.must_open = *must_open;
                if *dice_lost {
                    if p.rules.bonus_timing != crate::rules::BonusTiming::AfterDice
                        || t.nbonus == 0
                        || t.remaining() == 0
                    {
                        return Err(PositionError::Stage(
                            "D-30: dice are lost only when unused dice remain and bonus moves \
                             wait for them (bonuses after the dice)"
                                .into(),
                        ));
                    }
                    t.dice_lost = true;
                }
                if t.remaining() == 0 && t.nbonus == 0 {
                    return Err(PositionError::Stage(
                        "every die is used and no bonus is pending: the throw is over".into(),
                    ));
                }
                Stage::Move(t)
            }
            StagePosition::Finished { outcome } => {
                let w = outcome.winner.index();
                if !matches!(seats[w], SeatStatus::Playing | SeatStatus::Finished) {
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
            let home = |c: Colour| pos[c.index()].iter().all(|&q| q == GOAL);
            let over = match p.rules.game_end {
                crate::rules::GameEnd::FirstToFinish => Colour::ALL.into_iter().find(|&c| home(c)),
                crate::rules::GameEnd::FirstTeam => Colour::ALL
                    .into_iter()
                    .find(|&c| home(c) && home(Colour::ALL[(c.index() + 2) % COLOURS])),
                crate::rules::GameEnd::PlayOn => Colour::ALL.into_iter().find(|&c| {
                    home(c) && (seats[c.index()] != SeatStatus::Finished || places[c.index()] == 0)
                }),
            };
            if let Some(c) = over {
                return Err(PositionError::Stage(format!(
                    "R-WIN: {c} has four pieces in the goal, so the game is over (or, playing on, it has finished with a place)"
                )));
            }
        }
        if p.doubles_in_row > 2 && p.rules.third_repeat != crate::rules::ThirdRepeat::None {
            return Err(PositionError::Stage(format!(
                "R-THIRD: {} doubles in a row; the third ends the turn",
                p.doubles_in_row
            )));
        }
        if let Some(id) = p.last_moved {
            if id.piece as usize >= PIECES {
                return Err(PositionError::Stage(format!(
                    "R-THIRD: last moved piece {id} does not exist"
                )));
            }
            if p.doubles_in_row == 0 {
                return Err(PositionError::Stage(format!(
                    "R-THIRD: last moved piece {id} given, but no repeat has been thrown this \
                     turn (doubles 0); the last moved piece is kept only for the third-repeat \
                     penalty"
                )));
            }
            let partner = Colour::ALL[(p.turn.index() + 2) % COLOURS];
            let finished = matches!(p.stage, StagePosition::Finished { .. });
            if !finished && id.colour != p.turn && !(p.rules.teams && id.colour == partner) {
                return Err(PositionError::Stage(format!(
                    "R-THIRD: last moved piece {id} is not {}'s{}",
                    p.turn,
                    if p.rules.teams {
                        " or its partner's"
                    } else {
                        ""
                    }
                )));
            }
        }
        let mut first_five = [false; COLOURS];
        for pl in &p.players {
            let k = pl.colour.index();
            let out = pos[k].iter().filter(|&&q| q != NEST).count();
            first_five[k] = match pl.first_five {
                // Not given: a colour with all four pieces in the nest has its first 5 to come.
                None => {
                    p.rules.two_out_on_first_five && out == 0 && pl.status == SeatStatus::Playing
                }
                Some(f) => f,
            };
            if first_five[k] && !p.rules.two_out_on_first_five {
                return Err(PositionError::Stage(format!(
                    "D-23: {} has its first 5 to come, which only the two-out variant records",
                    pl.colour
                )));
            }
            if first_five[k] && out > usize::from(p.rules.start_with_one_out) {
                return Err(PositionError::Stage(format!(
                    "D-23: {} has its first 5 to come, but {out} of its pieces are out of the nest \
                     (only a 5 brings a piece out)",
                    pl.colour
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
            first_five,
            prev_unplayed: p.previous_throw_unplayed,
            timeouts,
            places,
            occ: [0; crate::board::CELLS],
        }
        .recounted())
    }
}

/// The colour whose pieces the player to act moves: their own, or the partner's once
/// all their own are in the goal (pair play, seed 004).
fn mover_of(p: &Position, pos: &[[u8; PIECES]; COLOURS]) -> Colour {
    let k = p.turn.index();
    if p.rules.teams && pos[k].iter().all(|&q| q == GOAL) {
        Colour::ALL[(k + 2) % COLOURS]
    } else {
        p.turn
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
