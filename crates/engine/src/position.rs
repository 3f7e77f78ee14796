//! The position format: [`Position`], a plain, unvalidated description of the whole
//! game state with public fields (serde JSON, documented in `proto/POSITION.md`), and
//! its validation into a [`Game`].
//!
//! [`BoardState`] is the same state without the rule set, as event frames and previews
//! carry it.
//!
//! Why one file of ~850 lines: the validation is one ordered list of named checks, each
//! naming the rule or section a bad position breaks (`TryFrom<&Position> for Game` reads
//! as that list); kept beside the format it validates so that the two change together.

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
        /// Variant `two-out`: the first 5's first exit captured, and its second piece
        /// comes out once the bonus it earned is played (D-32). Omitted when false.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        second_exit: bool,
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

/// A [`Position`] without its rule set: the state a game is in, for a client that was
/// given the rules once (`game_started`, the room view) and draws every later state.
/// Event frames and action previews carry this (`proto/README.md`), about a third of a
/// `Position`'s JSON: the rule set is some 1,000 bytes of the 1,500. Same fields, same
/// JSON, as a `Position` less `rules`; `Position::from_state` puts them together again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BoardState {
    /// Seated colours, in board order (yellow, blue, red, green).
    pub players: Vec<PlayerPosition>,
    /// Whose turn it is.
    pub turn: Colour,
    /// What the game waits for.
    pub stage: StagePosition,
    /// Doubles thrown in a row this turn (R-THIRD): 0..=2.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub doubles_in_row: u8,
    /// The piece that moved last this turn (see [`Position::last_moved`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_moved: Option<PieceId>,
    /// The previous throw of this turn played no move (seed 004's R-THIRD exception).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub previous_throw_unplayed: bool,
}

impl Position {
    /// The position of a game played by `rules` that is in `state`.
    pub fn from_state(rules: RuleSet, state: BoardState) -> Position {
        let BoardState {
            players,
            turn,
            stage,
            doubles_in_row,
            last_moved,
            previous_throw_unplayed,
        } = state;
        Position {
            rules,
            players,
            turn,
            stage,
            doubles_in_row,
            last_moved,
            previous_throw_unplayed,
        }
    }
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
        Position::from_state(g.rules, BoardState::from(g))
    }
}

