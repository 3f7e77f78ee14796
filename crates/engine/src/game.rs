//! The validated game state and the turn procedure (reference §2): rolling, exits,
//! moves, captures, bonus moves, must-play, opening blockades, third doubles, the
//! goal and the bounce, victory, timeouts and abandonment.

use crate::action::{Action, ActionError, BonusReason, ErrorKind, Event, MoveKind};
use crate::board::{
    cell, exit_square, is_safe, Colour, Location, CELLS, COLOURS, EXIT, GOAL, HOME_COLUMN,
    LAST_RING, NEST, PIECES,
};
use crate::rules::{RuleSet, TurnDirection};
use crate::types::{Dice, Outcome, PieceId, SeatStatus, WinReason};

/// Blockades the player owned when rolling doubles, as pairs of global piece ids
/// (`colour * 4 + piece`); R-OPEN asks that one of them no longer stands (D-3, D-15).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct OpenPairs {
    pub(crate) pairs: [(u8, u8); 4],
    pub(crate) len: u8,
}

impl OpenPairs {
    pub(crate) fn as_slice(&self) -> &[(u8, u8)] {
        &self.pairs[..self.len as usize]
    }
    pub(crate) fn push(&mut self, a: usize, b: usize) -> bool {
        if (self.len as usize) < self.pairs.len() {
            self.pairs[self.len as usize] = (a as u8, b as u8);
            self.len += 1;
            true
        } else {
            false
        }
    }
}

/// A throw being played: its dice, which are used, a pending bonus, and the
/// blockades R-OPEN asks to open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Throw {
    pub(crate) dice: Dice,
    pub(crate) used: [bool; 2],
    pub(crate) bonus: Option<u8>,
    pub(crate) open: OpenPairs,
}

impl Throw {
    fn unused(&self) -> impl Iterator<Item = (usize, u8)> + '_ {
        self.dice
            .values()
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.used[*i])
            .map(|(i, v)| (i, *v))
    }
    fn remaining(&self) -> usize {
        self.unused().count()
    }
    /// The unused dice as a [`Dice`] value (for events); `None` when all are used.
    fn remaining_dice(&self) -> Option<Dice> {
        let v: Vec<u8> = self.unused().map(|(_, v)| v).collect();
        Dice::from_slice(&v).ok()
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
        /// Which dice are already used.
        used: [bool; 2],
        /// A pending bonus move, in squares.
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
    /// Doubles thrown in a row this turn (R-THIRD).
    pub(crate) doubles: u8,
    /// The piece of the current player that moved last this turn (R-THIRD, D-7, D-16).
    pub(crate) last_moved: Option<u8>,
    /// Consecutive timeouts per colour (R-LEAVE).
    pub(crate) timeouts: [u8; COLOURS],
    /// Pieces per occupancy cell (derived from `pos`, kept in step for speed).
    pub(crate) occ: [u8; CELLS],
}

/// Where a planned move ends.
#[derive(Clone, Copy, Debug)]
struct Landing {
    to: u8,
    capture: Option<usize>,
    bounced: bool,
}

/// Why a single move is impossible, before the must-play filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    NoSuchPiece,
    InNest,
    InGoal,
    NotOnRing,
    PassesBlockade(Location),
    Full(Location),
    Overshoots,
    NoPieceInNest,
    ExitBlocked,
    NoFive,
}

impl Refusal {
    fn into_error(self, colour: Colour, piece: u8) -> ActionError {
        use ErrorKind as K;
        match self {
            Refusal::NoSuchPiece => {
                ActionError::new(K::BadPiece, "R-MOVE", format!("there is no piece {piece}: pieces are 0 to 3"))
            }
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
            Refusal::NotOnRing => ActionError::new(
                K::Bonus,
                "R-BONUS",
                format!("{colour} piece {piece} is not on the ring; only a piece on the ring may take a bonus"),
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
            Refusal::Overshoots => ActionError::new(
                K::Blocked,
                "R-BOUNCE",
                format!("{colour} piece {piece} would overshoot the goal by more than the home column"),
            ),
            Refusal::NoPieceInNest => {
                ActionError::new(K::NoExit, "R-EXIT-1", format!("{colour} has no piece in the nest"))
            }
            Refusal::ExitBlocked => ActionError::new(
                K::NoExit,
                "R-EXIT-2",
                format!("{colour}'s exit square holds two of its own pieces; one must move first"),
            ),
            Refusal::NoFive => ActionError::new(
                K::NoExit,
                "R-EXIT-1",
                "an exit needs an unused die showing 5 or two unused dice summing to 5",
            ),
        }
    }
}

/// One step of a throw, internally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Exit using the die mask (bit 0: first die, bit 1: second die).
    Exit(u8),
    /// Move piece by the die at index.
    Move(u8, u8),
    /// Bonus move with piece.
    Bonus(u8),
}

