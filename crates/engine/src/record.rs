//! Game records: the list of actions of a whole game, rebuilt from its events, replayable
//! through the engine, with a text export (`proto/GAME_EXPORT.md`):
//!
//! ```text
//! [Preset "online"]
//! [Seats "Y R"]
//! [First "Y"]
//! [Result "R forfeit"]
//! Y roll 5,3; exit; move 0 3
//! R roll 2,2
//! R roll 6,1
//! Y timeout
//! Y abandon
//! ```
//!
//! One line per throw: the colour, `roll A,B`, then the moves of that throw separated
//! by `; `. `timeout` and `abandon` stand on lines of their own. Header tags are
//! `[Name "value"]`; `Preset`, `Seats` and `First` are required, others are free.

use crate::action::{Action, Event, MoveKind};
use crate::board::Colour;
use crate::game::{Game, SetupError};
use crate::rules::RuleSet;
use crate::types::WinReason;
use std::fmt;
use std::str::FromStr;

/// A whole game as actions: enough to rebuild every position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    /// The rule set played (a preset and its variants).
    pub rules: RuleSet,
    /// Seated colours at the start, in board order.
    pub seats: Vec<Colour>,
    /// Who threw first (R-FIRST).
    pub first: Colour,
    /// Free header tags (room, game id, players' names, dates), in order.
    pub tags: Vec<(String, String)>,
    /// Every action in order, with the colour that took it.
    pub actions: Vec<(Colour, Action)>,
}

/// Errors reading or replaying a record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The text is malformed.
    #[error("line {line}: {message}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The header does not describe a playable game.
    #[error("{0}")]
    Setup(#[from] SetupError),
    /// An action is illegal at its point in the game.
    #[error("action {index} ({colour} {action}): {error}")]
    Illegal {
        /// 0-based index in `actions`.
        index: usize,
        /// Who took it.
        colour: Colour,
        /// The action.
        action: Action,
        /// The engine's reason.
        error: String,
    },
}

/// The action that stored event `events[i]` starts, or `None` for an event that is a
/// consequence of an earlier action (or `i` is past the end). A partner capture is told
/// apart by the capture event that follows the move (pair play), also when the piece left
/// a blockade on its way (its `blockade_opened` comes between). Used to read a stored
/// log back as actions ([`GameRecord::from_events`], the server's packed game log).
pub fn action_at(rules: &RuleSet, events: &[Event], i: usize) -> Option<Action> {
    Some(match *events.get(i)? {
        Event::DiceRolled { dice, .. } => Action::Roll { dice },
        Event::PieceExited { .. } => Action::Exit,
        Event::PieceMoved {
            colour,
            piece,
            steps,
            by,
            die,
            ..
        } => {
            // The capture follows the move, after the `blockade_opened` of a piece that
            // left a blockade (the engine reports them in that order).
            let next = events[i + 1..]
                .iter()
                .find(|e| !matches!(e, Event::BlockadeOpened { .. }));
            let capture = rules.teams
                && matches!(
                    next,
                    Some(Event::PieceCaptured { colour: c, .. })
                        if *c != colour && c.index() % 2 == colour.index() % 2
                );
            match by {
                MoveKind::Die => Action::Move {
                    piece,
                    die: die.unwrap_or(steps),
                    capture,
                },
                MoveKind::Bonus => Action::Bonus {
                    piece,
                    amount: steps,
                    capture,
                },
            }
        }
        Event::TimedOut { .. } => Action::Timeout,
        Event::PlayerAbandoned { colour } => Action::Abandon { colour },
        _ => return None,
    })
}

/// The index after the stored events, from `events[i]` on, that an action caused: those
/// it `produced` on replay, in order. A log written by an older engine may lack some of
/// them (e.g. the `bonus_forfeited` a timeout now reports, D-31), so events are
/// matched, not counted; at least the action's own event is consumed.
fn after_consumed(events: &[Event], i: usize, produced: &[Event]) -> usize {
    let mut j = i;
    for e in produced {
        if events.get(j) == Some(e) {
            j += 1;
        }
    }
    j.max(i + 1)
}

