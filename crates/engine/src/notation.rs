//! The compact one-line text notation for positions (grammar in `proto/NOTATION.md`):
//!
//! ```text
//! online Y:5,h3,n,g R:30',30,n,n turn=R move=3*,4 bonus=20 doubles=1 last=2
//! ```
//!
//! Tokens, separated by spaces: the preset name; one token per seated colour
//! (`Y:` four locations, `!` before the colon when abandoned, `'` after a location when
//! that piece arrived last on a shared square); `turn=C`; the stage (`roll`,
//! `move=D[,D]` with `*` after a used die, or `over=C:goal|forfeit`); then optional
//! `bonus=N`, `open=Y0+Y1,…`, `doubles=N`, `last=I`, `timeouts=Y1,…`.

use crate::board::{Colour, Location, PIECES};
use crate::game::Game;
use crate::position::{PieceState, PlayerPosition, Position, StagePosition};
use crate::rules::Preset;
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

impl FromStr for Position {
    type Err = NotationError;

    /// Parses the text notation into an unvalidated position.
    fn from_str(s: &str) -> Result<Position, NotationError> {
        let mut tokens = s.split_whitespace();
        let preset: Preset = match tokens.next() {
            Some(t) => t.parse().map_err(NotationError)?,
            None => return err("empty position: expected a preset name such as `online`"),
        };
        let mut players: Vec<PlayerPosition> = Vec::new();
        let mut turn = None;
        let mut stage = None;
        let mut bonus = None;
        let mut must_open = Vec::new();
        let mut doubles = 0;
        let mut last = None;
        let mut timeouts: Vec<(Colour, u8)> = Vec::new();
        let mut over: Option<Outcome> = None;
        for tok in tokens {
            if let Some((key, val)) = tok.split_once('=') {
                match key {
                    "turn" => {
                        turn = Some(
                            val.chars()
                                .next()
                                .filter(|_| val.len() == 1)
                                .and_then(Colour::from_letter)
                                .ok_or_else(|| {
                                    NotationError(format!(
                                        "bad turn {val:?} (expected Y, B, R or G)"
                                    ))
                                })?,
                        )
                    }
                    "move" => {
                        let mut values = Vec::new();
                        let mut used = [false; 2];
                        for (i, d) in val.split(',').enumerate() {
                            let (d, u) = match d.strip_suffix('*') {
                                Some(d) => (d, true),
                                None => (d, false),
                            };
                            if i < 2 {
                                used[i] = u;
                            }
                            values.push(
                                d.parse::<u8>().map_err(|_| {
                                    NotationError(format!("bad die {d:?} in {tok:?}"))
                                })?,
                            );
                        }
                        let dice = Dice::from_slice(&values)
                            .map_err(|e| NotationError(format!("{tok}: {e}")))?;
                        stage = Some((dice, used));
                    }
                    "over" => {
                        let (c, why) = val.split_once(':').unwrap_or((val, "goal"));
                        let winner = c
                            .chars()
                            .next()
                            .filter(|_| c.len() == 1)
                            .and_then(Colour::from_letter)
                            .ok_or_else(|| NotationError(format!("bad winner {c:?}")))?;
                        let reason = match why {
                            "goal" => WinReason::Goal,
                            "forfeit" => WinReason::Forfeit,
                            _ => {
                                return err(format!(
                                    "bad result {why:?} (expected goal or forfeit)"
                                ))
                            }
                        };
                        over = Some(Outcome { winner, reason });
                    }
                    "bonus" => {
                        bonus = Some(
                            val.parse::<u8>()
                                .map_err(|_| NotationError(format!("bad bonus {val:?}")))?,
                        )
                    }
                    "open" => {
                        for pair in val.split(',') {
                            let (a, b) = pair.split_once('+').ok_or_else(|| {
                                NotationError(format!(
                                    "bad blockade {pair:?} (expected like Y0+Y1)"
                                ))
                            })?;
                            must_open.push([parse_piece_id(a)?, parse_piece_id(b)?]);
                        }
                    }
                    "doubles" => {
                        doubles = val
                            .parse::<u8>()
                            .map_err(|_| NotationError(format!("bad doubles {val:?}")))?
                    }
                    "last" => {
                        last = Some(
                            val.parse::<u8>()
                                .map_err(|_| NotationError(format!("bad last piece {val:?}")))?,
                        )
                    }
                    "timeouts" => {
                        for t in val.split(',') {
                            let mut ch = t.chars();
                            let c = ch.next().and_then(Colour::from_letter);
                            let n = ch.as_str().parse::<u8>().ok();
                            match (c, n) {
                                (Some(c), Some(n)) => timeouts.push((c, n)),
                                _ => {
                                    return err(format!(
                                        "bad timeouts entry {t:?} (expected like Y1)"
                                    ))
                                }
                            }
                        }
                    }
                    _ => return err(format!("unknown key {key:?} in {tok:?}")),
                }
            } else if tok == "roll" {
                stage = None;
            } else if let Some((head, body)) = tok.split_once(':') {
                let (letter, abandoned) = match head.strip_suffix('!') {
                    Some(h) => (h, true),
                    None => (head, false),
                };
                let colour = letter
                    .chars()
                    .next()
                    .filter(|_| letter.len() == 1)
                    .and_then(Colour::from_letter)
                    .ok_or_else(|| NotationError(format!("bad colour {letter:?} in {tok:?}")))?;
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
                players.push(PlayerPosition {
                    colour,
                    status: if abandoned {
                        SeatStatus::Abandoned
                    } else {
                        SeatStatus::Playing
                    },
                    pieces,
                    timeouts: 0,
                });
            } else {
                return err(format!("unexpected token {tok:?}"));
            }
        }
        for (c, n) in timeouts {
            match players.iter_mut().find(|p| p.colour == c) {
                Some(p) => p.timeouts = n,
                None => return err(format!("timeouts for {c}, which is not seated")),
            }
        }
        players.sort_by_key(|p| p.colour);
        if let Some(outcome) = over {
            if stage.is_some() || bonus.is_some() || !must_open.is_empty() {
                return err("over= cannot be combined with move=, bonus= or open=");
            }
            return Ok(Position {
                rules: preset.rules(),
                players,
                turn: outcome.winner,
                stage: StagePosition::Finished { outcome },
                doubles_in_row: doubles,
                last_moved: last,
            });
        }
        let turn = turn.ok_or_else(|| NotationError("missing turn=C".into()))?;
        let stage = match stage {
            None => {
                if bonus.is_some() || !must_open.is_empty() {
                    return err("bonus= and open= belong to a move= stage");
                }
                StagePosition::Roll
            }
            Some((dice, used)) => StagePosition::Move {
                dice,
                used,
                bonus,
                must_open,
            },
        };
        Ok(Position {
            rules: preset.rules(),
            players,
            turn,
            stage,
            doubles_in_row: doubles,
            last_moved: last,
        })
    }
}

