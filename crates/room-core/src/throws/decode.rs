//! Unpacking a game's log: every op back into the room events it stands for, actions
//! replayed through the engine. The cost is bounded by the input: each op reads at least
//! one byte and yields at most one action's events.

use super::snapshot;
use super::state::{kind, State, KIND_MASK, POSITIONED, TIMED};
use super::wire::Reader;
use super::{DecodeError, Encoder, FORMAT, FORMAT_1};
use crate::replay::{LoggedEvent, Snapshot};
use parchis_engine::{Action, Colour, Dice, Game, RuleSet};
use parchis_protocol::{DiceInfo, RoomEvent};

/// A log unpacked: its events and the encoder that appends after them.
#[derive(Clone, Debug)]
pub struct Decoded {
    /// Every event, in seq order.
    pub events: Vec<LoggedEvent>,
    /// Packs the next events as a continuation of these bytes.
    pub encoder: Encoder,
}

/// A log unpacked from a snapshot on, for a restore ([`decode_tail`]).
#[derive(Clone, Debug)]
pub struct Tail {
    /// The snapshot the events follow; `None`: they are the whole log.
    pub from: Option<Snapshot>,
    /// The events after it, in seq order.
    pub events: Vec<LoggedEvent>,
    /// Packs the next events as a continuation of these bytes (the same encoder as
    /// [`decode`]'s).
    pub encoder: Encoder,
}

/// Unpacks a whole packed log (the header and every appended piece, concatenated),
/// checking each snapshot against the state replayed up to it.
///
/// # Errors
/// [`DecodeError`]: an unknown format, bytes that end inside an op, an unknown op, an
/// action the engine refuses or with no game to apply to, JSON that is no room event, a
/// snapshot that differs from the replay.
pub fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    let mut r = Reader::new(bytes);
    let Some(mut state) = header(&mut r)? else {
        return Ok(Decoded {
            events: Vec::new(),
            encoder: Encoder::new(),
        });
    };
    let mut events = Vec::new();
    while !r.is_done() {
        op(&mut r, &mut state, &mut events)?;
    }
    Ok(Decoded {
        events,
        encoder: Encoder::resume(state),
    })
}

/// Unpacks a packed log for a restore: from its last snapshot followed by at least
/// `min_throws` throws (`ROLL` ops; the spectator delay's throws, so that what
/// spectators were shown is in the events), else from its start as [`decode`]. The
/// snapshot is found by reading op boundaries only (no engine), so only the ops after
/// it are replayed; later snapshots are checked against the replay as in [`decode`].
///
/// The ops before the snapshot are not checked here: the games API, the export and the
/// replays read the whole log with [`decode`].
///
/// # Errors
/// As [`decode`], and a snapshot that does not read.
pub fn decode_tail(bytes: &[u8], min_throws: u64) -> Result<Tail, DecodeError> {
    let mut scan = Reader::new(bytes);
    // A format-1 log has no snapshots.
    let with_snapshots = header(&mut scan)?.is_some_and(|s| s.snapshots);
    let at = if with_snapshots {
        snapshot::scan(&mut scan)?
            .into_iter()
            .rev()
            .find(|(_, after)| *after >= min_throws)
            .map(|(at, _)| at)
    } else {
        None
    };
    let Some(at) = at else {
        let decoded = decode(bytes)?;
        return Ok(Tail {
            from: None,
            events: decoded.events,
            encoder: decoded.encoder,
        });
    };
    let mut r = Reader::new(bytes);
    r.take(at + 1, "snapshot tag")?;
    let from = snapshot::read(&mut r)?;
    let mut state = snapshot::state_at(&from);
    let mut events = Vec::new();
    while !r.is_done() {
        op(&mut r, &mut state, &mut events)?;
    }
    Ok(Tail {
        from: Some(from),
        events,
        encoder: Encoder::resume(state),
    })
}

/// Reads the header: the state before the first op, `None` for no bytes at all.
fn header(r: &mut Reader<'_>) -> Result<Option<State>, DecodeError> {
    if r.is_done() {
        return Ok(None);
    }
    let format = r.u8("format")?;
    if format != FORMAT && format != FORMAT_1 {
        return Err(DecodeError::Format(format));
    }
    let first_seq = r.u64("first seq")?;
    let at_ms = r.i64("first time")?;
    Ok(Some(State::new(first_seq, at_ms, format == FORMAT)))
}

fn bad(r: &Reader<'_>, message: impl Into<String>) -> DecodeError {
    DecodeError::Bad {
        offset: r.offset(),
        message: message.into(),
    }
}

