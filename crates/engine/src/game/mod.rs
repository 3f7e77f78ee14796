//! The validated game state and the turn procedure (reference §2 and the §3 matrix):
//! rolling, exits, moves, captures, bonus moves, must-play, opening blockades, repeats
//! and the third-repeat penalty, the goal and the bounce, the doubles bonus, victory,
//! timeouts and abandonment — for every preset.
//!
//! The private, allocation-free representation (`pos`, `occ`, `Throw`, `Step`) lives here
//! with the read-only queries; the child modules add to `impl Game` and see it without
//! exposing it to the rest of the crate: `moves` (planning a move or exit), `mutation`
//! (executing steps, captures, bonuses, the goal), `search` (step generation and the
//! must-play search) and `apply` (the public turn procedure).

mod apply;
mod moves;
mod mutation;
mod search;

use crate::action::{Action, ActionError, BonusReason, ErrorKind, Event, MoveKind};
use crate::board::{
    cell, exit_square, is_safe, Colour, Location, CELLS, COLOURS, EXIT, GOAL, HOME_COLUMN,
    LAST_RING, NEST, PIECES, RING,
};
use crate::rules::{
    BlockadeKind, BonusTakers, BonusTiming, DoublesBonus, ExitCapture, GameEnd, OneDiePlayable,
    OpenOn, RollAgainOn, RuleSet, SafeWithOpponent, ThirdRepeat, TurnDirection,
};
use crate::types::{Dice, Outcome, PieceId, SeatStatus, WinReason};

/// Blockades the player owned when the throw began, as pairs of global piece ids
/// (`colour * 4 + piece`) with the cell they stood on. R-OPEN asks that one of them no
/// longer stands (D-3, D-15); Parcheesi forbids moving one on together to a new square.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct OpenPairs {
    pub(crate) pairs: [(u8, u8); 4],
    pub(crate) cells: [u8; 4],
    pub(crate) len: u8,
}

impl OpenPairs {
    pub(crate) fn as_slice(&self) -> &[(u8, u8)] {
        &self.pairs[..self.len as usize]
    }
    pub(crate) fn push(&mut self, a: usize, b: usize, c: usize) -> bool {
        if (self.len as usize) < self.pairs.len() {
            self.pairs[self.len as usize] = (a as u8, b as u8);
            self.cells[self.len as usize] = c as u8;
            self.len += 1;
            true
        } else {
            false
        }
    }
}

/// A throw being played: the dice thrown, the values to play (the dice, or the four
/// parts of the Parcheesi doubles bonus), which are used, pending bonus moves, and the
/// blockades the throw must open (R-OPEN) or may not move on together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Throw {
    pub(crate) dice: Dice,
    pub(crate) parts: [u8; 4],
    pub(crate) nparts: u8,
    pub(crate) used: [bool; 4],
    pub(crate) bonus: [u8; 4],
    pub(crate) nbonus: u8,
    pub(crate) open: OpenPairs,
    /// R-OPEN applies to `open` in this throw.
    pub(crate) must_open: bool,
    /// The four parts of the doubles bonus (14) are being played.
    pub(crate) bonus14: bool,
    /// The mover finished (all pieces in the goal) in `play-on` mode: the throw is over.
    pub(crate) done: bool,
    /// The unused dice could not be played and are lost; only the pending bonus moves
    /// remain to be played (D-4, D-30: bonuses after the dice).
    pub(crate) dice_lost: bool,
    /// Variant `two-out` (D-32): the first 5's second piece is still to come out, once
    /// the bonus its first exit earned is played.
    pub(crate) second_exit: bool,
}

