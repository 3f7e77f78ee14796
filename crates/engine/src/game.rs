//! The validated game state and the turn procedure (reference §2 and the §3 matrix):
//! rolling, exits, moves, captures, bonus moves, must-play, opening blockades, repeats
//! and the third-repeat penalty, the goal and the bounce, the doubles bonus, victory,
//! timeouts and abandonment — for every preset.
//!
//! Why one long file: the move generator, the must-play search (which replays steps on
//! copies of the state thousands of times per throw) and the turn procedure share the
//! private, allocation-free representation (`pos`, `occ`, `Throw`, `Step`); splitting
//! them would expose that representation across modules for no reader's gain.

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
    /// Exit using the part mask (bit i: part i).
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

    // ----- occupancy -------------------------------------------------------------

    pub(crate) fn recounted(mut self) -> Game {
        self.recount();
        self
    }

    /// Recomputes the occupancy counts from the piece positions.
    pub(crate) fn recount(&mut self) {
        self.occ = [0; CELLS];
        for k in 0..COLOURS {
            for i in 0..PIECES {
                let c = cell(k, self.pos[k][i]);
                if c != 0 {
                    self.occ[c] += 1;
                }
            }
        }
    }

    /// Pieces on `cell` other than `exclude` (global ids), at most two reported.
    #[inline]
    fn occupants(&self, c: usize, exclude: usize) -> (usize, [usize; 2]) {
        let mut n = 0;
        let mut out = [usize::MAX; 2];
        if self.occ[c] == 0 {
            return (0, out);
        }
        for k in 0..COLOURS {
            for i in 0..PIECES {
                let g = k * PIECES + i;
                if g != exclude && cell(k, self.pos[k][i]) == c {
                    if n < 2 {
                        out[n] = g;
                    }
                    n += 1;
                }
            }
        }
        (n, out)
    }

    /// Whether the two pieces on cell `c` form a blockade under these rules (R-BLOCK).
    #[inline]
    fn is_blockade(&self, c: usize) -> bool {
        if self.occ[c] < 2 {
            return false;
        }
        // Variant `safe-only` (D-29) acts where pairs form (`plan_move`): no pair that
        // blocks ever stands off a safe square, so every pair here is judged as usual.
        if self.rules.blockade == BlockadeKind::AnyTwo {
            return true;
        }
        if c > RING as usize {
            return true; // a home column holds one colour only
        }
        let safe = is_safe(c as u8);
        let (_, occ) = self.occupants(c, usize::MAX);
        let (a, b) = (occ[0] / PIECES, occ[1] / PIECES);
        a == b
            || self.rules.blockade == BlockadeKind::AnyTwo
            || (self.rules.blockade == BlockadeKind::SameTeam && a % 2 == b % 2)
            || (self.rules.mixed_blockades_on_safe && safe)
    }

    fn gid_pos(&self, g: usize) -> u8 {
        self.pos[g / PIECES][g % PIECES]
    }

    fn is_late(&self, g: usize) -> bool {
        self.late & (1 << g) != 0
    }

    fn loc_of_cell(&self, k: usize, pos: u8) -> Location {
        Location::from_progress(Colour::ALL[k], pos)
    }

    /// Squares a part is worth for colour `k`: a six counts 7 (or 12) when the colour
    /// has no piece in the nest (seeds 001, 004).
    #[inline]
    fn steps_for(&self, k: usize, part: u8, t: &Throw) -> u8 {
        match self.rules.six_counts_when_nest_empty {
            Some(x) if part == 6 && !t.bonus14 && self.pos[k].iter().all(|&p| p != NEST) => x,
            _ => part,
        }
    }

    // ----- single moves ------------------------------------------------------------

    /// Plans moving piece `i` of colour `k` forward by `n` squares (R-MOVE, R-BLOCK,
    /// R-CAPTURE, R-SAFE, R-GOAL, R-BOUNCE); the board is not changed.
    fn plan_move(&self, k: usize, i: usize, n: u8) -> Result<Landing, Refusal> {
        let p = self.pos[k][i];
        if p == NEST {
            return Err(Refusal::InNest);
        }
        if p == GOAL {
            return Err(Refusal::InGoal);
        }
        let me = k * PIECES + i;
        let own_cell = cell(k, p);
        let raw = p + n;
        if self.rules.exact_count_last_safe && p < LAST_RING && raw > LAST_RING {
            return Err(Refusal::LastSafeExact);
        }
        let (to, bounced) = if raw > GOAL {
            let back = raw - GOAL;
            if !self.rules.bounce {
                return Err(Refusal::Overshoots);
            }
            if back > HOME_COLUMN {
                return Err(Refusal::BounceTooFar);
            }
            (GOAL - back, true)
        } else {
            (raw, false)
        };
        // Squares passed (D-1: a bouncing piece cannot pass a blockade either).
        for s in 1..n {
            let x = p + s;
            let q = if x > GOAL { 2 * GOAL - x } else { x };
            if q == GOAL {
                continue;
            }
            let c = cell(k, q);
            if c != own_cell && self.is_blockade(c) {
                return Err(Refusal::PassesBlockade(self.loc_of_cell(k, q)));
            }
        }
        let mut landing = Landing {
            to,
            capture: None,
            partner: None,
            must_take: false,
            bounced,
        };
        if to == GOAL {
            return Ok(landing);
        }
        let c = cell(k, to);
        let count = self.occ[c] - (c == own_cell) as u8;
        if count >= 2 {
            return Err(Refusal::Full(self.loc_of_cell(k, to)));
        }
        if count == 1 && self.rules.blockades_only_on_safe && !(to <= LAST_RING && is_safe(c as u8))
        {
            // D-29 (variant `safe-only`, seed 001 "sólo permite formar puentes en los
            // seguros"): a pair that would block may form only on a safe square. A lone
            // partner piece there can still be captured (seed 004's choice loses the
            // blockade option); an opponent's is captured as usual.
            let (_, occ) = self.occupants(c, me);
            let other = occ[0] / PIECES;
            if other == k {
                return Err(Refusal::PairOffSafe(self.loc_of_cell(k, to)));
            }
            if self.rules.partner_capture_choice && other % 2 == k % 2 {
                landing.partner = Some(occ[0] as u8);
                landing.must_take = true;
                return Ok(landing);
            }
        }
        if count == 1 && to <= LAST_RING {
            let (_, occ) = self.occupants(c, me);
            let other = occ[0] / PIECES;
            if other != k {
                let mate = self.rules.teams && other % 2 == k % 2;
                if is_safe(c as u8) {
                    // R-SAFE: no capture on a safe square.
                    if !mate && self.rules.safe_with_opponent == SafeWithOpponent::Forbidden {
                        return Err(Refusal::SafeOccupied(self.loc_of_cell(k, to)));
                    }
                } else if mate && self.rules.partner_capture_choice {
                    landing.partner = Some(occ[0] as u8);
                } else {
                    // R-CAPTURE: a lone opponent piece on a normal ring square.
                    landing.capture = Some(occ[0] as u8);
                }
            }
        }
        Ok(landing)
    }

    /// Plans an exit for colour `k` (R-EXIT-1, R-EXIT-2, R-EXIT-CAPTURE): the nest
    /// piece that comes out, the piece captured, and whether the capture earns a bonus.
    fn plan_exit(&self, k: usize) -> Result<(usize, Option<usize>, bool), Refusal> {
        let i = (0..PIECES)
            .find(|&i| self.pos[k][i] == NEST)
            .ok_or(Refusal::NoPieceInNest)?;
        let c = exit_square(k) as usize;
        let own = |g: usize| g / PIECES == k;
        match self.rules.exit_capture {
            ExitCapture::LoneOpponent => match self.occ[c] {
                0 => Ok((i, None, false)),
                1 => {
                    let (_, occ) = self.occupants(c, usize::MAX);
                    if own(occ[0]) {
                        Ok((i, None, false))
                    } else {
                        Ok((i, Some(occ[0]), true))
                    }
                }
                _ => Err(Refusal::ExitBlocked),
            },
            ExitCapture::Online | ExitCapture::Classic | ExitCapture::Pairs => {
                if self.occ[c] < 2 {
                    return Ok((i, None, false));
                }
                let (_, occ) = self.occupants(c, usize::MAX);
                let (a, b) = (occ[0], occ[1]);
                match (own(a), own(b)) {
                    (true, true) => Err(Refusal::ExitBlocked),
                    (true, false) => Ok((i, Some(b), true)),
                    (false, true) => Ok((i, Some(a), true)),
                    (false, false) => {
                        let last = if self.is_late(b) { (b, a) } else { (a, b) };
                        if self.rules.exit_capture == ExitCapture::Pairs {
                            // Seed 004: the opponent team's piece before the partner's,
                            // and no +20 when both pieces were other players'.
                            let opp = |g: usize| (g / PIECES) % 2 != k % 2;
                            let victim = match (opp(last.0), opp(last.1)) {
                                (false, true) => last.1,
                                _ => last.0,
                            };
                            Ok((i, Some(victim), false))
                        } else {
                            // D-6: the one that arrived last.
                            Ok((i, Some(last.0), true))
                        }
                    }
                }
            }
        }
    }

    /// The parts an exit would use now: a part showing 5, else both dice when they sum
    /// to 5.
    fn exit_parts(&self, t: &Throw) -> Option<u8> {
        if t.bonus14 {
            return None;
        }
        if self.rules.exit_on_five {
            if let Some((i, _)) = t.unused().find(|&(_, v)| v == 5) {
                return Some(1 << i);
            }
        }
        if self.rules.exit_on_sum_five
            && t.nparts == 2
            && !t.used[0]
            && !t.used[1]
            && t.parts[0] + t.parts[1] == 5
        {
            return Some(0b11);
        }
        None
    }

    // ----- mutation ----------------------------------------------------------------

    /// Moves piece `g` to progress `to`, keeping arrival order (D-6); returns the
    /// event for a blockade it leaves, if any.
    fn relocate(&mut self, g: usize, to: u8) -> Option<Event> {
        let mut opened = None;
        let k = g / PIECES;
        let from = self.gid_pos(g);
        let from_cell = cell(k, from);
        if from_cell != 0 && self.occ[from_cell] == 2 {
            let (n, occ) = self.occupants(from_cell, g);
            if n == 1 {
                let was_blockade = self.is_blockade(from_cell);
                self.late &= !(1 << occ[0]);
                if was_blockade {
                    opened = Some(Event::BlockadeOpened {
                        colour: Colour::ALL[k],
                        at: Location::from_progress(Colour::ALL[k], from),
                    });
                }
            }
        }
        if from_cell != 0 {
            self.occ[from_cell] -= 1;
        }
        self.pos[k][g % PIECES] = to;
        self.late &= !(1 << g);
        let to_cell = cell(k, to);
        if to_cell != 0 {
            if self.occ[to_cell] == 1 {
                self.late |= 1 << g;
            }
            self.occ[to_cell] += 1;
        }
        opened
    }

    fn capture(&mut self, victim: usize, by: usize) -> Event {
        let vk = victim / PIECES;
        let square = Location::from_progress(Colour::ALL[vk], self.gid_pos(victim));
        let other = cell(vk, self.gid_pos(victim));
        let (n, occ) = self.occupants(other, victim);
        if n == 1 {
            self.late &= !(1 << occ[0]);
        }
        self.occ[other] -= 1;
        self.pos[vk][victim % PIECES] = NEST;
        self.late &= !(1 << victim);
        if self.last_moved.map(PieceId::gid) == Some(victim) {
            self.last_moved = None; // D-7: it is in the nest, no longer the last moved
        }
        Event::PieceCaptured {
            colour: Colour::ALL[vk],
            piece: (victim % PIECES) as u8,
            square: match square {
                Location::Ring(s) => s,
                _ => 0,
            },
            by: Colour::ALL[by],
        }
    }

    fn earn_bonus<S: Sink>(&mut self, amount: u8, reason: BonusReason, sink: &mut S) {
        if amount == 0 {
            return;
        }
        if let Stage::Move(t) = &mut self.stage {
            t.push_bonus(amount);
        }
        sink.push(Event::BonusEarned {
            colour: self.turn,
            amount,
            reason,
        });
    }

    /// After colour `k`'s piece reached the goal: victory, a finishing place, or the
    /// goal bonus (R-WIN, R-BONUS).
    fn reached_goal<S: Sink>(&mut self, k: usize, sink: &mut S) {
        let all_in = self.pos[k].iter().all(|&p| p == GOAL);
        if !all_in {
            self.earn_bonus(self.rules.goal_bonus, BonusReason::Goal, sink);
            return;
        }
        let colour = Colour::ALL[k];
        match self.rules.game_end {
            GameEnd::FirstToFinish => self.finish(
                Outcome {
                    winner: colour,
                    reason: WinReason::Goal,
                    partner: None,
                },
                sink,
            ),
            GameEnd::FirstTeam => {
                if self.places[k] == 0 {
                    self.places[k] = self.next_place();
                    sink.push(Event::PlayerFinished {
                        colour,
                        place: self.places[k],
                    });
                }
                let mate = partner(k);
                if self.pos[mate].iter().all(|&p| p == GOAL) {
                    self.finish(
                        Outcome {
                            winner: Colour::ALL[mate],
                            reason: WinReason::Goal,
                            partner: Some(colour),
                        },
                        sink,
                    );
                } else if self.rules.goal_bonus_for_last_piece {
                    self.earn_bonus(self.rules.goal_bonus, BonusReason::Goal, sink);
                }
            }
            GameEnd::PlayOn => {
                self.places[k] = self.next_place();
                sink.push(Event::PlayerFinished {
                    colour,
                    place: self.places[k],
                });
                self.seats[k] = SeatStatus::Finished;
                let left: Vec<usize> = (0..COLOURS)
                    .filter(|&c| self.seats[c] == SeatStatus::Playing)
                    .collect();
                if left.len() <= 1 {
                    if let Some(&last) = left.first() {
                        self.places[last] = self.next_place();
                    }
                    let winner = (0..COLOURS).find(|&c| self.places[c] == 1).unwrap_or(k);
                    self.finish(
                        Outcome {
                            winner: Colour::ALL[winner],
                            reason: WinReason::Goal,
                            partner: None,
                        },
                        sink,
                    );
                } else if let Stage::Move(t) = &mut self.stage {
                    t.done = true; // seed 001: "deja de lanzar el dado y pasa turno"
                }
            }
        }
    }

    fn next_place(&self) -> u8 {
        self.places.iter().copied().max().unwrap_or(0) + 1
    }

    fn finish<S: Sink>(&mut self, o: Outcome, sink: &mut S) {
        self.forfeit_all_bonuses(sink); // the game is over: nothing more is played
        self.stage = Stage::Finished(o);
        self.turn = o.winner;
        sink.push(Event::GameWon {
            winner: o.winner,
            reason: o.reason,
            partner: o.partner,
        });
    }

    fn exec<S: Sink>(&mut self, step: Step, hint: Option<Landing>, sink: &mut S) {
        let k = self.mover_index();
        let Stage::Move(mut t) = self.stage else {
            return;
        };
        match step {
            Step::Exit(mask) => {
                let Ok((i, victim, bonus)) = self.plan_exit(k) else {
                    return;
                };
                // Variant `two-out` (seed 001 "al sacar el primer 5"): the colour's first 5
                // of the game brings out two pieces, room permitting (D-23).
                let first_five = self.rules.two_out_on_first_five && self.first_five[k];
                self.first_five[k] = false;
                for d in 0..4 {
                    if mask & (1 << d) != 0 {
                        t.used[d] = true;
                    }
                }
                self.stage = Stage::Move(t);
                self.exit_piece(k, i, victim, bonus, sink);
                if first_five {
                    // The second exit is an exit like any other: it captures as R-EXIT-CAPTURE
                    // says, and is barred only by two own pieces (or an empty nest).
                    if let Ok((j, victim, bonus)) = self.plan_exit(k) {
                        self.exit_piece(k, j, victim, bonus, sink);
                    }
                }
            }
            Step::Move(i, d, take) => {
                t.used[d as usize] = true;
                self.stage = Stage::Move(t);
                let n = self.steps_for(k, t.parts[d as usize], &t);
                let die = t.parts[d as usize];
                self.exec_move(k, i as usize, n, MoveKind::Die, Some(die), take, hint, sink);
            }
            Step::Bonus(i, slot, take) => {
                let n = t.take_bonus(slot as usize).unwrap_or(0);
                self.stage = Stage::Move(t);
                self.exec_move(k, i as usize, n, MoveKind::Bonus, None, take, hint, sink);
            }
        }
    }

    /// Brings nest piece `i` of colour `k` out onto its exit square, capturing `victim`
    /// first (R-EXIT-1, R-EXIT-CAPTURE; `bonus`: the capture earns the capture bonus).
    fn exit_piece<S: Sink>(
        &mut self,
        k: usize,
        i: usize,
        victim: Option<usize>,
        bonus: bool,
        sink: &mut S,
    ) {
        let captured = victim.map(|v| self.capture(v, k));
        self.relocate(k * PIECES + i, EXIT);
        self.note_moved(k, i);
        sink.push(Event::PieceExited {
            colour: Colour::ALL[k],
            piece: i as u8,
            square: exit_square(k),
        });
        if let Some(e) = captured {
            sink.push(e);
            if bonus {
                self.earn_bonus(self.rules.capture_bonus, BonusReason::Capture, sink);
            }
        }
    }

    /// Records piece `i` of colour `k` as the last moved (R-THIRD, D-16, D-21), once the
    /// turn has a repeat: before that, R-THIRD can never apply in this turn.
    #[inline]
    fn note_moved(&mut self, k: usize, i: usize) {
        if self.doubles > 0 {
            self.last_moved = Some(PieceId {
                colour: Colour::ALL[k],
                piece: i as u8,
            });
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_move<S: Sink>(
        &mut self,
        k: usize,
        i: usize,
        n: u8,
        by: MoveKind,
        die: Option<u8>,
        take_partner: bool,
        hint: Option<Landing>,
        sink: &mut S,
    ) {
        let colour = Colour::ALL[k];
        let l = match hint {
            Some(l) => l,
            None => match self.plan_move(k, i, n) {
                Ok(l) => l,
                Err(_) => return,
            },
        };
        let from = Location::from_progress(colour, self.pos[k][i]);
        let opened = self.relocate(k * PIECES + i, l.to);
        self.note_moved(k, i);
        sink.push(Event::PieceMoved {
            colour,
            piece: i as u8,
            from,
            to: Location::from_progress(colour, l.to),
            steps: n,
            by,
            bounced: l.bounced,
            die: die.filter(|&d| d != n),
        });
        if let Some(e) = opened {
            sink.push(e);
        }
        let victim = l
            .capture
            .or(l.partner.filter(|_| take_partner))
            .map(usize::from);
        if let Some(v) = victim {
            let e = self.capture(v, self.turn.index());
            sink.push(e);
            self.earn_bonus(self.rules.capture_bonus, BonusReason::Capture, sink);
        } else if l.to == GOAL {
            self.reached_goal(k, sink);
        }
    }

    // ----- step generation and the must-play search ---------------------------------

    fn raw_steps(&self, out: &mut Steps) {
        self.for_each_step(|st, hint| {
            out.push_with(st, hint);
            true
        });
    }

    /// Whether a bonus move must be played before anything else now.
    #[inline]
    fn bonus_due(&self, t: &Throw) -> bool {
        t.nbonus > 0 && (self.rules.bonus_timing == BonusTiming::Immediately || t.remaining() == 0)
    }

    /// Whether this node is past the dice, playing the bonuses after them (D-4 `after
    /// dice` timing): only there does the number of bonus moves played count (D-28).
    #[inline]
    fn in_bonus_phase(&self) -> bool {
        match self.stage {
            Stage::Move(t) => {
                self.rules.bonus_timing == BonusTiming::AfterDice && self.bonus_due(&t)
            }
            _ => false,
        }
    }

    /// The part of a play's value that the choice at this node compares: the bonus
    /// count only in the bonus phase (D-28), never while dice remain (D-2, D-14).
    #[inline]
    fn key(&self, v: Option<u16>) -> Option<u16> {
        if self.in_bonus_phase() {
            v
        } else {
            v.map(|v| v / BONUS_BITS)
        }
    }

    /// Calls `f` with every step possible right now, before the must-play filters,
    /// until `f` returns false. (D-13 is handled by the search, which tries every order.)
    #[inline]
    fn for_each_step(&self, mut f: impl FnMut(Step, Option<Landing>) -> bool) {
        let Stage::Move(t) = self.stage else { return };
        if t.done {
            return;
        }
        let k = self.mover_index();
        if self.bonus_due(&t) {
            // D-28: the pending bonuses may be played in any order (one step per amount).
            let pending = t.pending();
            for (slot, &amount) in pending.iter().enumerate() {
                if pending[..slot].contains(&amount) {
                    continue;
                }
                let slot = slot as u8;
                for i in 0..PIECES {
                    let p = self.pos[k][i];
                    if !self.bonus_taker(p) {
                        continue;
                    }
                    if let Ok(l) = self.plan_move(k, i, amount) {
                        if !l.must_take && !f(Step::Bonus(i as u8, slot, false), Some(l)) {
                            return;
                        }
                        if l.partner.is_some() && !f(Step::Bonus(i as u8, slot, true), Some(l)) {
                            return;
                        }
                    }
                }
            }
            return;
        }
        if t.remaining() == 0 {
            return;
        }
        if let Some(mask) = self.exit_parts(&t) {
            if self.plan_exit(k).is_ok() && !f(Step::Exit(mask), None) {
                return;
            }
        }
        let v = t.part_values();
        for (d, part) in t.unused() {
            if (0..d).any(|e| !t.used[e] && v[e] == part) {
                continue; // an equal unused part comes first: one step is enough
            }
            let n = self.steps_for(k, part, &t);
            for i in 0..PIECES {
                if let Ok(l) = self.plan_move(k, i, n) {
                    if !l.must_take && !f(Step::Move(i as u8, d as u8, false), Some(l)) {
                        return;
                    }
                    if l.partner.is_some() && !f(Step::Move(i as u8, d as u8, true), Some(l)) {
                        return;
                    }
                }
            }
        }
    }

    fn bonus_taker(&self, p: u8) -> bool {
        match self.rules.bonus_takers {
            BonusTakers::RingOnly => (EXIT..=LAST_RING).contains(&p),
            BonusTakers::OutOfNestAndGoal => p != NEST && p != GOAL,
        }
    }

    /// Settles what cannot be played (R-BONUS, D-30): with bonuses waiting for the dice
    /// (after-dice timing) and no die playable, the dice are lost (`no_legal_move`) and
    /// the bonuses' turn comes; bonuses that no piece can take, in any order, are
    /// forfeited (`bonus_forfeited`). Returns whether the throw still has a step to play;
    /// `buf` holds the raw steps.
    fn forfeit_bonus_if_stuck<S: Sink>(&mut self, sink: &mut S, buf: &mut Steps) -> bool {
        loop {
            *buf = Steps::new();
            let Stage::Move(mut t) = self.stage else {
                return false;
            };
            self.raw_steps(buf);
            if !buf.is_empty() {
                return true;
            }
            if t.nbonus == 0 || t.done {
                return false;
            }
            if !self.bonus_due(&t) {
                self.lose_dice(sink);
                continue;
            }
            if let Some(amount) = t.pop_bonus() {
                self.stage = Stage::Move(t);
                sink.push(Event::BonusForfeited {
                    colour: self.turn,
                    amount,
                });
            }
        }
    }

    /// D-30: the unused dice cannot be played while bonuses wait for them: they are
    /// lost (reported as `no_legal_move`) and the pending bonuses become due.
    fn lose_dice<S: Sink>(&mut self, sink: &mut S) {
        if let Stage::Move(mut t) = self.stage {
            if let Some(d) = t.remaining_dice() {
                sink.push(Event::NoLegalMove {
                    colour: self.turn,
                    dice: d,
                });
            }
            t.dice_lost = true;
            self.stage = Stage::Move(t);
        }
    }

    /// Reports every pending bonus as forfeited and clears them: the throw ends with
    /// them unplayed (R-BONUS; R-CLOCK, R-LEAVE, R-WIN, D-27).
    fn forfeit_all_bonuses<S: Sink>(&mut self, sink: &mut S) {
        if let Stage::Move(mut t) = self.stage {
            while let Some(amount) = t.pop_bonus() {
                sink.push(Event::BonusForfeited {
                    colour: self.turn,
                    amount,
                });
            }
            self.stage = Stage::Move(t);
        }
    }

    fn step_value(&self, step: Step) -> u16 {
        match step {
            Step::Exit(mask) => W_EXIT + W_DIE * mask.count_ones() as u16,
            Step::Move(..) => W_DIE,
            // D-28: after the dice, play as many of the pending bonuses as any order can.
            Step::Bonus(..) if self.rules.bonus_timing == BonusTiming::AfterDice => W_BONUS,
            Step::Bonus(..) => 0,
        }
    }

    fn step_parts(step: Step) -> u16 {
        match step {
            Step::Exit(m) => m.count_ones() as u16,
            Step::Move(..) => 1,
            Step::Bonus(..) => 0,
        }
    }

    /// Value of the end of a play: `None` when it moves a blockade on together
    /// (seeds 002/003); otherwise R-OPEN satisfied and the larger-die preference.
    fn leaf_value(&self) -> Option<u16> {
        let Stage::Move(t) = self.stage else {
            return Some(0);
        };
        let mut v = 0;
        if t.open.len > 0 {
            let mut open = false;
            for (idx, &(a, b)) in t.open.as_slice().iter().enumerate() {
                let (a, b) = (a as usize, b as usize);
                let ca = cell(a / PIECES, self.gid_pos(a));
                let together = ca != 0 && ca == cell(b / PIECES, self.gid_pos(b));
                if !together {
                    open = true;
                } else if self.rules.no_moving_blockade_together && ca != t.open.cells[idx] as usize
                {
                    return None;
                }
            }
            if open && t.must_open {
                v += W_OPEN;
            }
        }
        if self.rules.one_die_playable == OneDiePlayable::Larger
            && t.nparts == 2
            && t.used_count() == 1
        {
            let used = if t.used[0] { t.parts[0] } else { t.parts[1] };
            v += W_LARGER * used as u16;
        }
        Some(v)
    }

    /// Value of taking `s` from `node` and then playing as well as possible.
    fn child_value(node: &Game, s: Step, hint: Option<Landing>, remaining: u16) -> Option<u16> {
        let mut child = *node;
        child.exec(s, hint, &mut Discard);
        let over = match child.stage {
            Stage::Finished(_) => true,
            Stage::Move(t) => t.done,
            Stage::Roll => false,
        };
        if over {
            // D-14: a play that wins (or finishes the player) counts as using every die.
            let used = Self::step_parts(s).min(remaining);
            let open = (node.open_required()) as u16 * W_OPEN;
            Some(node.step_value(s) + W_DIE * (remaining - used) + open)
        } else {
            child.best().map(|b| node.step_value(s) + b)
        }
    }

    /// An upper bound of [`Game::best`] at this node: every remaining part played, as
    /// many exits as the dice and the nest allow, R-OPEN satisfied, the larger die.
    fn bound(&self) -> u16 {
        let Stage::Move(t) = self.stage else { return 0 };
        let k = self.mover_index();
        let nest = self.pos[k].iter().filter(|&&p| p == NEST).count() as u16;
        let fives = t.unused().filter(|&(_, v)| v == 5).count() as u16;
        let sum5 =
            (t.remaining() == 2 && t.nparts == 2 && !t.bonus14 && t.parts[0] + t.parts[1] == 5)
                as u16;
        let exits = (fives + sum5).min(nest);
        W_EXIT * exits
            + W_DIE * t.remaining() as u16
            + self.open_required() as u16 * W_OPEN
            // The larger-die preference only scores plays that leave a die unplayed,
            // which never beat playing every remaining die: it matters at leaves only.
            + if self.rules.one_die_playable == OneDiePlayable::Larger && t.remaining() == 0 {
                W_LARGER * 6
            } else {
                0
            }
    }

    /// Best value over all plays continuing from this position (D-14 order of filters),
    /// stopping as soon as a play reaches the upper bound. `None`: every play is
    /// forbidden.
    fn best(&self) -> Option<u16> {
        let mut node = *self;
        loop {
            let Stage::Move(mut t) = node.stage else {
                return node.leaf_value();
            };
            let remaining = t.remaining() as u16;
            // In the bonus phase every order of the bonuses is searched (D-28); before
            // it, the search stops at the first play reaching the bound (bonus count aside).
            let bonus_phase = node.in_bonus_phase();
            let bound = node.bound() / BONUS_BITS;
            let mut best: Option<u16> = None;
            let mut any = false;
            node.for_each_step(|s, hint| {
                any = true;
                let v = Self::child_value(&node, s, hint, remaining);
                best = best.max(v);
                bonus_phase || best.is_none_or(|b| b / BONUS_BITS < bound)
            });
            if any {
                // When every continuation is forbidden, stopping here is the play.
                return best.or_else(|| node.leaf_value());
            }
            if t.nbonus == 0 || t.done {
                return node.leaf_value();
            }
            if !node.bonus_due(&t) {
                t.dice_lost = true; // D-30: the dice cannot be played, the bonuses can come
            } else {
                t.pop_bonus(); // R-BONUS: no order lets a piece take it, it is lost
            }
            node.stage = Stage::Move(t);
        }
    }

    fn open_required(&self) -> bool {
        matches!(self.stage, Stage::Move(t) if t.open.len > 0 && t.must_open)
    }

    /// The steps a player may take now, after every filter (D-14): the first steps of
    /// the best plays, and exits first when an exit starts a best play (D-18).
    /// Also returns the settled node and every step's value.
    fn legal_steps(&self) -> Scoring {
        let mut node = *self;
        let mut raw = Steps::new();
        node.forfeit_bonus_if_stuck(&mut Discard, &mut raw);
        let remaining = match node.stage {
            Stage::Move(t) => t.remaining() as u16,
            _ => 0,
        };
        let mut values = [None; 24];
        let mut top = None;
        for (i, &s) in raw.as_slice().iter().enumerate() {
            values[i] = Self::child_value(&node, s, raw.hints[i], remaining);
            top = top.max(values[i]);
        }
        let mut legal = Steps::new();
        if !node.all_or_none_blocked(top) {
            let mut exits_only = false;
            let top = node.key(top);
            for (i, &s) in raw.as_slice().iter().enumerate() {
                if values[i].is_some() && node.key(values[i]) == top {
                    exits_only |= matches!(s, Step::Exit(_));
                    legal.push(s);
                }
            }
            if exits_only {
                let mut only = Steps::new();
                for &s in legal.as_slice() {
                    if matches!(s, Step::Exit(_)) {
                        only.push(s);
                    }
                }
                legal = only;
            }
        }
        Scoring {
            node,
            raw,
            values,
            legal,
        }
    }

    /// Seed 002: the four parts of the doubles bonus are played all or not at all.
    fn all_or_none_blocked(&self, top: Option<u16>) -> bool {
        match self.stage {
            Stage::Move(t) if t.bonus14 && self.rules.doubles_bonus == DoublesBonus::AllOrNone => {
                let full = W_DIE * t.remaining() as u16;
                top.is_none_or(|v| (v % W_EXIT) / W_DIE * W_DIE < full)
            }
            _ => false,
        }
    }

    fn step_to_action(&self, s: Step) -> Action {
        match (s, self.stage) {
            (Step::Exit(_), _) => Action::Exit,
            (Step::Move(i, d, capture), Stage::Move(t)) => Action::Move {
                piece: i,
                die: t.parts[d as usize],
                capture,
            },
            (Step::Bonus(i, slot, capture), Stage::Move(t)) => Action::Bonus {
                piece: i,
                amount: t.pending().get(slot as usize).copied().unwrap_or(0),
                capture,
            },
            (Step::Move(i, _, capture), _) | (Step::Bonus(i, _, capture), _) => Action::Move {
                piece: i,
                die: 0,
                capture,
            },
        }
    }

    /// The complete set of legal actions for the player to move, in a stable order
    /// (exit, then moves by die and piece, or bonus moves by piece). Empty when the game
    /// awaits a roll or has ended: a roll is any [`Action::Roll`] with valid dice, and
    /// [`Action::Timeout`] and [`Action::Abandon`] come from outside the rules.
    pub fn legal_actions(&self) -> Vec<Action> {
        if !matches!(self.stage, Stage::Move(_)) {
            return Vec::new();
        }
        let sc = self.legal_steps();
        sc.legal
            .as_slice()
            .iter()
            .map(|&s| sc.node.step_to_action(s))
            .collect()
    }

    // ----- applying actions ------------------------------------------------------------

    /// Applies `action` and returns the new state with the events it caused, in order.
    /// An illegal action returns an [`ActionError`] naming the violated rule; `self` is
    /// never changed.
    pub fn apply(&self, action: &Action) -> Result<(Game, Vec<Event>), ActionError> {
        let mut g = *self;
        let events = g.play(action)?;
        Ok((g, events))
    }

    /// Applies `action` in place and returns its events. On error the game is unchanged.
    pub fn play(&mut self, action: &Action) -> Result<Vec<Event>, ActionError> {
        let mut events = Vec::new();
        let mut next = *self;
        next.play_into(action, &mut events)?;
        *self = next;
        Ok(events)
    }

    fn play_into(&mut self, action: &Action, ev: &mut Vec<Event>) -> Result<(), ActionError> {
        use ErrorKind as K;
        if let Stage::Finished(o) = self.stage {
            return Err(ActionError::new(
                K::GameOver,
                "R-WIN",
                format!("the game is over: {} won", o.winner),
            ));
        }
        match *action {
            Action::Abandon { colour } => return self.abandon(colour, ev),
            Action::Timeout => return self.timeout(ev),
            Action::Roll { dice } => return self.roll(dice, ev),
            _ => {}
        }
        if !matches!(self.stage, Stage::Move(_)) {
            return Err(ActionError::new(
                K::AwaitingRoll,
                "R-ROLL",
                format!("{} must roll the dice first", self.turn),
            ));
        }
        // A position read from outside may not be settled yet (a live game always is):
        // what cannot be played is forfeited first, with its events, as `legal_actions`
        // assumes. Errors are explained on the position as the player saw it.
        let seen = *self;
        if matches!(self.stage, Stage::Move(t) if t.nbonus > 0) {
            self.forfeit_bonus_if_stuck(ev, &mut Steps::new());
        }
        let (Stage::Move(t), Stage::Move(t0)) = (self.stage, seen.stage) else {
            return Err(ActionError::new(
                K::AwaitingRoll,
                "R-ROLL",
                "no throw is being played",
            ));
        };
        let as_seen = || {
            seen.action_to_step(action, &t0)
                .map(|s0| seen.diagnose(s0, &seen.legal_steps()))
        };
        let step = match self.action_to_step(action, &t) {
            Ok(step) => step,
            Err(e) => return Err(as_seen().unwrap_or(e)),
        };
        let Some(node) = self.check_legal(step) else {
            return Err(as_seen().unwrap_or_else(|_| self.diagnose(step, &self.legal_steps())));
        };
        *self = node;
        self.exec(step, None, ev);
        self.settle(ev);
        Ok(())
    }

    /// The settled node when `step` is legal (the same answer as membership in
    /// [`Game::legal_steps`], but only the step's own play and the best play are
    /// searched, and the best stops at the first play reaching the upper bound).
    fn check_legal(&self, step: Step) -> Option<Game> {
        let mut node = *self;
        let mut steps = Steps::new();
        node.forfeit_bonus_if_stuck(&mut Discard, &mut steps);
        if !steps.as_slice().contains(&step) {
            return None;
        }
        let remaining = match node.stage {
            Stage::Move(t) => t.remaining() as u16,
            _ => 0,
        };
        let top = node.best();
        if node.all_or_none_blocked(top) {
            return None;
        }
        let mine = Self::child_value(&node, step, None, remaining);
        let top = node.key(top);
        if mine.is_none() || node.key(mine) != top {
            return None;
        }
        // D-18: when an exit starts a best play, only exits may be played first.
        if !matches!(step, Step::Exit(_)) {
            let exit_first = steps.as_slice().iter().any(|&s| {
                matches!(s, Step::Exit(_))
                    && node.key(Self::child_value(&node, s, None, remaining)) == top
            });
            if exit_first {
                return None;
            }
        }
        Some(node)
    }

    fn action_to_step(&self, action: &Action, t: &Throw) -> Result<Step, ActionError> {
        use ErrorKind as K;
        let colour = self.mover();
        let bonus_due = self.bonus_due(t);
        match *action {
            Action::Exit => {
                if bonus_due {
                    return Err(self.bonus_first(t));
                }
                let mask = self
                    .exit_parts(t)
                    .ok_or_else(|| Refusal::NoFive.into_error(colour, 0))?;
                Ok(Step::Exit(mask))
            }
            Action::Move {
                piece,
                die,
                capture,
            } => {
                if piece as usize >= PIECES {
                    return Err(Refusal::NoSuchPiece.into_error(colour, piece));
                }
                if bonus_due {
                    return Err(self.bonus_first(t));
                }
                let d = t
                    .unused()
                    .find(|&(_, v)| v == die)
                    .map(|(i, _)| i)
                    .ok_or_else(|| {
                        ActionError::new(
                            K::DieNotAvailable,
                            "R-MOVE",
                            format!(
                                "no unused die shows {die} (unused: {:?})",
                                t.unused().map(|(_, v)| v).collect::<Vec<_>>()
                            ),
                        )
                    })?;
                Ok(Step::Move(piece, d as u8, capture))
            }
            Action::Bonus {
                piece,
                amount,
                capture,
            } => {
                if piece as usize >= PIECES {
                    return Err(Refusal::NoSuchPiece.into_error(colour, piece));
                }
                match (t.pending_bonus(), t.bonus_slot(amount)) {
                    (None, _) => Err(ActionError::new(
                        K::Bonus,
                        "R-BONUS",
                        format!("{colour} has no bonus move pending"),
                    )),
                    (Some(_), _) if !bonus_due => Err(ActionError::new(
                        K::Bonus,
                        "D-4",
                        "bonus moves are played after every die in this rule set",
                    )),
                    (Some(_), None) => Err(ActionError::new(
                        K::Bonus,
                        "R-BONUS",
                        format!(
                            "no pending bonus of {amount} squares (pending: {:?})",
                            t.pending()
                        ),
                    )),
                    (Some(_), Some(slot)) => Ok(Step::Bonus(piece, slot as u8, capture)),
                }
            }
            Action::Roll { .. } | Action::Timeout | Action::Abandon { .. } => Err(
                ActionError::new(K::AwaitingMove, "R-MOVE", "unexpected action"),
            ),
        }
    }

    fn bonus_first(&self, t: &Throw) -> ActionError {
        ActionError::new(
            ErrorKind::Bonus,
            "R-BONUS",
            format!(
                "a bonus move of {} squares must be played first (D-4)",
                t.pending_bonus().unwrap_or(0)
            ),
        )
    }

    /// Names the rule an action breaks, given the legal steps.
    fn diagnose(&self, step: Step, sc: &Scoring) -> ActionError {
        use ErrorKind as K;
        let k = self.mover_index();
        let colour = Colour::ALL[k];
        // Raw feasibility is judged on the position as the player saw it (before any
        // automatic forfeit of an impossible bonus).
        let raw = |i: u8, n: u8, capture: bool| -> Option<ActionError> {
            match self.plan_move(k, i as usize, n) {
                Err(r) => Some(r.into_error(colour, i)),
                Ok(l) if capture && l.partner.is_none() => {
                    Some(Refusal::NoPartnerChoice.into_error(colour, i))
                }
                Ok(l) if !capture && l.must_take => Some(
                    Refusal::PairOffSafe(Location::from_progress(colour, l.to))
                        .into_error(colour, i),
                ),
                Ok(_) => None,
            }
        };
        let raw_err = match (step, self.stage) {
            (Step::Exit(_), _) => self.plan_exit(k).err().map(|r| r.into_error(colour, 0)),
            (Step::Move(i, d, capture), Stage::Move(t)) => {
                raw(i, self.steps_for(k, t.parts[d as usize], &t), capture)
            }
            (Step::Bonus(i, slot, capture), Stage::Move(t)) => {
                if !self.bonus_taker(self.pos[k][i as usize]) {
                    Some(Refusal::NotATaker.into_error(colour, i))
                } else {
                    raw(
                        i,
                        t.pending().get(slot as usize).copied().unwrap_or(0),
                        capture,
                    )
                }
            }
            (_, _) => Some(Refusal::NoFive.into_error(colour, 0)),
        };
        if let Some(e) = raw_err {
            return e;
        }
        let (node, legal) = (&sc.node, sc.legal.as_slice());
        let scored = || sc.raw.as_slice().iter().zip(sc.values);
        let top = scored().filter_map(|(_, v)| v).max().unwrap_or(0);
        let mine = scored().find(|(s, _)| **s == step).and_then(|(_, v)| v);
        let allowed = legal
            .iter()
            .map(|&s| node.step_to_action(s).to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let (rule, why) = match mine {
            None => (
                "R-BLOCK",
                "the two pieces of a blockade may not move on together to a new square",
            ),
            Some(_) if node.all_or_none_blocked(Some(top)) || legal.is_empty() => (
                "R-DOUBLES",
                "the doubles bonus is played with all four parts or not at all",
            ),
            Some(m)
                if m / W_EXIT < top / W_EXIT
                    || legal.iter().any(|s| matches!(s, Step::Exit(_))) =>
            {
                ("R-EXIT-1", "a piece must come out of the nest first")
            }
            Some(m) if (m % W_EXIT) / W_DIE < (top % W_EXIT) / W_DIE => (
                "D-2",
                "another play uses more dice (must play as many dice as possible)",
            ),
            Some(m) if (m % W_DIE) / W_OPEN < (top % W_DIE) / W_OPEN => {
                ("R-OPEN", "this throw must open a blockade")
            }
            Some(m) if node.in_bonus_phase() && m % BONUS_BITS < top % BONUS_BITS => (
                "D-28",
                "another order of the pending bonus moves plays more of them",
            ),
            Some(_) => (
                "D-2",
                "when only one die can be played it must be the larger",
            ),
        };
        ActionError::new(K::NotAllowed, rule, format!("{why}; legal now: {allowed}"))
    }

    /// Advances past forfeited bonuses and unplayable dice, ending the throw when it is
    /// over (R-MUST, R-BONUS, R-DOUBLES).
    ///
    /// Invariant (R-BONUS, D-28, D-30): the throw never ends while a pending bonus can
    /// be played, and every pending bonus it ends with is reported as forfeited.
    fn settle(&mut self, ev: &mut Vec<Event>) {
        let mut buf = Steps::new();
        loop {
            let Stage::Move(t0) = self.stage else {
                return;
            };
            if t0.done {
                self.forfeit_all_bonuses(ev);
                self.end_throw(ev);
                return;
            }
            if self.forfeit_bonus_if_stuck(ev, &mut buf) {
                // Raw steps always include a legal one, except where some plays are
                // forbidden outright (blockades moving on together; the all-or-none bonus).
                let may_be_empty = self.rules.no_moving_blockade_together || t0.bonus14;
                if !may_be_empty || !self.legal_steps().legal.is_empty() {
                    return;
                }
                if let Stage::Move(t) = self.stage {
                    if t.remaining() > 0 && t.nbonus > 0 {
                        // No play of the dice is allowed: they are lost, the bonuses'
                        // turn comes (D-30).
                        self.lose_dice(ev);
                        continue;
                    }
                }
            }
            if let Stage::Move(t) = self.stage {
                if let Some(d) = t.remaining_dice() {
                    ev.push(Event::NoLegalMove {
                        colour: self.turn,
                        dice: d,
                    });
                }
                // Only bonuses that no legal play can take are left (every play forbidden).
                self.forfeit_all_bonuses(ev);
                self.end_throw(ev);
            }
            return;
        }
    }

    fn end_throw(&mut self, ev: &mut Vec<Event>) {
        let Stage::Move(t) = self.stage else {
            return;
        };
        self.prev_unplayed = self.rules.third_repeat_needs_played_second && t.used_count() == 0;
        let again = !t.done
            && self.is_repeat(&t.dice)
            && !(t.bonus14
                && self.rules.doubles_bonus == DoublesBonus::AsManyAsPossible
                && t.used_count() < t.nparts as usize);
        if again {
            // R-DOUBLES, D-9: roll again, even when no die could be played.
            self.stage = Stage::Roll;
            ev.push(Event::RollAgain { colour: self.turn });
        } else {
            self.timeouts[self.turn.index()] = 0;
            self.pass_turn(ev);
        }
    }

    /// A throw that earns another throw (R-DOUBLES; a six with one die).
    fn is_repeat(&self, dice: &Dice) -> bool {
        match self.rules.roll_again_on {
            RollAgainOn::Doubles => dice.is_doubles(),
            RollAgainOn::Six => dice.values().first() == Some(&6),
        }
    }

    /// The next active colour after `from` in the turn direction (R-ORDER).
    fn next_colour(&self, from: Colour) -> Colour {
        let step = match self.rules.turn_direction {
            TurnDirection::Clockwise => COLOURS - 1,
            TurnDirection::CounterClockwise => 1,
        };
        let mut k = from.index();
        for _ in 0..COLOURS {
            k = (k + step) % COLOURS;
            if self.seats[k] == SeatStatus::Playing {
                return Colour::ALL[k];
            }
        }
        from
    }

    fn pass_turn(&mut self, ev: &mut Vec<Event>) {
        let from = self.turn;
        let to = self.next_colour(from);
        self.turn = to;
        self.stage = Stage::Roll;
        self.doubles = 0;
        self.last_moved = None;
        self.prev_unplayed = false;
        ev.push(Event::TurnPassed { from, to });
    }

    fn roll(&mut self, dice: Dice, ev: &mut Vec<Event>) -> Result<(), ActionError> {
        use ErrorKind as K;
        if !matches!(self.stage, Stage::Roll) {
            return Err(ActionError::new(
                K::AwaitingMove,
                "R-MOVE",
                format!("{} has already rolled; play a legal move", self.turn),
            ));
        }
        if dice.len() != self.rules.dice as usize {
            return Err(ActionError::new(
                K::BadDice,
                "R-ROLL",
                format!(
                    "this rule set throws {} dice, got {}",
                    self.rules.dice,
                    dice.len()
                ),
            ));
        }
        let colour = self.turn;
        let mk = self.mover_index();
        let repeat = self.is_repeat(&dice);
        if repeat {
            self.doubles += 1;
        }
        ev.push(Event::DiceRolled {
            colour,
            dice,
            doubles_in_row: self.doubles,
        });
        if repeat && self.doubles >= 3 && self.rules.third_repeat != ThirdRepeat::None {
            self.third_repeat_penalty(mk, ev);
            self.timeouts[colour.index()] = 0;
            self.pass_turn(ev);
            return Ok(());
        }
        let mut t = Throw::new(dice);
        if dice.is_doubles()
            && self.rules.doubles_bonus != DoublesBonus::None
            && self.pos[mk].iter().all(|&p| p != NEST)
        {
            // Seeds 002/003: tops and bottoms, 14 squares in four parts.
            let (a, b) = (dice.values()[0], 7 - dice.values()[0]);
            t.parts = [a, a, b, b];
            t.nparts = 4;
            t.bonus14 = true;
        }
        let forces_open = match self.rules.open_on {
            OpenOn::Doubles => dice.is_doubles(),
            OpenOn::Six => dice.values().first() == Some(&6),
            OpenOn::Never => false,
        };
        let track_together = self.rules.no_moving_blockade_together && dice.is_doubles();
        if forces_open || track_together {
            // R-OPEN, D-15: every blockade with one of the mover's pieces, home column included.
            for i in 0..PIECES {
                let c = cell(mk, self.pos[mk][i]);
                if c == 0 || !self.is_blockade(c) {
                    continue;
                }
                let g = mk * PIECES + i;
                let (n, occ) = self.occupants(c, g);
                if n == 1 && (occ[0] / PIECES != mk || occ[0] > g) {
                    t.open.push(g, occ[0], c);
                }
            }
            t.must_open = forces_open && t.open.len > 0;
        }
        self.stage = Stage::Move(t);
        self.settle(ev);
        Ok(())
    }

    /// R-THIRD: the third repeat in a row is not played; a piece goes to the nest.
    fn third_repeat_penalty(&mut self, k: usize, ev: &mut Vec<Event>) {
        let colour = Colour::ALL[k];
        let victim: Option<PieceId> = match self.rules.third_repeat {
            // The last moved piece, whatever its colour (a finished pair player moves the
            // partner's pieces): nothing goes home when it is in the home column or goal.
            ThirdRepeat::LastMovedToNest => self.last_moved.filter(|id| {
                let p = self.pos[id.colour.index()][id.piece as usize];
                (EXIT..=LAST_RING).contains(&p)
                    && !(self.rules.third_repeat_needs_played_second && self.prev_unplayed)
            }),
            ThirdRepeat::MostAdvancedToNest => (0..PIECES)
                .filter(|&i| self.pos[k][i] != NEST && self.pos[k][i] != GOAL)
                .max_by_key(|&i| self.pos[k][i])
                .map(|i| PieceId {
                    colour,
                    piece: i as u8,
                }),
            ThirdRepeat::None => None,
        };
        let from = victim.map(|id| self.location(id));
        if let Some(id) = victim {
            self.relocate(id.gid(), NEST);
        }
        ev.push(Event::ThirdDoublesPenalty {
            colour,
            piece: victim.map(|id| id.piece),
            from,
            piece_colour: victim.map(|id| id.colour).filter(|&c| c != colour),
        });
    }

    fn timeout(&mut self, ev: &mut Vec<Event>) -> Result<(), ActionError> {
        let colour = self.turn;
        let k = colour.index();
        self.timeouts[k] = self.timeouts[k].saturating_add(1);
        ev.push(Event::TimedOut {
            colour,
            consecutive: self.timeouts[k],
        });
        self.forfeit_all_bonuses(ev); // R-CLOCK: pending bonuses are lost with the turn
        self.pass_turn(ev);
        Ok(())
    }

    fn abandon(&mut self, colour: Colour, ev: &mut Vec<Event>) -> Result<(), ActionError> {
        let k = colour.index();
        if !matches!(self.seats[k], SeatStatus::Playing | SeatStatus::Finished) {
            return Err(ActionError::new(
                ErrorKind::NotPlaying,
                "R-LEAVE",
                format!("{colour} is not playing in this game"),
            ));
        }
        let was_playing = self.seats[k] == SeatStatus::Playing;
        self.seats[k] = SeatStatus::Abandoned;
        for i in 0..PIECES {
            if self.pos[k][i] != NEST {
                self.relocate(k * PIECES + i, NEST);
            }
        }
        ev.push(Event::PlayerAbandoned { colour });
        if self.turn == colour && was_playing {
            self.forfeit_all_bonuses(ev); // R-LEAVE: the throw ends with the player
        }
        let active = self.active_colours();
        let one_team_left = self.rules.teams
            && !active.is_empty()
            && active
                .iter()
                .all(|c| c.index() % 2 == active[0].index() % 2);
        if active.len() == 1 || one_team_left {
            let winner = active[0];
            let mate = active.iter().copied().find(|c| *c != winner);
            self.finish(
                Outcome {
                    winner,
                    reason: WinReason::Forfeit,
                    partner: mate,
                },
                ev,
            );
        } else if active.is_empty() {
            let winner = (0..COLOURS).find(|&c| self.places[c] == 1).unwrap_or(k);
            self.finish(
                Outcome {
                    winner: Colour::ALL[winner],
                    reason: WinReason::Goal,
                    partner: None,
                },
                ev,
            );
        } else if self.turn == colour && was_playing {
            self.pass_turn(ev);
        }
        Ok(())
    }
}