/// Reads one op and appends the events it stands for.
fn op(
    r: &mut Reader<'_>,
    state: &mut State,
    out: &mut Vec<LoggedEvent>,
) -> Result<(), DecodeError> {
    let tag = r.u8("op")?;
    if tag & 0x80 != 0 {
        return Err(bad(r, format!("op byte {tag:#04x}: reserved bit set")));
    }
    let kind = tag & KIND_MASK;
    if kind == kind::THROW {
        state.next_throw = r.u64("throw number")?;
        return Ok(());
    }
    if kind == kind::SNAPSHOT && state.snapshots {
        let read = snapshot::read(r)?;
        return snapshot::check(r, state, &read);
    }
    let at_ms = if tag & TIMED != 0 {
        state.at_ms.wrapping_add(r.i64("time change")?)
    } else {
        state.at_ms
    };
    let positioned = tag & POSITIONED != 0;
    if let Some(action) = action(r, kind)? {
        let Some(game) = state.game.as_mut() else {
            return Err(bad(r, format!("action {action} with no game to apply to")));
        };
        let produced = game
            .play(&action)
            .map_err(|e| bad(r, format!("action {action}: {e}")))?;
        let n = produced.len();
        for (k, event) in state.wrap(produced).into_iter().enumerate() {
            out.push(LoggedEvent {
                seq: state.next_seq + k as u64,
                at_ms,
                event,
                positioned: positioned && k + 1 == n,
            });
        }
        state.next_seq += n as u64;
        state.at_ms = at_ms;
        return Ok(());
    }
    let event = event(r, kind, at_ms)?;
    let logged = LoggedEvent {
        seq: state.next_seq,
        at_ms,
        event,
        positioned,
    };
    state.observe(&logged);
    out.push(logged);
    Ok(())
}

/// The action of an action op, `None` for another kind.
fn action(r: &mut Reader<'_>, kind: u8) -> Result<Option<Action>, DecodeError> {
    let piece = |b: u8| (b & 0b11, b & 0b100 != 0);
    Ok(Some(match kind {
        kind::ROLL => {
            let b = r.u8("dice")?;
            let values = [b & 0x0f, b >> 4];
            let n = if values[1] == 0 { 1 } else { 2 };
            let dice = Dice::from_slice(&values[..n]).map_err(|e| bad(r, e))?;
            Action::Roll { dice }
        }
        kind::EXIT => Action::Exit,
        kind::MOVE => {
            let b = r.u8("move")?;
            let (piece, capture) = piece(b);
            Action::Move {
                piece,
                die: b >> 3,
                capture,
            }
        }
        kind::BONUS => {
            let (p, capture) = piece(r.u8("bonus piece")?);
            Action::Bonus {
                piece: p,
                amount: r.u8("bonus amount")?,
                capture,
            }
        }
        kind::TIMEOUT => Action::Timeout,
        kind::ABANDON => Action::Abandon {
            colour: r.colour("abandoning colour")?,
        },
        _ => return Ok(None),
    }))
}

/// The room event of a non-action op at `at_ms`.
fn event(r: &mut Reader<'_>, kind: u8, at_ms: i64) -> Result<RoomEvent, DecodeError> {
    Ok(match kind {
        kind::LITERAL => {
            let json = r.bytes("event JSON")?;
            serde_json::from_slice(json).map_err(|e| bad(r, format!("event JSON: {e}")))?
        }
        kind::TURN => RoomEvent::Turn {
            colour: r.colour("turn colour")?,
            deadline_ms: at_ms.wrapping_add(r.i64("turn deadline")?),
        },
        kind::DICE_REVEALED => RoomEvent::DiceRevealed {
            server_seed: hex::encode(r.take(32, "server seed")?),
        },
        kind::GAME_STARTED => game_started(r)?,
        other => return Err(bad(r, format!("unknown op kind {other}"))),
    })
}

/// A `game_started` event: its position is the engine's start of its rules, seats and
/// first colour.
fn game_started(r: &mut Reader<'_>) -> Result<RoomEvent, DecodeError> {
    let id = r.take(16, "game id")?;
    let id = uuid::Uuid::from_slice(id).map_err(|e| bad(r, e.to_string()))?;
    let first = r.colour("first colour")?;
    let n = r.u8("seat count")?;
    let seats = (0..n)
        .map(|_| r.colour("seat colour"))
        .collect::<Result<Vec<Colour>, _>>()?;
    let rules = match r.u8("rules form")? {
        0 => {
            let name = std::str::from_utf8(r.bytes("rules name")?)
                .map_err(|e| bad(r, format!("rules name: {e}")))?;
            RuleSet::from_stored_name(name).map_err(|e| bad(r, e))?
        }
        1 => serde_json::from_slice(r.bytes("rules JSON")?)
            .map_err(|e| bad(r, format!("rules JSON: {e}")))?,
        other => return Err(bad(r, format!("rules form {other}"))),
    };
    let dice = match r.u8("dice present")? {
        0 => None,
        1 => Some(Box::new(
            serde_json::from_slice::<DiceInfo>(r.bytes("dice JSON")?)
                .map_err(|e| bad(r, format!("dice JSON: {e}")))?,
        )),
        other => return Err(bad(r, format!("dice present {other}"))),
    };
    let start = Game::new(rules, &seats, first).map_err(|e| bad(r, e.to_string()))?;
    Ok(RoomEvent::GameStarted {
        game_id: id.hyphenated().to_string(),
        first,
        position: start.to_position(),
        dice,
    })
}
