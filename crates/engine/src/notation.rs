//! The compact one-line text notation for positions (grammar in `proto/NOTATION.md`):
//!
//! ```text
//! online Y:5,h3,n,g R:30',30,n,n turn=R move=3*,4 bonus=20 doubles=1 last=2
//! ```
//!
//! Tokens, separated by spaces: the rule set (a preset name, then `+variant` for each
//! option, e.g. `classic+murcia-12`); one token per seated colour (`Y:` four locations,
//! `!` before the colon when abandoned, `'` after a location when that piece arrived
//! last on a shared square); `turn=C`; the stage (`roll`, `move=D[,D]` with `*` after a
//! used die, or `over=C:goal|forfeit`); then optional `parts=…`, `bonus=N[,N]`,
//! `open=Y0+Y1@10,…`, `held=…`, `doubles=N`, `last=I`, `unplayed=1`, `timeouts=Y1,…`,
//! `places=Y1,…`.
//!
//! Why one file of ~660 lines: it is the reader and the writer of one grammar, each a
//! list of named steps (one per token kind); kept together so that the two change in step.

use crate::board::{Colour, Location, PIECES};
use crate::game::Game;
use crate::position::{HeldBlockade, PieceState, PlayerPosition, Position, StagePosition};
use crate::rules::{GameEnd, RuleSet};
use crate::types::{Dice, Outcome, PieceId, SeatStatus, WinReason};
use std::fmt;
use std::str::FromStr;

/// A text-notation error: what token is wrong and why, or the position's validation error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotationError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, NotationError> {
    Err(NotationError(msg.into()))
}

fn parse_colour(s: &str, what: &str) -> Result<Colour, NotationError> {
    s.chars()
        .next()
        .filter(|_| s.len() == 1)
        .and_then(Colour::from_letter)
        .ok_or_else(|| NotationError(format!("bad {what} {s:?} (expected Y, B, R or G)")))
}

fn parse_piece_id(s: &str) -> Result<PieceId, NotationError> {
    let mut ch = s.chars();
    let colour = ch.next().and_then(Colour::from_letter);
    let idx = ch
        .as_str()
        .parse::<u8>()
        .ok()
        .filter(|&i| (i as usize) < PIECES);
    match (colour, idx) {
        (Some(colour), Some(piece)) => Ok(PieceId { colour, piece }),
        _ => err(format!(
            "bad piece {s:?} (expected a colour letter and 0..3, like Y2)"
        )),
    }
}

/// Values with optional `*` (used) marks: `3*,4`.
fn parse_marked(val: &str, tok: &str) -> Result<(Vec<u8>, Vec<bool>), NotationError> {
    let mut values = Vec::new();
    let mut used = Vec::new();
    for d in val.split(',') {
        let (d, u) = match d.strip_suffix('*') {
            Some(d) => (d, true),
            None => (d, false),
        };
        values.push(
            d.parse::<u8>()
                .map_err(|_| NotationError(format!("bad value {d:?} in {tok:?}")))?,
        );
        used.push(u);
    }
    Ok((values, used))
}

fn parse_flag(val: &str, tok: &str) -> Result<bool, NotationError> {
    match val {
        "1" => Ok(true),
        _ => err(format!(
            "bad flag {tok:?} (the only value is 1; leave it out for false)"
        )),
    }
}

/// `last=G0` (a piece id); the older `last=0` names a piece of the colour being moved.
fn parse_last(
    val: &str,
    turn: Option<Colour>,
    rules: &RuleSet,
    players: &[PlayerPosition],
) -> Result<PieceId, NotationError> {
    if val.starts_with(|c: char| c.is_ascii_digit()) {
        let piece = parse_u8(val, "last piece")?;
        let turn = turn.ok_or_else(|| NotationError("last= needs turn=C".into()))?;
        let finished = |c: Colour| {
            players
                .iter()
                .find(|p| p.colour == c)
                .is_some_and(|p| p.pieces.iter().all(|q| q.at == Location::Goal))
        };
        let colour = if rules.teams && finished(turn) {
            Colour::ALL[(turn.index() + 2) % 4]
        } else {
            turn
        };
        return Ok(PieceId { colour, piece });
    }
    parse_piece_id(val)
}

fn parse_u8(val: &str, what: &str) -> Result<u8, NotationError> {
    val.parse::<u8>()
        .map_err(|_| NotationError(format!("bad {what} {val:?}")))
}