impl From<&Game> for BoardState {
    fn from(g: &Game) -> BoardState {
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
                second_exit: t.second_exit,
            },
            Stage::Finished(o) => StagePosition::Finished { outcome: o },
        };
        BoardState {
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

/// What the seat list of a [`Position`] says, read into the game's representation.
struct Seating {
    seats: [SeatStatus; COLOURS],
    pos: [[u8; PIECES]; COLOURS],
    late: u16,
    timeouts: [u8; COLOURS],
    places: [u8; COLOURS],
}

impl TryFrom<&Position> for Game {
    type Error = PositionError;

    /// Validates a position: a supported rule set; 2..=4 distinct seats; at most two
    /// pieces on a ring or home-column square; two colours together only on safe
    /// squares; consistent arrival marks; abandoned colours' pieces in the nest; a
    /// possible turn state. The checks run in this order, so the first broken rule
    /// is the one reported.
    fn try_from(p: &Position) -> Result<Game, PositionError> {
        p.rules
            .check_supported()
            .map_err(PositionError::Unsupported)?;
        let mut s = read_seats(p)?;
        check_seat_count(p)?;
        s.late = check_squares(p, &s.pos, s.late)?;
        let stage = read_stage(p, &s)?;
        if !matches!(stage, Stage::Finished(_)) {
            check_turn(p, &s)?;
        }
        check_repeats(p)?;
        let first_five = read_first_five(p, &s.pos)?;
        Ok(Game {
            rules: p.rules,
            seats: s.seats,
            pos: s.pos,
            late: s.late,
            turn: p.turn,
            stage,
            doubles: p.doubles_in_row,
            last_moved: p.last_moved,
            first_five,
            prev_unplayed: p.previous_throw_unplayed,
            timeouts: s.timeouts,
            places: s.places,
            occ: [0; crate::board::CELLS],
        }
        .recounted())
    }
}

/// R-SEAT: each colour listed once, never as empty; its pieces on its own path
/// (rules.md §1); an abandoned colour's pieces off the board.
fn read_seats(p: &Position) -> Result<Seating, PositionError> {
    let mut s = Seating {
        seats: [SeatStatus::Empty; COLOURS],
        pos: [[NEST; PIECES]; COLOURS],
        late: 0,
        timeouts: [0u8; COLOURS],
        places: [0u8; COLOURS],
    };
    for pl in &p.players {
        let k = pl.colour.index();
        if s.seats[k] != SeatStatus::Empty {
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
        s.seats[k] = pl.status;
        s.timeouts[k] = pl.timeouts;
        s.places[k] = pl.place.unwrap_or(0);
        for (i, piece) in pl.pieces.iter().enumerate() {
            s.pos[k][i] = progress_of(pl.colour, piece.at, &format!("{} piece {i}", pl.colour))?;
            if piece.late {
                s.late |= 1 << (k * PIECES + i);
            }
            if pl.status == SeatStatus::Abandoned && s.pos[k][i] != NEST {
                return Err(PositionError::Seats(format!(
                    "{} abandoned, so its pieces are off the board, but piece {i} is on {}",
                    pl.colour, piece.at
                )));
            }
        }
    }
    Ok(s)
}

/// R-SEAT: as many seated colours as the rule set plays with.
fn check_seat_count(p: &Position) -> Result<(), PositionError> {
    let n = p.players.len();
    if n < p.rules.min_players as usize || n > p.rules.max_players as usize {
        return Err(PositionError::Seats(format!(
            "{n} seated colours; this rule set plays with {} to {}",
            p.rules.min_players, p.rules.max_players
        )));
    }
    Ok(())
}

/// Capacity (R-CAP), mixing (R-CAPTURE, D-29) and arrival order (D-6) per square.
/// Returns the arrival marks with the later piece of an unmarked pair marked.
fn check_squares(
    p: &Position,
    pos: &[[u8; PIECES]; COLOURS],
    mut late: u16,
) -> Result<u16, PositionError> {
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
            2 => late = check_pair(p, c, (occ[0], occ[1]), late, &name())?,
            m => {
                return Err(PositionError::Capacity(format!(
                    "{m} pieces on square {}; at most two fit on a square",
                    name()
                )))
            }
        }
    }
    Ok(late)
}

/// Two pieces `a`, `b` (global ids) on cell `c`, named `name`: a pair that would block
/// stands only on a safe square with `safe-only` (D-29); two colours share only a safe
/// square where the rule set lets them join (R-CAPTURE); one of them arrived last (D-6).
fn check_pair(
    p: &Position,
    c: usize,
    (a, b): (usize, usize),
    mut late: u16,
    name: &str,
) -> Result<u16, PositionError> {
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
            name
        )));
    }
    if ka != kb && !mates && !safe_ok {
        return Err(PositionError::Mixed(format!(
            "{} and {} share square {}, where two colours cannot stand together",
            PieceId::from_gid(a),
            PieceId::from_gid(b),
            name
        )));
    }
    match (late & (1 << a) != 0, late & (1 << b) != 0) {
        (true, true) => {
            return Err(PositionError::Arrival(format!(
                "both pieces on {} are marked late; only the one that arrived last is",
                name
            )))
        }
        (false, false) => late |= 1 << b,
        _ => {}
    }
    Ok(late)
}