impl fmt::Display for Position {
    /// The canonical text notation of this position.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rules.preset.name())?;
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
        match &self.stage {
            StagePosition::Finished { outcome } => {
                let why = match outcome.reason {
                    WinReason::Goal => "goal",
                    WinReason::Forfeit => "forfeit",
                };
                write!(f, " over={}:{}", outcome.winner.letter(), why)?;
            }
            StagePosition::Roll => write!(f, " turn={} roll", self.turn.letter())?,
            StagePosition::Move {
                dice,
                used,
                bonus,
                must_open,
            } => {
                write!(f, " turn={} move=", self.turn.letter())?;
                for (i, d) in dice.values().iter().enumerate() {
                    write!(
                        f,
                        "{}{}{}",
                        if i > 0 { "," } else { "" },
                        d,
                        if used[i] { "*" } else { "" }
                    )?;
                }
                if let Some(b) = bonus {
                    write!(f, " bonus={b}")?;
                }
                if !must_open.is_empty() {
                    let pairs: Vec<String> =
                        must_open.iter().map(|[a, b]| format!("{a}+{b}")).collect();
                    write!(f, " open={}", pairs.join(","))?;
                }
            }
        }
        if self.doubles_in_row > 0 {
            write!(f, " doubles={}", self.doubles_in_row)?;
        }
        if let Some(l) = self.last_moved {
            write!(f, " last={l}")?;
        }
        let t: Vec<String> = self
            .players
            .iter()
            .filter(|p| p.timeouts > 0)
            .map(|p| format!("{}{}", p.colour.letter(), p.timeouts))
            .collect();
        if !t.is_empty() {
            write!(f, " timeouts={}", t.join(","))?;
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