/// `Y0+Y1@10` (the `@` part optional on input).
fn parse_blockades(
    val: &str,
    players: &[PlayerPosition],
) -> Result<Vec<HeldBlockade>, NotationError> {
    let mut out = Vec::new();
    for item in val.split(',') {
        let (pair, at) = match item.split_once('@') {
            Some((p, a)) => (p, Some(a)),
            None => (item, None),
        };
        let (a, b) = pair.split_once('+').ok_or_else(|| {
            NotationError(format!("bad blockade {item:?} (expected like Y0+Y1@10)"))
        })?;
        let (a, b) = (parse_piece_id(a)?, parse_piece_id(b)?);
        let at = match at {
            Some(l) => l.parse::<Location>().map_err(NotationError)?,
            None => players
                .iter()
                .find(|p| p.colour == a.colour)
                .map(|p| p.pieces[a.piece as usize].at)
                .ok_or_else(|| NotationError(format!("blockade piece {a} is not seated")))?,
        };
        out.push(HeldBlockade { pieces: [a, b], at });
    }
    Ok(out)
}

/// The tokens of a notation line after the rule set, read one by one but not yet
/// combined (combining needs them all: `last=`, `open=` and `places=` refer to seats).
#[derive(Default)]
struct Tokens<'a> {
    players: Vec<PlayerPosition>,
    turn: Option<Colour>,
    /// `move=`: the dice and their used marks; `None` for `roll` (or no stage yet).
    stage: Option<(Dice, Vec<bool>)>,
    parts: Option<(Vec<u8>, Vec<bool>)>,
    bonus: Vec<u8>,
    doubles: u8,
    last: Option<&'a str>,
    unplayed: bool,
    lost: bool,
    /// `exit2=1` (D-32).
    exit2: bool,
    first5: Option<Vec<Colour>>,
    saw_stage: bool,
    timeouts: Vec<(Colour, u8)>,
    places: Vec<(Colour, u8)>,
    over: Option<Outcome>,
    /// `open=` and `held=`, read once every seat is known.
    deferred: Vec<(&'a str, &'a str)>,
}

impl<'a> Tokens<'a> {
    /// Reads one token: `key=value`, `roll`, or a colour's `Y:…` pieces.
    fn read(&mut self, tok: &'a str) -> Result<(), NotationError> {
        if let Some((key, val)) = tok.split_once('=') {
            self.read_key(key, val, tok)
        } else if tok == "roll" {
            self.stage = None;
            self.saw_stage = true;
            Ok(())
        } else if let Some((head, body)) = tok.split_once(':') {
            self.players.push(parse_player(head, body, tok)?);
            Ok(())
        } else {
            err(format!("unexpected token {tok:?}"))
        }
    }

    /// Reads the token `tok`, which is `key=val`.
    fn read_key(&mut self, key: &'a str, val: &'a str, tok: &str) -> Result<(), NotationError> {
        match key {
            "turn" => self.turn = Some(parse_colour(val, "turn")?),
            "move" => {
                let (values, used) = parse_marked(val, tok)?;
                let dice =
                    Dice::from_slice(&values).map_err(|e| NotationError(format!("{tok}: {e}")))?;
                self.stage = Some((dice, used));
                self.saw_stage = true;
            }
            "parts" => self.parts = Some(parse_marked(val, tok)?),
            "over" => {
                self.over = Some(parse_over(val)?);
                self.saw_stage = true;
            }
            "bonus" => {
                for b in val.split(',') {
                    self.bonus.push(parse_u8(b, "bonus")?);
                }
            }
            "open" | "held" => self.deferred.push((key, val)),
            "doubles" => self.doubles = parse_u8(val, "doubles")?,
            "last" => self.last = Some(val),
            "unplayed" => self.unplayed = parse_flag(val, tok)?,
            "lost" => self.lost = parse_flag(val, tok)?,
            "exit2" => self.exit2 = parse_flag(val, tok)?,
            "first5" => {
                let mut list = Vec::new();
                if val != "-" {
                    for c in val.split(',') {
                        list.push(parse_colour(c, "first5 colour")?);
                    }
                }
                self.first5 = Some(list);
            }
            "timeouts" | "places" => {
                for t in val.split(',') {
                    let mut ch = t.chars();
                    let c = ch.next().and_then(Colour::from_letter);
                    let n = ch.as_str().parse::<u8>().ok();
                    match (c, n) {
                        (Some(c), Some(n)) if key == "timeouts" => self.timeouts.push((c, n)),
                        (Some(c), Some(n)) => self.places.push((c, n)),
                        _ => return err(format!("bad {key} entry {t:?} (expected like Y1)")),
                    }
                }
            }
            _ => return err(format!("unknown key {key:?} in {tok:?}")),
        }
        Ok(())
    }
}