impl GameRecord {
    /// Rebuilds the actions of a game from its events, in order (the events a server
    /// stored). Dice come from `dice_rolled`, moves from `piece_exited`/`piece_moved`,
    /// and `timed_out`/`player_abandoned` become their actions.
    pub fn from_events(
        rules: impl Into<RuleSet>,
        seats: Vec<Colour>,
        first: Colour,
        events: &[Event],
    ) -> GameRecord {
        let rules: RuleSet = rules.into();
        let mut record = GameRecord {
            rules,
            seats,
            first,
            tags: Vec::new(),
            actions: Vec::new(),
        };
        // Replay as we read, so that each action consumes exactly the events it causes
        // and the acting colour is known (pair play moves a partner's pieces).
        let mut game = record.start().ok();
        let mut i = 0;
        while i < events.len() {
            let Some(action) = action_at(&rules, events, i) else {
                i += 1; // a consequence of an earlier action
                continue;
            };
            let actor = match (action, &game) {
                (Action::Abandon { colour }, _) => colour,
                (_, Some(g)) => g.turn(),
                (_, None) => first,
            };
            let produced = game.as_mut().and_then(|g| g.play(&action).ok());
            match produced {
                Some(p) if !p.is_empty() => i = after_consumed(events, i, &p),
                _ => {
                    game = None; // the log does not replay: keep reading naively
                    i += 1;
                }
            }
            record.actions.push((actor, action));
        }
        record
    }

    /// The starting position of this record.
    pub fn start(&self) -> Result<Game, RecordError> {
        Ok(Game::new(self.rules, &self.seats, self.first)?)
    }

    /// Replays every action from the start; returns the final game and all events.
    ///
    /// # Errors
    /// [`RecordError`]: the header is no playable game, or an action is illegal (or not
    /// the turn of the colour recorded with it) at its point.
    pub fn replay(&self) -> Result<(Game, Vec<Event>), RecordError> {
        self.replay_with(|_, _| {})
    }

    /// [`GameRecord::replay`], calling `each(game, events)` after every action with the
    /// game after it and the events it produced (a server rebuilds the position each of
    /// its stored frames carried this way).
    ///
    /// # Errors
    /// As [`GameRecord::replay`]; `each` has seen the actions before the failing one.
    pub fn replay_with(
        &self,
        mut each: impl FnMut(&Game, &[Event]),
    ) -> Result<(Game, Vec<Event>), RecordError> {
        let mut g = self.start()?;
        let mut all = Vec::new();
        for (index, (colour, action)) in self.actions.iter().enumerate() {
            let illegal = |error: String| RecordError::Illegal {
                index,
                colour: *colour,
                action: *action,
                error,
            };
            if !matches!(action, Action::Abandon { .. }) && g.turn() != *colour {
                return Err(illegal(format!("it is {}'s turn", g.turn())));
            }
            let produced = g.play(action).map_err(|e| illegal(e.to_string()))?;
            each(&g, &produced);
            all.extend(produced);
        }
        Ok((g, all))
    }

    /// Whether `replayed` (the events of [`GameRecord::replay`]) tells the same game as
    /// the `stored` log: equal, except that the replay may report forfeited bonuses
    /// (`bonus_forfeited`) that a log written by an older engine left unreported — a
    /// timeout, a departure or the end of the game forfeited them silently then (D-31).
    /// Those reports change no state, so such a log still restores.
    ///
    /// Events are compared with [`GameRecord::event_matches`], which also accepts the
    /// older labelling of `third_doubles_penalty` in pair play.
    pub fn replay_matches(replayed: &[Event], stored: &[Event]) -> bool {
        let mut s = stored.iter().peekable();
        for e in replayed {
            if s.peek().is_some_and(|st| Self::event_matches(e, st)) {
                s.next();
            } else if !matches!(e, Event::BonusForfeited { .. }) {
                return false;
            }
        }
        s.peek().is_none()
    }

    /// Whether a `replayed` engine event tells the same as a `stored` one: equal, or a
    /// `third_doubles_penalty` that an older engine labelled with the colour whose
    /// pieces were moved instead of the thrower's (pair play, a finished player
    /// throwing for the partner, issue 30). Such an event names the same piece sent to
    /// the same nest (its colour is `piece_colour`, else `colour`), changes the same
    /// state, and comes from the same throw, so a log written then still replays.
    pub fn event_matches(replayed: &Event, stored: &Event) -> bool {
        match (replayed, stored) {
            (
                Event::ThirdDoublesPenalty {
                    colour: thrower,
                    piece,
                    from,
                    piece_colour,
                },
                Event::ThirdDoublesPenalty {
                    colour: labelled,
                    piece: stored_piece,
                    from: stored_from,
                    piece_colour: stored_piece_colour,
                },
            ) if thrower != labelled => {
                // The older label was the partner (the colour moved): same team, same piece.
                thrower.index() % 2 == labelled.index() % 2
                    && piece == stored_piece
                    && from == stored_from
                    && piece.is_none_or(|_| {
                        piece_colour.unwrap_or(*thrower) == stored_piece_colour.unwrap_or(*labelled)
                    })
            }
            _ => replayed == stored,
        }
    }
}