impl Throw {
    pub(crate) fn new(dice: Dice) -> Throw {
        let mut parts = [0; 4];
        parts[..dice.len()].copy_from_slice(dice.values());
        Throw {
            dice,
            parts,
            nparts: dice.len() as u8,
            used: [false; 4],
            bonus: [0; 4],
            nbonus: 0,
            open: OpenPairs::default(),
            must_open: false,
            bonus14: false,
            done: false,
            dice_lost: false,
            second_exit: false,
        }
    }
    pub(crate) fn part_values(&self) -> &[u8] {
        &self.parts[..self.nparts as usize]
    }
    fn unused(&self) -> impl Iterator<Item = (usize, u8)> + '_ {
        self.part_values()
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.used[*i])
            .map(|(i, v)| (i, *v))
    }
    /// Values still to be played: none once the throw is over or its dice are lost.
    pub(crate) fn remaining(&self) -> usize {
        if self.done || self.dice_lost {
            return 0;
        }
        self.unused().count()
    }
    fn used_count(&self) -> usize {
        self.nparts as usize - self.unused().count()
    }
    /// The unused values as a [`Dice`] value (for events); `None` when all are used.
    fn remaining_dice(&self) -> Option<Dice> {
        if self.dice_lost {
            return None; // already reported when they were lost
        }
        let v: Vec<u8> = self.unused().map(|(_, v)| v).take(2).collect();
        Dice::from_slice(&v).ok()
    }
    pub(crate) fn pending_bonus(&self) -> Option<u8> {
        (self.nbonus > 0).then_some(self.bonus[0])
    }
    pub(crate) fn push_bonus(&mut self, amount: u8) {
        if (self.nbonus as usize) < self.bonus.len() {
            self.bonus[self.nbonus as usize] = amount;
            self.nbonus += 1;
        }
    }
    /// The pending bonuses, in the order earned.
    pub(crate) fn pending(&self) -> &[u8] {
        &self.bonus[..self.nbonus as usize]
    }
    /// Removes and returns pending bonus `slot` (D-28: pending bonuses are played in any
    /// order).
    fn take_bonus(&mut self, slot: usize) -> Option<u8> {
        if slot >= self.nbonus as usize {
            return None;
        }
        let b = self.bonus[slot];
        self.bonus.copy_within(slot + 1.., slot);
        self.bonus[3] = 0; // keep unused slots zero: positions compare by value
        self.nbonus -= 1;
        Some(b)
    }
    fn pop_bonus(&mut self) -> Option<u8> {
        self.take_bonus(0)
    }
    /// The slot of the first pending bonus of `amount` squares.
    fn bonus_slot(&self, amount: u8) -> Option<usize> {
        self.pending().iter().position(|&b| b == amount)
    }
}

/// What the game waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Stage {
    Roll,
    Move(Throw),
    Finished(Outcome),
}

/// The public view of what the game waits for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// `colour` must throw the dice ([`Action::Roll`]).
    Roll {
        /// Whose throw.
        colour: Colour,
    },
    /// `colour` must play a move from [`Game::legal_actions`].
    Move {
        /// Whose move.
        colour: Colour,
        /// The dice of the throw being played.
        dice: Dice,
        /// Which dice are already used (the first two parts of a doubles bonus).
        used: [bool; 2],
        /// The first pending bonus move, in squares (others may be pending too; they
        /// are played in any order, D-28).
        bonus: Option<u8>,
    },
    /// The game has ended.
    Finished(Outcome),
}

/// A validated game: rules, seats, pieces and the turn state. Build it with
/// [`Game::new`], from a [`crate::Position`], or from the text notation; change it only
/// through [`Game::apply`] / [`Game::play`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Game {
    pub(crate) rules: RuleSet,
    pub(crate) seats: [SeatStatus; COLOURS],
    /// Progress of every piece: 0 nest, 1..=64 ring, 65..=71 h1..h7, 72 goal.
    pub(crate) pos: [[u8; PIECES]; COLOURS],
    /// Bit `gid` set: that piece arrived after the other piece on its square (D-6).
    pub(crate) late: u16,
    pub(crate) turn: Colour,
    pub(crate) stage: Stage,
    /// Repeats (doubles or sixes) thrown in a row this turn (R-THIRD).
    pub(crate) doubles: u8,
    /// The piece that moved last this turn, with its colour (R-THIRD, D-7, D-16, D-21):
    /// a finished pair player moves the partner's pieces. Recorded only once the turn
    /// has a repeat (`doubles > 0`), the only case where R-THIRD can use it.
    pub(crate) last_moved: Option<PieceId>,
    /// Per colour: its first 5 of the game is still to come (variant `two-out`, seed
    /// 001 "al sacar el primer 5"); always false without the variant.
    pub(crate) first_five: [bool; COLOURS],
    /// The previous throw of this turn had no move played (seed 004's R-THIRD exception).
    pub(crate) prev_unplayed: bool,
    /// Consecutive timeouts per colour (R-LEAVE).
    pub(crate) timeouts: [u8; COLOURS],
    /// Finishing place per colour (1 = first), 0 when not finished (play-on and teams).
    pub(crate) places: [u8; COLOURS],
    /// Pieces per occupancy cell (derived from `pos`, kept in step for speed).
    pub(crate) occ: [u8; CELLS],
}

