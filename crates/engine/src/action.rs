//! Actions (inputs to the engine), events (what an action caused) and the typed error
//! for an illegal action.

use crate::board::{Colour, Location};
use crate::types::{Dice, WinReason};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// An input to the game. The acting player is always the one whose turn it is, except
/// for [`Action::Abandon`], which names its colour.
///
/// JSON: an object tagged by `"type"`, e.g. `{"type":"move","piece":2,"die":4}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    /// The current player's throw (R-ROLL). The dice are an input: the server rolls them.
    Roll {
        /// The values rolled: two dice in `online`.
        dice: Dice,
    },
    /// Bring the lowest-numbered nest piece out onto the exit square (R-EXIT-1), using a
    /// die showing 5, or both dice when they sum to 5.
    Exit,
    /// Move `piece` (0..=3) forward by one unused die showing `die` (R-MOVE).
    Move {
        /// Piece index 0..=3 of the colour being moved.
        piece: u8,
        /// The value shown by the die played (a six may count 7 or 12, see the rules).
        die: u8,
        /// Pair play (seed 004): on landing on a lone partner piece on a normal square,
        /// capture it (+20) instead of forming a blockade. Omitted (false) otherwise.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        capture: bool,
    },
    /// Take the pending bonus move of `amount` squares (20 or 10) with `piece` (R-BONUS).
    Bonus {
        /// Piece index 0..=3 of the colour being moved.
        piece: u8,
        /// Squares: must equal the pending bonus.
        amount: u8,
        /// As for [`Action::Move`]: capture a lone partner piece (pair play).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        capture: bool,
    },
    /// The current throw's clock ran out (R-CLOCK): the turn is lost.
    Timeout,
    /// `colour` abandoned the game (R-LEAVE, D-5).
    Abandon {
        /// The colour that leaves.
        colour: Colour,
    },
}

impl fmt::Display for Action {
    /// The action in the text notation: `roll 3,4`, `exit`, `move 2 4`, `bonus 1 20`,
    /// `timeout`, `abandon Y`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Roll { dice } => write!(f, "roll {dice}"),
            Action::Exit => f.write_str("exit"),
            Action::Move {
                piece,
                die,
                capture,
            } => {
                write!(
                    f,
                    "move {piece} {die}{}",
                    if *capture { " capture" } else { "" }
                )
            }
            Action::Bonus {
                piece,
                amount,
                capture,
            } => {
                write!(
                    f,
                    "bonus {piece} {amount}{}",
                    if *capture { " capture" } else { "" }
                )
            }
            Action::Timeout => f.write_str("timeout"),
            Action::Abandon { colour } => write!(f, "abandon {}", colour.letter()),
        }
    }
}

impl std::str::FromStr for Action {
    type Err = String;
    /// Parses the text form written by `Display`, or the JSON form.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.starts_with('{') {
            return serde_json::from_str(s).map_err(|e| format!("bad action JSON: {e}"));
        }
        let words: Vec<&str> = s.split_whitespace().collect();
        let num = |w: Option<&&str>, what: &str| -> Result<u8, String> {
            w.ok_or_else(|| format!("action {s:?}: missing {what}"))?
                .parse::<u8>()
                .map_err(|_| format!("action {s:?}: {what} is not a number"))
        };
        match words.first().copied() {
            Some("roll") => {
                let spec = words.get(1).ok_or_else(|| format!("action {s:?}: missing dice"))?;
                let values = spec
                    .split(',')
                    .map(|v| v.parse::<u8>().map_err(|_| format!("bad die {v:?}")))
                    .collect::<Result<Vec<u8>, String>>()?;
                Ok(Action::Roll { dice: Dice::from_slice(&values)? })
            }
            Some("exit") => Ok(Action::Exit),
            Some("move") => Ok(Action::Move {
                piece: num(words.get(1), "piece")?,
                die: num(words.get(2), "die")?,
                capture: capture_word(words.get(3))?,
            }),
            Some("bonus") => Ok(Action::Bonus {
                piece: num(words.get(1), "piece")?,
                amount: num(words.get(2), "amount")?,
                capture: capture_word(words.get(3))?,
            }),
            Some("timeout") => Ok(Action::Timeout),
            Some("abandon") => {
                let c = words.get(1).ok_or_else(|| format!("action {s:?}: missing colour"))?;
                Ok(Action::Abandon { colour: c.parse()? })
            }
            _ => Err(format!(
                "unknown action {s:?} (expected roll A,B | exit | move P D | bonus P N | timeout | abandon C)"
            )),
        }
    }
}

fn capture_word(w: Option<&&str>) -> Result<bool, String> {
    match w.copied() {
        None => Ok(false),
        Some("capture") => Ok(true),
        Some(other) => Err(format!("unexpected {other:?} (only `capture` may follow)")),
    }
}

/// What moved a piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MoveKind {
    /// One die.
    Die,
    /// A bonus move (R-BONUS).
    Bonus,
}

/// Why a bonus was earned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BonusReason {
    /// A capture: 20 squares.
    Capture,
    /// A piece reached the goal: 10 squares.
    Goal,
}