/// `over=C[+M][:goal|forfeit]`: the winner, its partner, and why (goal by default).
fn parse_over(val: &str) -> Result<Outcome, NotationError> {
    let (c, why) = val.split_once(':').unwrap_or((val, "goal"));
    let (c, partner) = match c.split_once('+') {
        Some((a, b)) => (a, Some(parse_colour(b, "partner")?)),
        None => (c, None),
    };
    let winner = parse_colour(c, "winner")?;
    let reason = match why {
        "goal" => WinReason::Goal,
        "forfeit" => WinReason::Forfeit,
        _ => return err(format!("bad result {why:?} (expected goal or forfeit)")),
    };
    Ok(Outcome {
        winner,
        reason,
        partner,
    })
}

/// The token `tok`, `head:body`: a colour letter (`!` after it when abandoned) and its
/// four locations (`'` after one that arrived last on a shared square).
fn parse_player(head: &str, body: &str, tok: &str) -> Result<PlayerPosition, NotationError> {
    let (letter, abandoned) = match head.strip_suffix('!') {
        Some(h) => (h, true),
        None => (head, false),
    };
    let colour = parse_colour(letter, "colour")?;
    let locs: Vec<&str> = body.split(',').collect();
    if locs.len() != PIECES {
        return err(format!(
            "{colour} has {} pieces in {tok:?}; every colour has exactly 4",
            locs.len()
        ));
    }
    let mut pieces = [PieceState {
        at: Location::Nest,
        late: false,
    }; PIECES];
    for (i, l) in locs.iter().enumerate() {
        let (l, late) = match l.strip_suffix('\'') {
            Some(l) => (l, true),
            None => (*l, false),
        };
        pieces[i] = PieceState {
            at: l.parse().map_err(NotationError)?,
            late,
        };
    }
    Ok(PlayerPosition {
        colour,
        status: if abandoned {
            SeatStatus::Abandoned
        } else {
            SeatStatus::Playing
        },
        pieces,
        timeouts: 0,
        place: None,
        first_five: None,
    })
}

/// `timeouts=` and `places=` onto the seated colours; in play-on games a playing colour
/// with a place and all four pieces home has finished.
fn apply_counts(
    players: &mut [PlayerPosition],
    rules: &RuleSet,
    timeouts: &[(Colour, u8)],
    places: &[(Colour, u8)],
) -> Result<(), NotationError> {
    for &(c, n) in timeouts {
        match players.iter_mut().find(|p| p.colour == c) {
            Some(p) => p.timeouts = n,
            None => return err(format!("timeouts for {c}, which is not seated")),
        }
    }
    for &(c, n) in places {
        match players.iter_mut().find(|p| p.colour == c) {
            Some(p) => {
                p.place = Some(n);
                let all_home = p.pieces.iter().all(|q| q.at == Location::Goal);
                if rules.game_end == GameEnd::PlayOn && p.status == SeatStatus::Playing && all_home
                {
                    p.status = SeatStatus::Finished;
                }
            }
            None => return err(format!("places for {c}, which is not seated")),
        }
    }
    Ok(())
}

/// `first5=` onto the seated colours: only with the two-out variant, only seated colours.
fn apply_first5(
    players: &mut [PlayerPosition],
    rules: &RuleSet,
    list: &[Colour],
) -> Result<(), NotationError> {
    if !rules.two_out_on_first_five {
        return err(format!(
            "first5= records the two-out variant's first 5, but the rule set {} has no two-out",
            rules.name()
        ));
    }
    if let Some(c) = list
        .iter()
        .find(|c| !players.iter().any(|p| p.colour == **c))
    {
        return err(format!("first5= names {c}, which is not seated"));
    }
    for p in players.iter_mut() {
        p.first_five = Some(list.contains(&p.colour));
    }
    Ok(())
}

impl FromStr for Position {
    type Err = NotationError;