/// A small fixed-capacity list of steps (at most one exit, two dice × four pieces, or
/// four bonus moves), so the search never allocates.
#[derive(Clone, Copy)]
struct Steps {
    items: [Step; 12],
    len: u8,
}

impl Steps {
    fn new() -> Steps {
        Steps {
            items: [Step::Bonus(0); 12],
            len: 0,
        }
    }
    #[inline]
    fn push(&mut self, s: Step) {
        if (self.len as usize) < self.items.len() {
            self.items[self.len as usize] = s;
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
    /// The rule set is not playable yet.
    #[error("{0}")]
    Unsupported(String),
}

// Score weights of a play (D-14): exits first, then dice played, then R-OPEN.
const W_EXIT: u8 = 16;
const W_DIE: u8 = 2;

impl Game {
    /// A new game: every piece in its nest, `first` to roll (R-FIRST).
    ///
    /// Errors: fewer than `rules.min_players` or more than `rules.max_players` seats, a
    /// repeated colour (R-SEAT), `first` not seated (R-FIRST), a rule set the engine does
    /// not play yet.
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
        Ok(Game {
            rules,
            seats,
            pos: [[NEST; PIECES]; COLOURS],
            late: 0,
            turn: first,
            stage: Stage::Roll,
            doubles: 0,
            last_moved: None,
            timeouts: [0; COLOURS],
            occ: [0; CELLS],
        })
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

    /// What the game waits for.
    pub fn expect(&self) -> Expect {
        match self.stage {
            Stage::Roll => Expect::Roll { colour: self.turn },
            Stage::Move(t) => Expect::Move {
                colour: self.turn,
                dice: t.dice,
                used: t.used,
                bonus: t.bonus,
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

    /// Doubles thrown in a row in this turn (R-THIRD).
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

    fn gid_pos(&self, g: usize) -> u8 {
        self.pos[g / PIECES][g % PIECES]
    }

    fn is_late(&self, g: usize) -> bool {
        self.late & (1 << g) != 0
    }

    fn loc_of_cell(&self, k: usize, pos: u8) -> Location {
        Location::from_progress(Colour::ALL[k], pos)
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
        let (to, bounced) = if raw > GOAL {
            let back = raw - GOAL;
            if !self.rules.bounce || back > HOME_COLUMN {
                return Err(Refusal::Overshoots);
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
            if c != own_cell && self.occ[c] >= 2 {
                return Err(Refusal::PassesBlockade(self.loc_of_cell(k, q)));
            }
        }
        if to == GOAL {
            return Ok(Landing {
                to,
                capture: None,
                bounced,
            });
        }
        let c = cell(k, to);
        let count = self.occ[c] - (c == own_cell) as u8;
        if count >= 2 {
            return Err(Refusal::Full(self.loc_of_cell(k, to)));
        }
        let mut capture = None;
        if count == 1 && to <= LAST_RING && !is_safe(c as u8) {
            // R-CAPTURE: a lone opponent piece on a non-safe ring square.
            let (_, occ) = self.occupants(c, me);
            if occ[0] / PIECES != k {
                capture = Some(occ[0]);
            }
        }
        Ok(Landing {
            to,
            capture,
            bounced,
        })
    }

    /// Plans an exit for colour `k` (R-EXIT-1, R-EXIT-2, R-EXIT-CAPTURE): the nest
    /// piece that comes out and the piece captured, if any.
    fn plan_exit(&self, k: usize) -> Result<(usize, Option<usize>), Refusal> {
        let i = (0..PIECES)
            .find(|&i| self.pos[k][i] == NEST)
            .ok_or(Refusal::NoPieceInNest)?;
        let c = exit_square(k) as usize;
        match self.occ[c] {
            0 | 1 => Ok((i, None)),
            _ => {
                let (_, occ) = self.occupants(c, usize::MAX);
                let own = |g: usize| g / PIECES == k;
                match (own(occ[0]), own(occ[1])) {
                    (true, true) => Err(Refusal::ExitBlocked),
                    (true, false) => Ok((i, Some(occ[1]))),
                    (false, true) => Ok((i, Some(occ[0]))),
                    // Two opponents: the one that arrived last (D-6).
                    (false, false) => {
                        Ok((i, Some(if self.is_late(occ[1]) { occ[1] } else { occ[0] })))
                    }
                }
            }
        }
    }

    /// The dice an exit would use now: a die showing 5, else both when they sum to 5.
    fn exit_dice(&self, t: &Throw) -> Option<u8> {
        if self.rules.exit_on_five {
            if let Some((i, _)) = t.unused().find(|&(_, v)| v == 5) {
                return Some(1 << i);
            }
        }
        if self.rules.exit_on_sum_five && t.dice.len() == 2 && t.remaining() == 2 {
            let v = t.dice.values();
            if v[0] + v[1] == 5 {
                return Some(0b11);
            }
        }
        None
    }

    // ----- mutation ----------------------------------------------------------------

    /// Moves piece `g` to progress `to`, keeping arrival order (D-6) and reporting a
    /// blockade it leaves.
    fn relocate<S: Sink>(&mut self, g: usize, to: u8, sink: &mut S) {
        let k = g / PIECES;
        let from = self.gid_pos(g);
        let from_cell = cell(k, from);
        if from_cell != 0 && self.occ[from_cell] == 2 {
            let (n, occ) = self.occupants(from_cell, g);
            if n == 1 {
                self.late &= !(1 << occ[0]);
                sink.push(Event::BlockadeOpened {
                    colour: Colour::ALL[k],
                    at: Location::from_progress(Colour::ALL[k], from),
                });
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
        if let Stage::Move(t) = &mut self.stage {
            t.bonus = Some(amount);
        }
        sink.push(Event::BonusEarned {
            colour: self.turn,
            amount,
            reason,
        });
    }

    /// After a piece reached the goal: victory (R-WIN) or the goal bonus (R-BONUS).
    fn reached_goal<S: Sink>(&mut self, k: usize, sink: &mut S) {
        if self.pos[k].iter().all(|&p| p == GOAL) {
            self.finish(
                Outcome {
                    winner: Colour::ALL[k],
                    reason: WinReason::Goal,
                },
                sink,
            );
        } else if self.rules.goal_bonus > 0 {
            self.earn_bonus(self.rules.goal_bonus, BonusReason::Goal, sink);
        }
    }

    fn finish<S: Sink>(&mut self, o: Outcome, sink: &mut S) {
        self.stage = Stage::Finished(o);
        self.turn = o.winner;
        sink.push(Event::GameWon {
            winner: o.winner,
            reason: o.reason,
        });
    }

    fn exec<S: Sink>(&mut self, step: Step, sink: &mut S) {
        let k = self.turn.index();
        let colour = self.turn;
        let Stage::Move(mut t) = self.stage else {
            return;
        };
        match step {
            Step::Exit(mask) => {
                let Ok((i, victim)) = self.plan_exit(k) else {
                    return;
                };
                for d in 0..2 {
                    if mask & (1 << d) != 0 {
                        t.used[d] = true;
                    }
                }
                self.stage = Stage::Move(t);
                let captured = victim.map(|v| self.capture(v, k));
                self.relocate(k * PIECES + i, EXIT, sink);
                self.last_moved = Some(i as u8);
                sink.push(Event::PieceExited {
                    colour,
                    piece: i as u8,
                    square: exit_square(k),
                });
                if let Some(e) = captured {
                    sink.push(e);
                    self.earn_bonus(self.rules.capture_bonus, BonusReason::Capture, sink);
                }
            }
            Step::Move(i, d) => {
                t.used[d as usize] = true;
                self.stage = Stage::Move(t);
                self.exec_move(i as usize, t.dice.values()[d as usize], MoveKind::Die, sink);
            }
            Step::Bonus(i) => {
                let n = t.bonus.take().unwrap_or(0);
                self.stage = Stage::Move(t);
                self.exec_move(i as usize, n, MoveKind::Bonus, sink);
            }
        }
    }

    fn exec_move<S: Sink>(&mut self, i: usize, n: u8, by: MoveKind, sink: &mut S) {
        let k = self.turn.index();
        let colour = self.turn;
        let Ok(l) = self.plan_move(k, i, n) else {
            return;
        };
        let from = Location::from_progress(colour, self.pos[k][i]);
        self.relocate(k * PIECES + i, l.to, sink);
        self.last_moved = Some(i as u8);
        sink.push(Event::PieceMoved {
            colour,
            piece: i as u8,
            from,
            to: Location::from_progress(colour, l.to),
            steps: n,
            by,
            bounced: l.bounced,
        });
        if let Some(v) = l.capture {
            let e = self.capture(v, k);
            sink.push(e);
            self.earn_bonus(self.rules.capture_bonus, BonusReason::Capture, sink);
        } else if l.to == GOAL {
            self.reached_goal(k, sink);
        }
    }

    // ----- step generation and the must-play search ---------------------------------

    /// Every step possible right now, before the must-play filters (D-13 is handled by
    /// the search, which tries every order).
    fn raw_steps(&self, out: &mut Steps) {
        self.for_each_step(|st| {
            out.push(st);
            true
        });
    }

    /// Calls `f` with every step possible right now, before the must-play filters,
    /// until `f` returns false. (D-13 is handled by the search, which tries every order.)
    #[inline]
    fn for_each_step(&self, mut f: impl FnMut(Step) -> bool) {
        let Stage::Move(t) = self.stage else { return };
        let k = self.turn.index();
        if let Some(amount) = t.bonus {
            for i in 0..PIECES {
                let p = self.pos[k][i];
                if self.bonus_taker(p)
                    && self.plan_move(k, i, amount).is_ok()
                    && !f(Step::Bonus(i as u8))
                {
                    return;
                }
            }
            return;
        }
        if t.used[0] && (t.used[1] || t.dice.len() == 1) {
            return;
        }
        if let Some(mask) = self.exit_dice(&t) {
            if self.plan_exit(k).is_ok() && !f(Step::Exit(mask)) {
                return;
            }
        }
        let v = t.dice.values();
        for (d, n) in t.unused() {
            if d == 1 && !t.used[0] && v[0] == v[1] {
                continue; // equal dice: one step is enough
            }
            for i in 0..PIECES {
                if self.plan_move(k, i, n).is_ok() && !f(Step::Move(i as u8, d as u8)) {
                    return;
                }
            }
        }
    }

    fn bonus_taker(&self, p: u8) -> bool {
        match self.rules.bonus_takers {
            crate::rules::BonusTakers::RingOnly => (EXIT..=LAST_RING).contains(&p),
            crate::rules::BonusTakers::OutOfNestAndGoal => p != NEST && p != GOAL,
        }
    }

    /// Clears a bonus no piece can take (R-BONUS). Returns whether the throw still has
    /// a step to play.
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
            match t.bonus.take() {
                Some(amount) => {
                    self.stage = Stage::Move(t);
                    sink.push(Event::BonusForfeited {
                        colour: self.turn,
                        amount,
                    });
                }
                None => return false,
            }
        }
    }

    fn step_value(step: Step) -> u8 {
        match step {
            Step::Exit(mask) => W_EXIT + W_DIE * mask.count_ones() as u8,
            Step::Move(..) => W_DIE,
            Step::Bonus(_) => 0,
        }
    }

    /// Value of the end of a play: R-OPEN satisfied (1) or not (0); a win counts every
    /// remaining die as played (D-14).
    fn leaf_value(&self) -> u8 {
        match self.stage {
            Stage::Finished(_) => {
                // The throw's dice are gone with the stage; the caller adds them.
                0
            }
            Stage::Move(t) => {
                let open = t.open.as_slice().iter().any(|&(a, b)| {
                    let (a, b) = (a as usize, b as usize);
                    let ca = cell(a / PIECES, self.gid_pos(a));
                    ca == 0 || ca != cell(b / PIECES, self.gid_pos(b))
                });
                open as u8
            }
            Stage::Roll => 0,
        }
    }

    /// Value of taking `s` from `node` and then playing as well as possible.
    fn child_value(node: &Game, s: Step, remaining: u8) -> u8 {
        let mut child = *node;
        child.exec(s, &mut Discard);
        if let Stage::Finished(_) = child.stage {
            // D-14: a play that wins counts as using every die.
            let used = match s {
                Step::Exit(m) => m.count_ones() as u8,
                Step::Move(..) => 1,
                Step::Bonus(_) => 0,
            };
            Self::step_value(s)
                + W_DIE * (remaining - used.min(remaining))
                + node.open_required() as u8
        } else {
            Self::step_value(s) + child.best()
        }
    }

    /// An upper bound of [`Game::best`] at this node: every remaining die played, as
    /// many exits as the dice and the nest allow, and R-OPEN satisfied.
    fn bound(&self) -> u8 {
        let Stage::Move(t) = self.stage else { return 0 };
        let k = self.turn.index();
        let nest = self.pos[k].iter().filter(|&&p| p == NEST).count() as u8;
        let fives = t.unused().filter(|&(_, v)| v == 5).count() as u8;
        let sum5 = (t.remaining() == 2
            && t.dice.len() == 2
            && t.dice.values().iter().sum::<u8>() == 5) as u8;
        let exits = (fives + sum5).min(nest);
        W_EXIT * exits + W_DIE * t.remaining() as u8 + self.open_required() as u8
    }

    /// Best value over all plays continuing from this position (D-14 order of filters),
    /// stopping as soon as a play reaches the upper bound.
    fn best(&self) -> u8 {
        let mut node = *self;
        loop {
            let Stage::Move(mut t) = node.stage else {
                return node.leaf_value();
            };
            let remaining = t.remaining() as u8;
            let bound = node.bound();
            let mut best = 0;
            let mut any = false;
            node.for_each_step(|s| {
                any = true;
                best = best.max(Self::child_value(&node, s, remaining));
                best < bound
            });
            if any {
                return best;
            }
            if t.bonus.take().is_none() {
                return node.leaf_value();
            }
            node.stage = Stage::Move(t); // R-BONUS: nobody can take it, it is lost
        }
    }

    fn open_required(&self) -> bool {
        matches!(self.stage, Stage::Move(t) if t.open.len > 0)
    }

    /// The steps a player may take now, after every filter (D-14): the first steps of
    /// the best plays, and exits first when an exit starts a best play (R-EXIT-1).
    /// Also returns the bonus forfeits and the settled node.
    fn legal_steps(&self) -> (Game, Vec<Step>, Vec<(Step, u8)>) {
        let mut node = *self;
        let mut steps = Steps::new();
        node.forfeit_bonus_if_stuck(&mut Discard, &mut steps);
        let remaining = match node.stage {
            Stage::Move(t) => t.remaining() as u8,
            _ => 0,
        };
        let scored: Vec<(Step, u8)> = steps
            .as_slice()
            .iter()
            .map(|&s| (s, Self::child_value(&node, s, remaining)))
            .collect();
        let top = scored.iter().map(|&(_, v)| v).max().unwrap_or(0);
        let mut legal: Vec<Step> = scored
            .iter()
            .filter(|&&(_, v)| v == top)
            .map(|&(s, _)| s)
            .collect();
        if legal.iter().any(|s| matches!(s, Step::Exit(_))) {
            legal.retain(|s| matches!(s, Step::Exit(_)));
        }
        (node, legal, scored)
    }

    fn step_to_action(&self, s: Step) -> Action {
        match (s, self.stage) {
            (Step::Exit(_), _) => Action::Exit,
            (Step::Move(i, d), Stage::Move(t)) => Action::Move {
                piece: i,
                die: t.dice.values()[d as usize],
            },
            (Step::Bonus(i), Stage::Move(t)) => Action::Bonus {
                piece: i,
                amount: t.bonus.unwrap_or(0),
            },
            (Step::Move(i, _), _) | (Step::Bonus(i), _) => Action::Move { piece: i, die: 0 },
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
        let (node, steps, _) = self.legal_steps();
        steps.into_iter().map(|s| node.step_to_action(s)).collect()
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
        let Stage::Move(t) = self.stage else {
            return Err(ActionError::new(
                K::AwaitingRoll,
                "R-ROLL",
                format!("{} must roll the dice first", self.turn),
            ));
        };
        let step = self.action_to_step(action, &t)?;
        let Some(node) = self.check_legal(step) else {
            let (node, legal, scored) = self.legal_steps();
            return Err(self.diagnose(step, &node, &legal, &scored));
        };
        *self = node;
        self.exec(step, ev);
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
            Stage::Move(t) => t.remaining() as u8,
            _ => 0,
        };
        let top = node.best();
        if Self::child_value(&node, step, remaining) != top {
            return None;
        }
        // D-18: when an exit starts a best play, only exits may be played first.
        if !matches!(step, Step::Exit(_)) {
            let exit_first = steps.as_slice().iter().any(|&s| {
                matches!(s, Step::Exit(_)) && Self::child_value(&node, s, remaining) == top
            });
            if exit_first {
                return None;
            }
        }
        Some(node)
    }

    fn action_to_step(&self, action: &Action, t: &Throw) -> Result<Step, ActionError> {
        use ErrorKind as K;
        let colour = self.turn;
        match *action {
            Action::Exit => {
                if t.bonus.is_some() {
                    return Err(self.bonus_first(t));
                }
                let mask = self
                    .exit_dice(t)
                    .ok_or_else(|| Refusal::NoFive.into_error(colour, 0))?;
                Ok(Step::Exit(mask))
            }
            Action::Move { piece, die } => {
                if piece as usize >= PIECES {
                    return Err(Refusal::NoSuchPiece.into_error(colour, piece));
                }
                if t.bonus.is_some() {
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
                Ok(Step::Move(piece, d as u8))
            }
            Action::Bonus { piece, amount } => {
                if piece as usize >= PIECES {
                    return Err(Refusal::NoSuchPiece.into_error(colour, piece));
                }
                match t.bonus {
                    None => Err(ActionError::new(
                        K::Bonus,
                        "R-BONUS",
                        format!("{colour} has no bonus move pending"),
                    )),
                    Some(b) if b != amount => Err(ActionError::new(
                        K::Bonus,
                        "R-BONUS",
                        format!("the pending bonus is {b} squares, not {amount}"),
                    )),
                    Some(_) => Ok(Step::Bonus(piece)),
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
                t.bonus.unwrap_or(0)
            ),
        )
    }

    /// Names the rule an action breaks, given the legal steps.
    fn diagnose(
        &self,
        step: Step,
        node: &Game,
        legal: &[Step],
        scored: &[(Step, u8)],
    ) -> ActionError {
        use ErrorKind as K;
        let colour = self.turn;
        let k = colour.index();
        // Raw feasibility is judged on the position as the player saw it (before any
        // automatic forfeit of an impossible bonus).
        let raw_err = match step {
            Step::Exit(_) => self.plan_exit(k).err().map(|r| r.into_error(colour, 0)),
            Step::Move(i, d) => {
                let Stage::Move(t) = self.stage else {
                    return Refusal::NoFive.into_error(colour, i);
                };
                self.plan_move(k, i as usize, t.dice.values()[d as usize])
                    .err()
                    .map(|r| r.into_error(colour, i))
            }
            Step::Bonus(i) => {
                let Stage::Move(t) = self.stage else {
                    return Refusal::NoFive.into_error(colour, i);
                };
                if !self.bonus_taker(self.pos[k][i as usize]) {
                    Some(Refusal::NotOnRing.into_error(colour, i))
                } else {
                    self.plan_move(k, i as usize, t.bonus.unwrap_or(0))
                        .err()
                        .map(|r| r.into_error(colour, i))
                }
            }
        };
        if let Some(e) = raw_err {
            return e;
        }
        let top = scored.iter().map(|&(_, v)| v).max().unwrap_or(0);
        let mine = scored
            .iter()
            .find(|&&(s, _)| s == step)
            .map(|&(_, v)| v)
            .unwrap_or(0);
        let allowed = legal
            .iter()
            .map(|&s| node.step_to_action(s).to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let (rule, why) =
            if mine / W_EXIT < top / W_EXIT || legal.iter().any(|s| matches!(s, Step::Exit(_))) {
                ("R-EXIT-1", "a piece must come out of the nest first")
            } else if (mine % W_EXIT) / W_DIE < (top % W_EXIT) / W_DIE {
                (
                    "D-2",
                    "another play uses more dice (must play as many dice as possible)",
                )
            } else {
                ("R-OPEN", "after doubles a blockade must be opened")
            };
        ActionError::new(K::NotAllowed, rule, format!("{why}; legal now: {allowed}"))
    }

    /// Advances past forfeited bonuses and unplayable dice, ending the throw when it is
    /// over (R-MUST, R-BONUS, R-DOUBLES).
    fn settle(&mut self, ev: &mut Vec<Event>) {
        let mut buf = Steps::new();
        if !matches!(self.stage, Stage::Move(_)) {
            return;
        }
        if self.forfeit_bonus_if_stuck(ev, &mut buf) {
            return;
        }
        if let Stage::Move(t) = self.stage {
            if let Some(d) = t.remaining_dice() {
                ev.push(Event::NoLegalMove {
                    colour: self.turn,
                    dice: d,
                });
            }
            self.end_throw(t.dice.is_doubles(), ev);
        }
    }

    fn end_throw(&mut self, doubles: bool, ev: &mut Vec<Event>) {
        if doubles {
            // R-DOUBLES, D-9: roll again, even when no die could be played.
            self.stage = Stage::Roll;
            ev.push(Event::RollAgain { colour: self.turn });
        } else {
            self.timeouts[self.turn.index()] = 0;
            self.pass_turn(ev);
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
        let k = colour.index();
        let doubles = dice.is_doubles();
        if doubles {
            self.doubles += 1;
        }
        ev.push(Event::DiceRolled {
            colour,
            dice,
            doubles_in_row: self.doubles,
        });
        if doubles && self.doubles >= 3 {
            // R-THIRD, D-7, D-10: the last moved piece goes to the nest unless it is in
            // the home column or goal; the turn ends.
            let mut penalty = (None, None);
            if let Some(i) = self.last_moved {
                let p = self.pos[k][i as usize];
                if (EXIT..=LAST_RING).contains(&p) {
                    penalty = (Some(i), Some(Location::from_progress(colour, p)));
                    self.relocate(k * PIECES + i as usize, NEST, &mut Discard);
                }
            }
            ev.push(Event::ThirdDoublesPenalty {
                colour,
                piece: penalty.0,
                from: penalty.1,
            });
            self.timeouts[k] = 0;
            self.pass_turn(ev);
            return Ok(());
        }
        let mut open = OpenPairs::default();
        if doubles && self.rules.open_on == crate::rules::OpenOn::Doubles {
            // R-OPEN, D-15: every blockade with one of the mover's pieces, home column included.
            for i in 0..PIECES {
                let c = cell(k, self.pos[k][i]);
                if c == 0 {
                    continue;
                }
                let g = k * PIECES + i;
                let (n, occ) = self.occupants(c, g);
                if n == 1 && (occ[0] / PIECES != k || occ[0] > g) {
                    open.push(g, occ[0]);
                }
            }
        }
        self.stage = Stage::Move(Throw {
            dice,
            used: [false; 2],
            bonus: None,
            open,
        });
        self.settle(ev);
        Ok(())
    }

    fn timeout(&mut self, ev: &mut Vec<Event>) -> Result<(), ActionError> {
        let colour = self.turn;
        let k = colour.index();
        self.timeouts[k] = self.timeouts[k].saturating_add(1);
        ev.push(Event::TimedOut {
            colour,
            consecutive: self.timeouts[k],
        });
        self.pass_turn(ev);
        Ok(())
    }

    fn abandon(&mut self, colour: Colour, ev: &mut Vec<Event>) -> Result<(), ActionError> {
        let k = colour.index();
        if self.seats[k] != SeatStatus::Playing {
            return Err(ActionError::new(
                ErrorKind::NotPlaying,
                "R-LEAVE",
                format!("{colour} is not playing in this game"),
            ));
        }
        self.seats[k] = SeatStatus::Abandoned;
        for i in 0..PIECES {
            if self.pos[k][i] != NEST {
                self.relocate(k * PIECES + i, NEST, &mut Discard);
            }
        }
        ev.push(Event::PlayerAbandoned { colour });
        let active = self.active_colours();
        if active.len() == 1 {
            self.finish(
                Outcome {
                    winner: active[0],
                    reason: WinReason::Forfeit,
                },
                ev,
            );
        } else if self.turn == colour {
            self.pass_turn(ev);
        }
        Ok(())
    }
}