/// Where a planned move ends.
#[derive(Clone, Copy, Debug)]
struct Landing {
    to: u8,
    capture: Option<u8>,
    /// A lone partner piece on a normal square: the mover chooses (seed 004).
    partner: Option<u8>,
    /// The partner piece must be captured: with `safe-only` no blockade forms there (D-29).
    must_take: bool,
    bounced: bool,
}

/// Why a single move is impossible, before the must-play filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    NoSuchPiece,
    InNest,
    InGoal,
    NotATaker,
    PassesBlockade(Location),
    Full(Location),
    SafeOccupied(Location),
    Overshoots,
    BounceTooFar,
    LastSafeExact,
    NoPieceInNest,
    ExitBlocked,
    NoFive,
    NoPartnerChoice,
    /// Variant `safe-only` (D-29): two pieces that would block may share only a safe square.
    PairOffSafe(Location),
}

impl Refusal {
    fn into_error(self, colour: Colour, piece: u8) -> ActionError {
        use ErrorKind as K;
        match self {
            Refusal::NoSuchPiece => ActionError::new(
                K::BadPiece,
                "R-MOVE",
                format!("there is no piece {piece}: pieces are 0 to 3"),
            ),
            Refusal::InNest => ActionError::new(
                K::BadPiece,
                "R-EXIT-1",
                format!("{colour} piece {piece} is in the nest; it leaves only with an exit"),
            ),
            Refusal::InGoal => ActionError::new(
                K::BadPiece,
                "R-MOVE",
                format!("{colour} piece {piece} is in the goal and cannot move"),
            ),
            Refusal::NotATaker => ActionError::new(
                K::Bonus,
                "R-BONUS",
                format!("{colour} piece {piece} may not take a bonus move where it stands"),
            ),
            Refusal::PassesBlockade(at) => ActionError::new(
                K::Blocked,
                "R-BLOCK",
                format!("{colour} piece {piece} would pass the blockade on {at}"),
            ),
            Refusal::Full(at) => ActionError::new(
                K::Blocked,
                "R-BLOCK",
                format!("{colour} piece {piece} would land on {at}, which already holds two pieces"),
            ),
            Refusal::SafeOccupied(at) => ActionError::new(
                K::Blocked,
                "R-SAFE",
                format!("{colour} piece {piece} may not land on safe square {at}, held by an opponent"),
            ),
            Refusal::Overshoots => ActionError::new(
                K::Blocked,
                "R-GOAL",
                format!("{colour} piece {piece} would overshoot the goal"),
            ),
            Refusal::BounceTooFar => ActionError::new(
                K::Blocked,
                "R-BOUNCE",
                format!("{colour} piece {piece} would bounce back out of its home column"),
            ),
            Refusal::LastSafeExact => ActionError::new(
                K::Blocked,
                "R-GOAL",
                format!("{colour} piece {piece} must stop exactly on its last safe square first (Murcia)"),
            ),
            Refusal::NoPieceInNest => ActionError::new(
                K::NoExit,
                "R-EXIT-1",
                format!("{colour} has no piece in the nest"),
            ),
            Refusal::ExitBlocked => ActionError::new(
                K::NoExit,
                "R-EXIT-2",
                format!("{colour}'s exit square is barred; a piece must move off it first"),
            ),
            Refusal::NoFive => ActionError::new(
                K::NoExit,
                "R-EXIT-1",
                "an exit needs an unused die showing 5 (or two unused dice summing to 5)",
            ),
            Refusal::PairOffSafe(at) => ActionError::new(
                K::Blocked,
                "D-29",
                format!("{colour} piece {piece} would form a blockade on {at}; with safe-only, blockades form only on safe squares"),
            ),
            Refusal::NoPartnerChoice => ActionError::new(
                K::NotAllowed,
                "R-CAPTURE",
                format!("{colour} piece {piece} does not land on a lone partner piece: there is nothing to capture"),
            ),
        }
    }
}