    /// Parses the text notation into an unvalidated position.
    fn from_str(s: &str) -> Result<Position, NotationError> {
        let mut tokens = s.split_whitespace();
        let rules: RuleSet = match tokens.next() {
            Some(t) => RuleSet::from_name(t).map_err(NotationError)?,
            None => return err("empty position: expected a preset name such as `online`"),
        };
        let mut t = Tokens::default();
        for tok in tokens {
            t.read(tok)?;
        }
        let mut players = std::mem::take(&mut t.players);
        apply_counts(&mut players, &rules, &t.timeouts, &t.places)?;
        let (mut open, mut held) = (None, None);
        for &(key, val) in &t.deferred {
            let list = parse_blockades(val, &players)?;
            if key == "open" {
                open = Some(list);
            } else {
                held = Some(list);
            }
        }
        players.sort_by_key(|p| p.colour);
        if let Some(list) = &t.first5 {
            apply_first5(&mut players, &rules, list)?;
        }
        if !t.saw_stage {
            return err("missing stage: expected `roll`, `move=D[,D]` or `over=C:goal|forfeit`");
        }
        let last_moved = match t.last {
            None => None,
            Some(v) => Some(parse_last(
                v,
                t.turn.or(t.over.map(|o| o.winner)),
                &rules,
                &players,
            )?),
        };
        let (turn, stage) = match t.over {
            Some(outcome) => {
                if t.stage.is_some()
                    || !t.bonus.is_empty()
                    || open.is_some()
                    || held.is_some()
                    || t.lost
                    || t.exit2
                {
                    return err(
                        "over= cannot be combined with move=, bonus=, open=, held=, lost= or exit2=",
                    );
                }
                (outcome.winner, StagePosition::Finished { outcome })
            }
            None => {
                let turn = t
                    .turn
                    .ok_or_else(|| NotationError("missing turn=C".into()))?;
                (turn, play_stage(&mut t, open, held)?)
            }
        };
        Ok(Position {
            rules,
            players,
            turn,
            stage,
            doubles_in_row: t.doubles,
            last_moved,
            previous_throw_unplayed: t.unplayed,
        })
    }
}

/// The stage of a game still running: `roll`, or `move=` with its parts, bonuses,
/// blockades (`open=` must be opened, `held=` only kept) and lost dice.
fn play_stage(
    t: &mut Tokens<'_>,
    open: Option<Vec<HeldBlockade>>,
    held: Option<Vec<HeldBlockade>>,
) -> Result<StagePosition, NotationError> {
    let Some((dice, dice_used)) = t.stage.take() else {
        if !t.bonus.is_empty()
            || open.is_some()
            || held.is_some()
            || t.parts.is_some()
            || t.lost
            || t.exit2
        {
            return err("bonus=, open=, held=, parts=, lost= and exit2= belong to a move= stage");
        }
        return Ok(StagePosition::Roll);
    };
    let (parts, used) = match t.parts.take() {
        Some((values, used)) => (values, used),
        None => (Vec::new(), dice_used),
    };
    let must_open = open.is_some();
    let blockades = open.or(held).unwrap_or_default();
    Ok(StagePosition::Move {
        dice,
        used: if used.iter().any(|u| *u) {
            used
        } else {
            Vec::new()
        },
        parts,
        bonus: std::mem::take(&mut t.bonus),
        blockades,
        must_open,
        dice_lost: t.lost,
        second_exit: t.exit2,
    })
}

fn write_marked(f: &mut fmt::Formatter<'_>, values: &[u8], used: &[bool]) -> fmt::Result {
    for (i, d) in values.iter().enumerate() {
        let u = used.get(i).copied().unwrap_or(false);
        write!(
            f,
            "{}{}{}",
            if i > 0 { "," } else { "" },
            d,
            if u { "*" } else { "" }
        )?;
    }
    Ok(())
}

impl fmt::Display for Position {
    /// The canonical text notation of this position.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rules.name())?;
        self.write_seats(f)?;
        self.write_stage(f)?;
        if self.doubles_in_row > 0 {
            write!(f, " doubles={}", self.doubles_in_row)?;
        }
        if let Some(l) = self.last_moved {
            write!(f, " last={l}")?;
        }
        if self.previous_throw_unplayed {
            f.write_str(" unplayed=1")?;
        }
        self.write_first5(f)?;
        self.write_counts(f)
    }
}

