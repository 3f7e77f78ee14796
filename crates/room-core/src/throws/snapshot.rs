//! The `SNAPSHOT` op (format 2): the state both sides keep along a packed log, written
//! every [`SNAPSHOT_EVERY`](super::state::SNAPSHOT_EVERY) throws so that a restore starts
//! from the last one instead of replaying the game from its start (`docs/STORAGE.md`,
//! "Snapshots"). It stands for no event.
//!
//! Payload (after the tag byte, which has neither the time nor the position bit): a
//! varint length, then the seq of the next event (varint), the time of the last event
//! (zigzag varint, absolute unix ms), the next throw number (varint), a flags byte (bit 0:
//! a `turn` deadline follows, bit 1: a referee's pause follows), the deadline less that
//! time (zigzag), the paused colour and its clock left (ms, zigzag), and the rest: the
//! game in the engine's text notation (`proto/NOTATION.md`, which round-trips exactly;
//! ≈ 60–100 bytes for four players).
//!
//! The op boundaries of a packed log read without the engine ([`scan`]): a restore finds
//! the last snapshot by that cheap parse, never by replaying the ops before it.

use super::state::{kind, State, KIND_MASK, TIMED};
use super::wire::{put_bytes, put_i64, put_u64, Reader};
use super::DecodeError;
use crate::replay::Snapshot;
use parchis_engine::Game;

const HAS_DEADLINE: u8 = 1;
const HAS_PAUSE: u8 = 2;

/// The snapshot of `state` as a whole op (tag and payload), or `None` when its game does
/// not read back from its notation as the same game (then no snapshot is written).
pub(super) fn op_bytes(state: &State) -> Option<Vec<u8>> {
    let game = state.game.as_ref()?;
    let text = game.to_string();
    if text.parse::<Game>().ok().as_ref() != Some(game) {
        return None;
    }
    let mut body = Vec::with_capacity(text.len() + 16);
    put_u64(&mut body, state.next_seq);
    put_i64(&mut body, state.at_ms);
    put_u64(&mut body, state.next_throw);
    let flags = u8::from(state.deadline.is_some()) * HAS_DEADLINE
        + u8::from(state.paused.is_some()) * HAS_PAUSE;
    body.push(flags);
    if let Some(deadline) = state.deadline {
        put_i64(&mut body, deadline.wrapping_sub(state.at_ms));
    }
    if let Some((colour, left)) = state.paused {
        body.push(colour.index() as u8);
        put_i64(&mut body, left);
    }
    body.extend_from_slice(text.as_bytes());
    let mut out = vec![kind::SNAPSHOT];
    put_bytes(&mut out, &body);
    Some(out)
}

/// Reads a snapshot's payload (after its tag byte).
///
/// # Errors
/// [`DecodeError`]: bytes that end early, a seq of 0 (a snapshot follows an event), a
/// bad colour, or a game that is not valid notation.
pub(super) fn read(r: &mut Reader<'_>) -> Result<Snapshot, DecodeError> {
    let body = r.bytes("snapshot")?;
    let at = r.offset();
    let bad = |message: String| DecodeError::Bad {
        offset: at,
        message: format!("snapshot: {message}"),
    };
    let mut b = Reader::new(body);
    let next_seq = b.u64("snapshot seq")?;
    let at_ms = b.i64("snapshot time")?;
    let next_throw = b.u64("snapshot throw")?;
    let flags = b.u8("snapshot flags")?;
    if flags & !(HAS_DEADLINE | HAS_PAUSE) != 0 {
        return Err(bad(format!("flags {flags:#04x}")));
    }
    let last_turn_deadline = if flags & HAS_DEADLINE != 0 {
        Some(at_ms.wrapping_add(b.i64("snapshot deadline")?))
    } else {
        None
    };
    let paused = if flags & HAS_PAUSE != 0 {
        Some((b.colour("paused colour")?, b.i64("paused clock")?))
    } else {
        None
    };
    let text = std::str::from_utf8(&body[b.offset()..]).map_err(|e| bad(e.to_string()))?;
    let game = text.parse::<Game>().map_err(|e| bad(e.to_string()))?;
    let seq = next_seq.checked_sub(1).ok_or_else(|| bad("seq 0".into()))?;
    Ok(Snapshot {
        seq,
        at_ms,
        game,
        next_throw,
        last_turn_deadline,
        paused,
    })
}