/// One step of a throw, internally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Exit using the part mask (bit i: part i); mask 0 is the first 5's second piece
    /// coming out after a bonus (variant `two-out`, D-32).
    Exit(u8),
    /// Move piece by the part at index; capture a lone partner piece (pairs).
    Move(u8, u8, bool),
    /// Bonus move with piece, of the pending bonus in slot; capture a lone partner piece
    /// (pairs).
    Bonus(u8, u8, bool),
}

/// A small fixed-capacity list of steps, so the search never allocates.
#[derive(Clone, Copy)]
struct Steps {
    items: [Step; 24],
    /// The planned landing of each step, when known (saves planning it again).
    hints: [Option<Landing>; 24],
    len: u8,
}

impl Steps {
    fn new() -> Steps {
        Steps {
            items: [Step::Bonus(0, 0, false); 24],
            hints: [None; 24],
            len: 0,
        }
    }
    #[inline]
    fn push(&mut self, s: Step) {
        self.push_with(s, None);
    }
    #[inline]
    fn push_with(&mut self, s: Step, hint: Option<Landing>) {
        if (self.len as usize) < self.items.len() {
            self.items[self.len as usize] = s;
            self.hints[self.len as usize] = hint;
            self.len += 1;
        }
    }
    fn as_slice(&self) -> &[Step] {
        &self.items[..self.len as usize]
    }
    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Receives events; the search uses a sink that drops them.
trait Sink {
    fn push(&mut self, e: Event);
}
impl Sink for Vec<Event> {
    #[inline]
    fn push(&mut self, e: Event) {
        Vec::push(self, e)
    }
}
struct Discard;
impl Sink for Discard {
    #[inline]
    fn push(&mut self, _: Event) {}
}

/// Errors building a new game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// The seat list is the wrong size or repeats a colour (R-SEAT).
    #[error("R-SEAT: {0}")]
    Seats(String),
    /// The first player is not seated (R-FIRST).
    #[error("R-FIRST: the first player {0} is not seated")]
    FirstNotSeated(Colour),
    /// The rule set is not playable.
    #[error("{0}")]
    Unsupported(String),
}

/// The result of the must-play search at one position: the settled node, every raw
/// step with the value of its best play (`None`: forbidden), and the legal steps.
struct Scoring {
    node: Game,
    raw: Steps,
    values: [Option<u16>; 24],
    legal: Steps,
}

// Score of a play (D-14): exits first, then dice (parts) played, then R-OPEN, then the
// larger die when only one can be played (seed 003), then — only among the orders of
// the pending bonuses once the dice are over (D-28) — bonus moves played. `None` marks
// a forbidden play (a blockade moved on together, seeds 002/003).
const W_EXIT: u16 = 4096;
const W_DIE: u16 = 512;
const W_OPEN: u16 = 256;
const W_LARGER: u16 = 32;
const W_BONUS: u16 = 1;
/// The bonus-count bits (below `W_LARGER`): ignored while dice remain to be played.
const BONUS_BITS: u16 = 16;

/// The partner colour index of `k` in pair play (opposite seats).
#[inline]
fn partner(k: usize) -> usize {
    (k + 2) % COLOURS
}