impl Position {
    /// One token per seated colour: ` Y:5,h3,n,g`.
    fn write_seats(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.players {
            write!(
                f,
                " {}{}:",
                p.colour.letter(),
                if p.status == SeatStatus::Abandoned {
                    "!"
                } else {
                    ""
                }
            )?;
            for (i, piece) in p.pieces.iter().enumerate() {
                let loc = match piece.at {
                    Location::Nest => "n".to_string(),
                    Location::Goal => "g".to_string(),
                    other => other.to_string(),
                };
                write!(
                    f,
                    "{}{}{}",
                    if i > 0 { "," } else { "" },
                    loc,
                    if piece.late { "'" } else { "" }
                )?;
            }
        }
        Ok(())
    }

    /// `turn=` and the stage, with a move's parts, bonuses, blockades and lost dice.
    fn write_stage(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.stage {
            StagePosition::Finished { outcome } => {
                let why = match outcome.reason {
                    WinReason::Goal => "goal",
                    WinReason::Forfeit => "forfeit",
                };
                match outcome.partner {
                    Some(m) => write!(
                        f,
                        " over={}+{}:{}",
                        outcome.winner.letter(),
                        m.letter(),
                        why
                    )?,
                    None => write!(f, " over={}:{}", outcome.winner.letter(), why)?,
                }
            }
            StagePosition::Roll => write!(f, " turn={} roll", self.turn.letter())?,
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
                write!(f, " turn={} move=", self.turn.letter())?;
                if parts.is_empty() {
                    write_marked(f, dice.values(), used)?;
                } else {
                    write_marked(f, dice.values(), &[])?;
                    f.write_str(" parts=")?;
                    write_marked(f, parts, used)?;
                }
                if !bonus.is_empty() {
                    let b: Vec<String> = bonus.iter().map(|b| b.to_string()).collect();
                    write!(f, " bonus={}", b.join(","))?;
                }
                if !blockades.is_empty() {
                    let pairs: Vec<String> = blockades
                        .iter()
                        .map(|h| format!("{}+{}@{}", h.pieces[0], h.pieces[1], h.at))
                        .collect();
                    let key = if *must_open { "open" } else { "held" };
                    write!(f, " {key}={}", pairs.join(","))?;
                }
                if *dice_lost {
                    f.write_str(" lost=1")?;
                }
                if *second_exit {
                    f.write_str(" exit2=1")?;
                }
            }
        }
        Ok(())
    }

    /// `first5=` (variant `two-out`).
    fn write_first5(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // first5= only when it differs from what the reader assumes without it: every
        // playing colour with all four pieces in the nest has its first 5 to come.
        if self.rules.two_out_on_first_five {
            let assumed = |p: &PlayerPosition| {
                p.status == SeatStatus::Playing && p.pieces.iter().all(|q| q.at == Location::Nest)
            };
            let actual = |p: &PlayerPosition| p.first_five.unwrap_or_else(|| assumed(p));
            if self.players.iter().any(|p| actual(p) != assumed(p)) {
                let list: Vec<String> = self
                    .players
                    .iter()
                    .filter(|p| actual(p))
                    .map(|p| p.colour.letter().to_string())
                    .collect();
                if list.is_empty() {
                    f.write_str(" first5=-")?;
                } else {
                    write!(f, " first5={}", list.join(","))?;
                }
            }
        }
        Ok(())
    }

    /// `timeouts=` and `places=`.
    fn write_counts(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (key, get) in [
            (
                "timeouts",
                (|p: &PlayerPosition| Some(p.timeouts).filter(|t| *t > 0))
                    as fn(&PlayerPosition) -> Option<u8>,
            ),
            ("places", |p: &PlayerPosition| p.place),
        ] {
            let t: Vec<String> = self
                .players
                .iter()
                .filter_map(|p| get(p).map(|n| format!("{}{}", p.colour.letter(), n)))
                .collect();
            if !t.is_empty() {
                write!(f, " {key}={}", t.join(","))?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Game {
    /// The canonical text notation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_position().fmt(f)
    }
}

impl FromStr for Game {
    type Err = NotationError;
    /// Parses and validates the text notation.
    fn from_str(s: &str) -> Result<Game, NotationError> {
        let p: Position = s.parse()?;
        Game::try_from(&p).map_err(|e| NotationError(e.to_string()))
    }
}