/// What the game waits for: a roll, a throw being played (R-ROLL, R-BONUS, R-DOUBLES,
/// R-OPEN, D-30) or a finished game's result (R-WIN).
fn read_stage(p: &Position, s: &Seating) -> Result<Stage, PositionError> {
    Ok(match &p.stage {
        StagePosition::Roll => Stage::Roll,
        StagePosition::Move {
            dice,
            used,
            parts,
            bonus,
            blockades,
            must_open,
            dice_lost,
            second_exit,
        } => {
            let mut t = read_dice(&p.rules, *dice, used, parts, bonus)?;
            read_blockades(mover_of(p, &s.pos), blockades, &mut t)?;
            t.must_open = *must_open;
            if *second_exit {
                check_second_exit(p, &s.pos, &t)?;
                t.second_exit = true;
            }
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
            if t.remaining() == 0 && t.nbonus == 0 && !t.second_exit {
                return Err(PositionError::Stage(
                    "every die is used and no bonus is pending: the throw is over".into(),
                ));
            }
            Stage::Move(t)
        }
        StagePosition::Finished { outcome } => {
            check_outcome(outcome, s)?;
            Stage::Finished(*outcome)
        }
    })
}

/// D-32: the first 5's second piece can still be owed only in a `two-out` game whose
/// rule set plays the bonus between the exits, after its single die showing 5 was used
/// (by the first exit), with a piece left in the colour's nest to bring out.
fn check_second_exit(
    p: &Position,
    pos: &[[u8; PIECES]; COLOURS],
    t: &Throw,
) -> Result<(), PositionError> {
    let k = mover_of(p, pos).index();
    let fits = p.rules.two_out_on_first_five
        && p.rules.two_out_bonus_between_exits
        && t.part_values() == [5]
        && t.used[0]
        && !t.dice_lost
        && pos[k].contains(&NEST);
    if fits {
        Ok(())
    } else {
        Err(PositionError::Stage(
            "D-32: a second exit is owed only in a two-out game, after its die showing 5 \
             was used by the first exit, with a piece still in the nest"
                .into(),
        ))
    }
}