/// The state a decoder goes on from after `snapshot` (a format-2 log).
pub(super) fn state_at(snapshot: &Snapshot) -> State {
    State {
        next_seq: snapshot.seq + 1,
        at_ms: snapshot.at_ms,
        game: Some(snapshot.game),
        next_throw: snapshot.next_throw,
        deadline: snapshot.last_turn_deadline,
        paused: snapshot.paused,
        rolls: 0,
        snapshots: true,
    }
}

/// Checks a snapshot read in the middle of a decode against the state the decode
/// reached there (a snapshot is never trusted silently); resets the throw count.
///
/// # Errors
/// [`DecodeError::Bad`] naming the first value that differs, or a snapshot in a log
/// without them (format 1).
pub(super) fn check(
    r: &Reader<'_>,
    state: &mut State,
    snapshot: &Snapshot,
) -> Result<(), DecodeError> {
    let at = State {
        rolls: state.rolls,
        ..state_at(snapshot)
    };
    let differs = if !state.snapshots {
        Some("a snapshot in a format-1 log")
    } else if at.next_seq != state.next_seq {
        Some("seq")
    } else if at.at_ms != state.at_ms {
        Some("time")
    } else if at.game != state.game {
        Some("game")
    } else if at.next_throw != state.next_throw {
        Some("throw number")
    } else if at.deadline != state.deadline {
        Some("turn deadline")
    } else if at.paused != state.paused {
        Some("pause")
    } else {
        None
    };
    if let Some(what) = differs {
        return Err(DecodeError::Bad {
            offset: r.offset(),
            message: format!("snapshot differs from the replayed state: {what}"),
        });
    }
    state.rolls = 0;
    Ok(())
}

/// Where each snapshot of a packed log starts (the offset of its tag byte, after the
/// header) and how many `ROLL` ops (throws) follow it, found by reading op boundaries
/// only: no engine, no JSON. Cost linear in the bytes.
///
/// # Errors
/// [`DecodeError`]: bytes that end inside an op, or an unknown op kind.
pub(super) fn scan(r: &mut Reader<'_>) -> Result<Vec<(usize, u64)>, DecodeError> {
    let mut snapshots: Vec<(usize, u64)> = Vec::new();
    let mut rolls = 0u64;
    while !r.is_done() {
        let start = r.offset();
        let tag = r.u8("op")?;
        let k = tag & KIND_MASK;
        match k {
            kind::THROW => {
                r.u64("throw number")?;
                continue;
            }
            kind::SNAPSHOT => {
                r.bytes("snapshot")?;
                snapshots.push((start, rolls));
                continue;
            }
            _ => {}
        }
        if tag & TIMED != 0 {
            r.u64("time change")?;
        }
        match k {
            kind::LITERAL => {
                r.bytes("event JSON")?;
            }
            kind::ROLL => {
                r.u8("dice")?;
                rolls += 1;
            }
            kind::EXIT | kind::TIMEOUT => {}
            kind::MOVE | kind::ABANDON => {
                r.u8("move")?;
            }
            kind::BONUS => {
                r.take(2, "bonus")?;
            }
            kind::TURN => {
                r.u8("turn colour")?;
                r.u64("turn deadline")?;
            }
            kind::DICE_REVEALED => {
                r.take(32, "server seed")?;
            }
            kind::GAME_STARTED => {
                r.take(17, "game id and first colour")?;
                let n = r.u8("seat count")?;
                r.take(usize::from(n), "seat colours")?;
                r.u8("rules form")?;
                r.bytes("rules")?;
                if r.u8("dice present")? == 1 {
                    r.bytes("dice JSON")?;
                }
            }
            other => {
                return Err(DecodeError::Bad {
                    offset: r.offset(),
                    message: format!("unknown op kind {other}"),
                })
            }
        }
    }
    Ok(snapshots
        .into_iter()
        .map(|(at, before)| (at, rolls - before))
        .collect())
}