fn quote(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"")
}

impl fmt::Display for GameRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "[Preset \"{}\"]", self.rules.name())?;
        let seats: Vec<String> = self.seats.iter().map(|c| c.letter().to_string()).collect();
        writeln!(f, "[Seats \"{}\"]", seats.join(" "))?;
        writeln!(f, "[First \"{}\"]", self.first.letter())?;
        for (k, v) in &self.tags {
            writeln!(f, "[{k} \"{}\"]", quote(v))?;
        }
        let mut open_line = false;
        for (colour, action) in &self.actions {
            match action {
                Action::Roll { .. } | Action::Timeout | Action::Abandon { .. } => {
                    if open_line {
                        writeln!(f)?;
                    }
                    let text = match action {
                        Action::Abandon { .. } => "abandon".to_string(),
                        other => other.to_string(),
                    };
                    write!(f, "{} {}", colour.letter(), text)?;
                    open_line = true;
                }
                other => write!(f, "; {other}")?,
            }
        }
        if open_line {
            writeln!(f)?;
        }
        Ok(())
    }
}

impl FromStr for GameRecord {
    type Err = RecordError;

    fn from_str(s: &str) -> Result<GameRecord, RecordError> {
        let syntax = |line: usize, message: String| RecordError::Syntax { line, message };
        let (mut preset, mut seats, mut first) = (None, None, None);
        let mut tags = Vec::new();
        let mut actions = Vec::new();
        for (n, raw) in s.lines().enumerate() {
            let line = n + 1;
            let text = raw.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
                let (key, value) = inner.split_once(' ').ok_or_else(|| {
                    syntax(
                        line,
                        format!("bad tag {text:?} (expected [Name \"value\"])"),
                    )
                })?;
                let value = value
                    .trim()
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .ok_or_else(|| syntax(line, format!("tag value must be quoted: {text:?}")))?
                    .replace("\\\"", "\"")
                    .replace("\\\\", "\\");
                match key {
                    "Preset" => {
                        preset = Some(
                            // A played game: its rule set as stored (D-33 checks new games only).
                            RuleSet::from_stored_name(&value).map_err(|e| syntax(line, e))?,
                        )
                    }
                    "Seats" => {
                        seats = Some(
                            value
                                .split_whitespace()
                                .map(|c| c.parse::<Colour>())
                                .collect::<Result<Vec<_>, _>>()
                                .map_err(|e| syntax(line, e))?,
                        )
                    }
                    "First" => first = Some(value.parse::<Colour>().map_err(|e| syntax(line, e))?),
                    _ => tags.push((key.to_string(), value)),
                }
                continue;
            }
            let (who, rest) = text.split_once(' ').ok_or_else(|| {
                syntax(line, format!("expected `C action; action…`, got {text:?}"))
            })?;
            let colour: Colour = who.parse().map_err(|e| syntax(line, e))?;
            for part in rest.split(';').map(str::trim).filter(|p| !p.is_empty()) {
                let action = if part == "abandon" {
                    Action::Abandon { colour }
                } else {
                    part.parse::<Action>().map_err(|e| syntax(line, e))?
                };
                actions.push((colour, action));
            }
        }
        Ok(GameRecord {
            rules: preset.ok_or_else(|| syntax(0, "missing [Preset \"…\"]".into()))?,
            seats: seats.ok_or_else(|| syntax(0, "missing [Seats \"…\"]".into()))?,
            first: first.ok_or_else(|| syntax(0, "missing [First \"…\"]".into()))?,
            tags,
            actions,
        })
    }
}

/// The `[Result "…"]` tag value for a finished game: `"Y goal"` or `"R forfeit"`.
pub fn result_tag(game: &Game) -> Option<String> {
    game.outcome().map(|o| {
        format!(
            "{} {}",
            o.winner.letter(),
            match o.reason {
                WinReason::Goal => "goal",
                WinReason::Forfeit => "forfeit",
            }
        )
    })
}