/// The values of a throw: as many dice as the rule set throws (R-ROLL), valid pending
/// bonuses (R-BONUS), the doubles parts (R-DOUBLES) and one used flag per value.
fn read_dice(
    rules: &RuleSet,
    dice: Dice,
    used: &[bool],
    parts: &[u8],
    bonus: &[u8],
) -> Result<Throw, PositionError> {
    if dice.len() != rules.dice as usize {
        return Err(PositionError::Stage(format!(
            "R-ROLL: this rule set throws {} dice, the position has {}",
            rules.dice,
            dice.len()
        )));
    }
    check_bonuses(rules, bonus)?;
    let mut t = Throw::new(dice);
    if !parts.is_empty() {
        read_parts(rules, dice, parts, &mut t)?;
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
    Ok(t)
}

/// R-BONUS: each pending bonus is the capture or the goal bonus; at most four wait.
fn check_bonuses(rules: &RuleSet, bonus: &[u8]) -> Result<(), PositionError> {
    for b in bonus {
        if *b != rules.capture_bonus && *b != rules.goal_bonus {
            return Err(PositionError::Stage(format!(
                "R-BONUS: a bonus is {} or {} squares, not {b}",
                rules.capture_bonus, rules.goal_bonus
            )));
        }
    }
    if bonus.len() > 4 {
        return Err(PositionError::Stage(
            "R-BONUS: at most four pending bonuses".into(),
        ));
    }
    Ok(())
}

/// R-DOUBLES: the four parts of a doubles bonus are the tops and bottoms of `dice`.
fn read_parts(
    rules: &RuleSet,
    dice: Dice,
    parts: &[u8],
    t: &mut Throw,
) -> Result<(), PositionError> {
    let a = dice.values()[0];
    if !dice.is_doubles()
        || rules.doubles_bonus == crate::rules::DoublesBonus::None
        || parts != [a, a, 7 - a, 7 - a]
    {
        return Err(PositionError::Stage(format!(
            "R-DOUBLES: the doubles bonus of {dice} is tops and bottoms [{a}, {a}, {b}, {b}]",
            b = 7 - a
        )));
    }
    t.parts = [a, a, 7 - a, 7 - a];
    t.nparts = 4;
    t.bonus14 = true;
    Ok(())
}

/// R-OPEN: the held blockades are pairs of the `mover`'s pieces on a square, at most four.
fn read_blockades(
    mover: Colour,
    blockades: &[HeldBlockade],
    t: &mut Throw,
) -> Result<(), PositionError> {
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
    Ok(())
}

/// R-WIN: the winner of a finished game is seated and, winning by the goal, has all
/// its pieces there.
fn check_outcome(outcome: &Outcome, s: &Seating) -> Result<(), PositionError> {
    let w = outcome.winner.index();
    if !matches!(s.seats[w], SeatStatus::Playing | SeatStatus::Finished) {
        return Err(PositionError::Stage(format!(
            "R-WIN: the winner {} is not playing",
            outcome.winner
        )));
    }
    if outcome.reason == WinReason::Goal && s.pos[w].iter().any(|&q| q != GOAL) {
        return Err(PositionError::Stage(format!(
            "R-WIN: {} won by the goal but not all its pieces are there",
            outcome.winner
        )));
    }
    Ok(())
}

/// A game still running: the colour to act is playing (R-ORDER), and no colour or
/// team has ended it by bringing its pieces home (R-WIN).
fn check_turn(p: &Position, s: &Seating) -> Result<(), PositionError> {
    if s.seats[p.turn.index()] != SeatStatus::Playing {
        return Err(PositionError::Stage(format!(
            "R-ORDER: {} is to act but is not playing",
            p.turn
        )));
    }
    let home = |c: Colour| s.pos[c.index()].iter().all(|&q| q == GOAL);
    let over = match p.rules.game_end {
        crate::rules::GameEnd::FirstToFinish => Colour::ALL.into_iter().find(|&c| home(c)),
        crate::rules::GameEnd::FirstTeam => Colour::ALL
            .into_iter()
            .find(|&c| home(c) && home(Colour::ALL[(c.index() + 2) % COLOURS])),
        crate::rules::GameEnd::PlayOn => Colour::ALL.into_iter().find(|&c| {
            home(c) && (s.seats[c.index()] != SeatStatus::Finished || s.places[c.index()] == 0)
        }),
    };
    if let Some(c) = over {
        return Err(PositionError::Stage(format!(
            "R-WIN: {c} has four pieces in the goal, so the game is over (or, playing on, it has finished with a place)"
        )));
    }
    Ok(())
}

/// R-THIRD: at most two doubles in a row, and a last moved piece only after a repeat,
/// of the colour to act (or its partner's in pair play).
fn check_repeats(p: &Position) -> Result<(), PositionError> {
    if p.doubles_in_row > 2 && p.rules.third_repeat != crate::rules::ThirdRepeat::None {
        return Err(PositionError::Stage(format!(
            "R-THIRD: {} doubles in a row; the third ends the turn",
            p.doubles_in_row
        )));
    }
    let Some(id) = p.last_moved else {
        return Ok(());
    };
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
    Ok(())
}

/// D-23: which colours have their first 5 to come (variant `two-out` only); when not
/// given, a playing colour with all four pieces in the nest has.
fn read_first_five(
    p: &Position,
    pos: &[[u8; PIECES]; COLOURS],
) -> Result<[bool; COLOURS], PositionError> {
    let mut first_five = [false; COLOURS];
    for pl in &p.players {
        let k = pl.colour.index();
        let out = pos[k].iter().filter(|&&q| q != NEST).count();
        first_five[k] = match pl.first_five {
            // Not given: a colour with all four pieces in the nest has its first 5 to come.
            None => p.rules.two_out_on_first_five && out == 0 && pl.status == SeatStatus::Playing,
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
    Ok(first_five)
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