impl Game {
    /// A new game: every piece in its nest (one on its exit square with the
    /// `start_with_one_out` variant), `first` to roll (R-FIRST).
    ///
    /// Errors: fewer than `rules.min_players` or more than `rules.max_players` seats, a
    /// repeated colour (R-SEAT), `first` not seated (R-FIRST), an invalid rule set.
    pub fn new(rules: RuleSet, seated: &[Colour], first: Colour) -> Result<Game, SetupError> {
        rules.check_supported().map_err(SetupError::Unsupported)?;
        let n = seated.len();
        if n < rules.min_players as usize || n > rules.max_players as usize {
            return Err(SetupError::Seats(format!(
                "{n} players; this rule set plays with {} to {}",
                rules.min_players, rules.max_players
            )));
        }
        let mut seats = [SeatStatus::Empty; COLOURS];
        for c in seated {
            if seats[c.index()] != SeatStatus::Empty {
                return Err(SetupError::Seats(format!("colour {c} is seated twice")));
            }
            seats[c.index()] = SeatStatus::Playing;
        }
        if seats[first.index()] != SeatStatus::Playing {
            return Err(SetupError::FirstNotSeated(first));
        }
        let mut pos = [[NEST; PIECES]; COLOURS];
        if rules.start_with_one_out {
            for c in seated {
                pos[c.index()][0] = EXIT;
            }
        }
        Ok(Game {
            rules,
            seats,
            pos,
            late: 0,
            turn: first,
            stage: Stage::Roll,
            doubles: 0,
            last_moved: None,
            first_five: std::array::from_fn(|k| {
                rules.two_out_on_first_five && seats[k] == SeatStatus::Playing
            }),
            prev_unplayed: false,
            timeouts: [0; COLOURS],
            places: [0; COLOURS],
            occ: [0; CELLS],
        }
        .recounted())
    }

    /// The rule set.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// Seat status of `colour`.
    pub fn seat(&self, colour: Colour) -> SeatStatus {
        self.seats[colour.index()]
    }

    /// Colours still playing, in board order.
    pub fn active_colours(&self) -> Vec<Colour> {
        Colour::ALL
            .into_iter()
            .filter(|c| self.seats[c.index()] == SeatStatus::Playing)
            .collect()
    }

    /// Whose turn it is (the winner once finished).
    pub fn turn(&self) -> Colour {
        self.turn
    }

    /// The colour whose pieces the player to act moves: their own, or in pair play the
    /// partner's once all their own are in the goal (seed 004).
    pub fn mover(&self) -> Colour {
        Colour::ALL[self.mover_index()]
    }

    #[inline]
    fn mover_index(&self) -> usize {
        let k = self.turn.index();
        if self.rules.teams && self.pos[k].iter().all(|&p| p == GOAL) {
            partner(k)
        } else {
            k
        }
    }

    /// What the game waits for.
    pub fn expect(&self) -> Expect {
        match self.stage {
            Stage::Roll => Expect::Roll { colour: self.turn },
            Stage::Move(t) => Expect::Move {
                colour: self.turn,
                dice: t.dice,
                used: [t.used[0], t.used[1]],
                bonus: t.pending_bonus(),
            },
            Stage::Finished(o) => Expect::Finished(o),
        }
    }

    /// The result, once the game has ended.
    pub fn outcome(&self) -> Option<Outcome> {
        match self.stage {
            Stage::Finished(o) => Some(o),
            _ => None,
        }
    }

    /// Finishing place of `colour` (1 = first) in play-on and pair games; `None` while
    /// it has not finished.
    pub fn place(&self, colour: Colour) -> Option<u8> {
        let p = self.places[colour.index()];
        (p > 0).then_some(p)
    }

    /// Where `piece` stands.
    pub fn location(&self, piece: PieceId) -> Location {
        Location::from_progress(
            piece.colour,
            self.pos[piece.colour.index()][piece.piece as usize],
        )
    }

    /// The four locations of `colour`'s pieces, by piece index.
    pub fn pieces(&self, colour: Colour) -> [Location; PIECES] {
        let k = colour.index();
        std::array::from_fn(|i| Location::from_progress(colour, self.pos[k][i]))
    }

    /// Steps a piece has travelled from its exit square (0..=71); `None` in the nest.
    pub fn progress(&self, piece: PieceId) -> Option<u8> {
        let p = self.pos[piece.colour.index()][piece.piece as usize];
        (p != NEST).then(|| p - EXIT)
    }

    /// Repeats (doubles, or sixes with one die) thrown in a row in this turn (R-THIRD).
    pub fn doubles_in_row(&self) -> u8 {
        self.doubles
    }

    /// Consecutive timeouts of `colour` (R-CLOCK, R-LEAVE); reset when its turn ends normally.
    pub fn consecutive_timeouts(&self, colour: Colour) -> u8 {
        self.timeouts[colour.index()]
    }
}