/// Something an action caused. The server broadcasts and persists these, in order.
///
/// JSON: tagged by `"type"`, e.g. `{"type":"piece_captured","colour":"red","piece":1,"square":30,"by":"yellow"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// `colour` threw `dice`; `doubles_in_row` counts this turn's doubles so far (R-THIRD).
    DiceRolled {
        /// Who threw.
        colour: Colour,
        /// The values.
        dice: Dice,
        /// Doubles thrown in a row this turn, this throw included.
        doubles_in_row: u8,
    },
    /// A piece left the nest onto its exit square (R-EXIT-1).
    PieceExited {
        /// The piece's colour.
        colour: Colour,
        /// Piece index 0..=3.
        piece: u8,
        /// The exit square.
        square: u8,
    },
    /// A piece moved.
    PieceMoved {
        /// The piece's colour.
        colour: Colour,
        /// Piece index 0..=3.
        piece: u8,
        /// Where it stood.
        from: Location,
        /// Where it landed.
        to: Location,
        /// Squares counted.
        steps: u8,
        /// A die or a bonus.
        by: MoveKind,
        /// It overshot the goal and ran back (R-BOUNCE).
        bounced: bool,
        /// The die shown, when it differs from `steps` (a six counting 7 or 12).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        die: Option<u8>,
    },
    /// A piece was captured and went back to its nest (R-CAPTURE, R-EXIT-CAPTURE).
    PieceCaptured {
        /// The captured piece's colour.
        colour: Colour,
        /// Captured piece index 0..=3.
        piece: u8,
        /// Ring square of the capture.
        square: u8,
        /// The capturing colour.
        by: Colour,
    },
    /// Two pieces that stood together no longer do (R-BLOCK, R-OPEN).
    BlockadeOpened {
        /// The mover's colour.
        colour: Colour,
        /// Where the blockade stood (in the mover's terms).
        at: Location,
    },
    /// A bonus move is owed to `colour` (R-BONUS).
    BonusEarned {
        /// Who earned it.
        colour: Colour,
        /// Squares: 20 or 10.
        amount: u8,
        /// Capture or goal.
        reason: BonusReason,
    },
    /// A pending bonus ends unplayed: no piece could take it whole, in any order of the
    /// pending bonuses (R-BONUS, D-28), or the throw ended first — the clock ran out, the
    /// player left, finished or won (D-31). Every unplayed bonus is reported once.
    BonusForfeited {
        /// Who lost it.
        colour: Colour,
        /// Squares.
        amount: u8,
    },
    /// The remaining dice could not be played (R-MUST). With bonuses waiting for the
    /// dice (after-dice timing) the throw goes on: the dice are lost and the bonuses
    /// are played (D-30).
    NoLegalMove {
        /// Whose throw.
        colour: Colour,
        /// The dice left unplayed.
        dice: Dice,
    },
    /// Third doubles in a row (R-THIRD, D-10): `piece`, if any, went from `from` to the nest.
    ThirdDoublesPenalty {
        /// Who threw.
        colour: Colour,
        /// The last moved piece sent to the nest, if any.
        piece: Option<u8>,
        /// Where it stood.
        from: Option<Location>,
        /// The piece's colour when it is not `colour`'s (pair play: a finished player
        /// moves the partner's pieces); omitted otherwise.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        piece_colour: Option<Colour>,
    },
    /// The same player throws again (R-DOUBLES, D-9).
    RollAgain {
        /// Who throws again.
        colour: Colour,
    },
    /// The clock ran out (R-CLOCK): dice, bonus and re-roll are forfeited.
    TimedOut {
        /// Who ran out of time.
        colour: Colour,
        /// Consecutive timeouts of this player, this one included.
        consecutive: u8,
    },
    /// The turn passed.
    TurnPassed {
        /// Whose turn ended.
        from: Colour,
        /// Whose turn it is now.
        to: Colour,
    },
    /// A player abandoned (R-LEAVE): their pieces left the board.
    PlayerAbandoned {
        /// Who left.
        colour: Colour,
    },
    /// A player has all four pieces in the goal but the game goes on (seed 001's
    /// places; seed 004's pairs).
    PlayerFinished {
        /// Who finished.
        colour: Colour,
        /// Finishing place, 1 = first.
        place: u8,
    },
    /// The game is over (R-WIN, D-5).
    GameWon {
        /// The winner.
        winner: Colour,
        /// Goal or forfeit.
        reason: WinReason,
        /// The winner's partner, in pair play.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partner: Option<Colour>,
    },
}

/// The class of an illegal action; serialized in snake_case on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The game has ended.
    GameOver,
    /// The game awaits a roll, not a move.
    AwaitingRoll,
    /// The game awaits a move, not a roll.
    AwaitingMove,
    /// Wrong number of dice or a value outside 1..=6.
    BadDice,
    /// No piece with that index, or it cannot move (nest, goal).
    BadPiece,
    /// No unused die shows that value.
    DieNotAvailable,
    /// A bonus must be played first, or no bonus is pending, or the amount differs.
    Bonus,
    /// The move passes or lands on a blockade, or overshoots.
    Blocked,
    /// No exit is possible.
    NoExit,
    /// The move is possible but another play is compulsory (exit, must-play, open).
    NotAllowed,
    /// The colour has no active seat.
    NotPlaying,
}

/// An illegal action: the state is unchanged. `rule` is the violated rule id of the
/// reference (`R-BLOCK`, `D-2`, …).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{rule}: {message}")]
pub struct ActionError {
    /// The class of error.
    pub kind: ErrorKind,
    /// The rule id, e.g. `"R-EXIT-1"`.
    pub rule: &'static str,
    /// Human-readable explanation.
    pub message: String,
}

impl ActionError {
    pub(crate) fn new(kind: ErrorKind, rule: &'static str, message: impl Into<String>) -> Self {
        ActionError {
            kind,
            rule,
            message: message.into(),
        }
    }
}
