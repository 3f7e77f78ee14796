//! Unpacking a game's log: every op back into the room events it stands for, actions
//! replayed through the engine. The cost is bounded by the input: each op reads at least
//! one byte and yields at most one action's events.

use super::state::{kind, State, KIND_MASK, POSITIONED, TIMED};
use super::wire::Reader;
use super::{DecodeError, Encoder, FORMAT};
use crate::replay::LoggedEvent;
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

/// Unpacks a whole packed log (the header and every appended piece, concatenated).
///
/// # Errors
/// [`DecodeError`]: an unknown format, bytes that end inside an op, an unknown op, an
/// action the engine refuses or with no game to apply to, JSON that is no room event.
pub fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    let mut r = Reader::new(bytes);
    if r.is_done() {
        return Ok(Decoded {
            events: Vec::new(),
            encoder: Encoder::new(),
        });
    }
    let format = r.u8("format")?;
    if format != FORMAT {
        return Err(DecodeError::Format(format));
    }
    let first_seq = r.u64("first seq")?;
    let at_ms = r.i64("first time")?;
    let mut state = State::new(first_seq, at_ms);
    let mut events = Vec::new();
    while !r.is_done() {
        op(&mut r, &mut state, &mut events)?;
    }
    Ok(Decoded {
        events,
        encoder: Encoder::resume(state),
    })
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
