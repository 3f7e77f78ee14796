//! What the writer applies: [`WriteOp`]s, built from a [`RoomWrite`] (and the other write
//! calls), and the pure checks made before anything reaches the database (batch, log
//! position, fence).

use serde_json::Value;
use uuid::Uuid;

use crate::error::{Result, StoreError};
use parchis_records::{
    EventRecord, GameEnd, GameRecord, GameStart, LogPiece, RatedGame, RoomRecord, RoomStatusUpdate,
    SeatRecord,
};
use parchis_records::{Fence, RoomWrite};

/// One write, as submitted to the writer task.
#[derive(Debug)]
pub(crate) enum WriteOp {
    /// The request's lease must still be this fence (only ever a request's first op;
    /// checked by the writer against the rows [`Backend::lock_leases`] locked).
    CheckFence(Fence),
    CreateRoom(RoomRecord),
    UpdateRoomStatus {
        code: String,
        update: RoomStatusUpdate,
    },
    UpsertSeat(SeatRecord),
    DeleteSeat {
        room_code: String,
        colour: String,
    },
    CreateGame(GameRecord),
    AppendEvents {
        game_id: Uuid,
        events: Vec<EventRecord>,
        /// What must already be in the game's log (checked by the writer, not the backend).
        follows: Follows,
    },
    /// One piece of a game's packed log (appended to its tail, `game_log_tail`), after
    /// `follows` is checked (by the writer); then the tail is folded into `games.log`
    /// when it holds the backend's fold interval of pieces
    /// ([`Backend::FOLD_EVERY`](super::Backend::FOLD_EVERY)).
    AppendLog {
        game_id: Uuid,
        piece: LogPiece,
        follows: Follows,
    },
    SetDeadline {
        game_id: Uuid,
        deadline_ms: Option<i64>,
    },
    /// Marks the game finished and folds its whole tail into `games.log` (none: nothing
    /// to fold), in one update of the game's row (on PostgreSQL, where each update of a
    /// row leaves its old version behind until a vacuum, one statement).
    FinishGame {
        game_id: Uuid,
        result: Value,
        reason: String,
        finished_at_ms: i64,
    },
    /// A rated game's new ratings and history rows (issue 26), computed from the ratings
    /// read in the same transaction; always after the game's `FinishGame`.
    RateGame {
        game_id: Uuid,
        at_ms: i64,
        rated: RatedGame,
    },
}

impl WriteOp {
    /// The game this op writes to, if any.
    pub(crate) fn game(&self) -> Option<Uuid> {
        match self {
            WriteOp::CreateGame(g) => Some(g.id),
            WriteOp::AppendEvents { game_id, .. }
            | WriteOp::AppendLog { game_id, .. }
            | WriteOp::SetDeadline { game_id, .. }
            | WriteOp::FinishGame { game_id, .. }
            | WriteOp::RateGame { game_id, .. } => Some(*game_id),
            WriteOp::CheckFence(_)
            | WriteOp::CreateRoom(_)
            | WriteOp::UpdateRoomStatus { .. }
            | WriteOp::UpsertSeat(_)
            | WriteOp::DeleteSeat { .. } => None,
        }
    }
}

/// A game's tail is folded into `games.log` once it holds this many pieces (and in the
/// game's end transaction), so a running game is one row and at most this many small
/// tail rows: the default of [`Backend::FOLD_EVERY`](super::Backend::FOLD_EVERY), SQLite's
/// and the memory store's (PostgreSQL has its own).
pub(crate) const FOLD_EVERY: i64 = 32;

/// Where a game's stored log ends: its last seq in either format (`None`: empty, or no
/// such game) and whether it is a packed log (else JSON rows, or nothing yet).
pub(crate) type LogEnd = (Option<i64>, bool);

/// A game's [`LogEnd`] with the number of pieces in its tail (`game_log_tail`: its rows
/// on SQLite, its row's `pieces` on PostgreSQL), as
/// [`Backend::last_seqs`](super::Backend::last_seqs) reads them: the tail's length says
/// whether the next append folds it
/// ([`Backend::FOLD_EVERY`](super::Backend::FOLD_EVERY)).
pub(crate) type StoredEnd = (LogEnd, i64);

/// One game's pieces of one group, joined in order: ONE append to its tail
/// ([`Backend::append_pieces`](super::Backend::append_pieces): a tail row on SQLite,
/// appended to the game's tail row on PostgreSQL), counted as one piece of the tail. The
/// reader takes a tail's bytes as whatever follows the log before it, so an append of
/// several pieces reads as those pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TailAppend {
    /// The game.
    pub(crate) game_id: Uuid,
    /// The log's last seq before it, as checked (the first piece's first seq − 1):
    /// PostgreSQL appends to its one tail row only if that row still ends there.
    pub(crate) after_seq: i64,
    /// The seq of the last event of the last piece.
    pub(crate) last_seq: i64,
    /// The pieces' bytes, in order.
    pub(crate) bytes: Vec<u8>,
    /// Whether the tail holds the backend's fold interval of pieces with this one
    /// ([`Backend::FOLD_EVERY`](super::Backend::FOLD_EVERY)): fold it into `games.log` in
    /// the same transaction.
    pub(crate) fold: bool,
}

/// Checks a group's lone pieces (`(game, piece, follows)`, in request order) against
/// where each game's log ends (`ends`, one per distinct game in order of first
/// appearance, from [`Backend::last_seqs`](super::Backend::last_seqs)) and joins each
/// game's pieces into one [`TailAppend`] (same order), marked to fold when its tail then
/// holds `fold_every` pieces (the backend's
/// [`Backend::FOLD_EVERY`](super::Backend::FOLD_EVERY)). A second piece of a game in the
/// group must follow the first.
///
/// # Errors
/// The first failing check's error ([`check_format`], [`check_piece`]): the group is then
/// replayed request by request, where each request gets its own answer.
pub(crate) fn merge_pieces(
    pieces: &[(Uuid, &LogPiece, Follows)],
    games: &[Uuid],
    ends: &[StoredEnd],
    fold_every: i64,
) -> Result<Vec<TailAppend>> {
    if games.len() != ends.len() {
        return Err(StoreError::Corrupt(format!(
            "log ends for {} games, asked for {}",
            ends.len(),
            games.len()
        )));
    }
    let mut merged: Vec<TailAppend> = games
        .iter()
        .zip(ends)
        .map(|(game_id, (_, tail))| TailAppend {
            game_id: *game_id,
            after_seq: 0,
            last_seq: 0,
            bytes: Vec::new(),
            fold: tail + 1 >= fold_every,
        })
        .collect();
    let mut running: Vec<Option<i64>> = ends.iter().map(|((last, _), _)| *last).collect();
    let index: std::collections::HashMap<Uuid, usize> =
        games.iter().enumerate().map(|(i, g)| (*g, i)).collect();
    for (game_id, piece, follows) in pieces {
        let i = *index
            .get(game_id)
            .ok_or_else(|| StoreError::Corrupt(format!("no log end read for game {game_id}")))?;
        check_format(*game_id, ends[i].0, true)?;
        check_piece(*game_id, *follows, running[i], piece)?;
        running[i] = Some(piece.last_seq);
        if merged[i].bytes.is_empty() && merged[i].last_seq == 0 {
            merged[i].after_seq = piece.first_seq - 1;
        }
        merged[i].last_seq = piece.last_seq;
        merged[i].bytes.extend_from_slice(&piece.bytes);
    }
    Ok(merged)
}

/// Refuses a write that would mix a game's two stored formats (a reader takes a game's
/// packed log when it has one, and would not see JSON rows beside it): JSON rows after a
/// packed log, or a packed piece after JSON rows.
///
/// # Errors
/// [`StoreError::InvalidWrite`].
pub(crate) fn check_format(game_id: Uuid, end: LogEnd, packing: bool) -> Result<()> {
    let (last, packed) = end;
    let rows = last.is_some() && !packed;
    match (packing, packed, rows) {
        (false, true, _) => Err(StoreError::InvalidWrite(format!(
            "game {game_id} is stored as a packed log: no event rows after it"
        ))),
        (true, _, true) => Err(StoreError::InvalidWrite(format!(
            "game {game_id} is stored as event rows: no packed piece after them"
        ))),
        _ => Ok(()),
    }
}

/// The log position an append requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Follows {
    /// No check beyond unique `seq`s (`append_events`).
    Any,
    /// The last stored `seq` is this one, and the batch continues it without a gap.
    After(i64),
    /// The log is empty (a game's first events), and the batch has no gap.
    Fresh,
}

/// The fence a request is checked against, if any (always its first op).
pub(super) fn fence_of(ops: &[WriteOp]) -> Option<&Fence> {
    match ops.first() {
        Some(WriteOp::CheckFence(f)) => Some(f),
        _ => None,
    }
}

/// Whether `fence` is still the room's lease in `owners`.
///
/// # Errors
/// [`StoreError::Fenced`] with the current owner and epoch, if any.
pub(crate) fn check_fence(fence: &Fence, current: Option<&(String, i64)>) -> Result<()> {
    match current {
        Some((owner, epoch)) if *owner == fence.node && *epoch == fence.epoch => Ok(()),
        current => Err(StoreError::Fenced {
            room: fence.room_code.clone(),
            epoch: fence.epoch,
            current: current.cloned(),
        }),
    }
}

/// The ops of one room write, in the order they are applied (empty for an empty append).
///
/// # Errors
/// [`StoreError::SeqMismatch`] for a start without events.
pub(crate) fn room_ops(room_code: &str, write: RoomWrite) -> Result<Vec<WriteOp>> {
    Ok(match write {
        RoomWrite::UpsertSeat(seat) => vec![WriteOp::UpsertSeat(seat)],
        RoomWrite::DeleteSeat { colour } => vec![WriteOp::DeleteSeat {
            room_code: room_code.to_owned(),
            colour,
        }],
        RoomWrite::Append {
            game_id,
            after_seq,
            events,
        } if !events.is_empty() => vec![WriteOp::AppendEvents {
            game_id,
            events,
            follows: Follows::After(after_seq),
        }],
        RoomWrite::Append { .. } => Vec::new(),
        RoomWrite::AppendLog {
            game_id,
            after_seq,
            piece,
        } => vec![WriteOp::AppendLog {
            game_id,
            piece,
            follows: Follows::After(after_seq),
        }],
        RoomWrite::Start(start) => start_ops(*start)?,
        RoomWrite::End(end) => end_ops(*end)?,
        RoomWrite::SetDeadline {
            game_id,
            deadline_ms,
        } => vec![WriteOp::SetDeadline {
            game_id,
            deadline_ms,
        }],
        RoomWrite::RoomStatus(update) => vec![WriteOp::UpdateRoomStatus {
            code: room_code.to_owned(),
            update,
        }],
        // One transaction: the ops of each write, in order (`check_room` refused nesting).
        RoomWrite::Batch(writes) => {
            let mut ops = Vec::new();
            for write in writes {
                ops.extend(room_ops(room_code, write)?);
            }
            ops
        }
    })
}

/// The ops of a [`GameStart`], in the order they are applied.
///
/// # Errors
/// [`StoreError::SeqMismatch`] for a start without events.
fn start_ops(start: GameStart) -> Result<Vec<WriteOp>> {
    let GameStart {
        game,
        room,
        seats,
        events,
        log,
    } = start;
    if log.is_some() && !events.is_empty() {
        return Err(StoreError::InvalidWrite(format!(
            "the start of game {} carries both a packed log and event rows",
            game.id
        )));
    }
    if events.is_empty() && log.is_none() {
        return Err(StoreError::SeqMismatch {
            game_id: game.id,
            after: 0,
            last: None,
        });
    }
    let (game_id, code) = (game.id, game.room_code.clone());
    let mut ops = vec![WriteOp::CreateGame(game)];
    ops.push(WriteOp::UpdateRoomStatus { code, update: room });
    ops.extend(seats.into_iter().map(WriteOp::UpsertSeat));
    ops.push(match log {
        Some(piece) => WriteOp::AppendLog {
            game_id,
            piece,
            follows: Follows::Fresh,
        },
        None => WriteOp::AppendEvents {
            game_id,
            events,
            follows: Follows::Fresh,
        },
    });
    Ok(ops)
}

/// The ops of a [`GameEnd`], in the order they are applied.
///
/// # Errors
/// [`StoreError::InvalidWrite`] for an end with both a packed piece and event rows.
fn end_ops(end: GameEnd) -> Result<Vec<WriteOp>> {
    let GameEnd {
        game_id,
        room_code,
        after_seq,
        events,
        log,
        result,
        reason,
        finished_at_ms,
        room,
        rated,
    } = end;
    if log.is_some() && !events.is_empty() {
        return Err(StoreError::InvalidWrite(format!(
            "the end of game {game_id} carries both a packed log and event rows"
        )));
    }
    let mut ops = Vec::with_capacity(5);
    if let Some(piece) = log {
        ops.push(WriteOp::AppendLog {
            game_id,
            piece,
            follows: Follows::After(after_seq),
        });
    } else if !events.is_empty() {
        ops.push(WriteOp::AppendEvents {
            game_id,
            events,
            follows: Follows::After(after_seq),
        });
    }
    ops.push(WriteOp::FinishGame {
        game_id,
        result,
        reason,
        finished_at_ms,
    });
    ops.push(WriteOp::UpdateRoomStatus {
        code: room_code,
        update: room,
    });
    if let Some(rated) = rated {
        ops.push(WriteOp::RateGame {
            game_id,
            at_ms: finished_at_ms,
            rated,
        });
    }
    Ok(ops)
}

/// Checks that `events` continue a log whose last stored `seq` is `last`, as `follows`
/// requires: no gap, no overlap, nothing missing before them.
pub(crate) fn check_follows(
    game_id: Uuid,
    follows: Follows,
    last: Option<i64>,
    events: &[EventRecord],
) -> Result<()> {
    let after = match (follows, last) {
        (Follows::Any, _) => return Ok(()),
        (Follows::After(after), Some(l)) if l == after => after,
        (Follows::Fresh, None) => match events.first() {
            Some(first) => first.seq - 1,
            None => return Ok(()),
        },
        (Follows::After(after), last) => {
            return Err(StoreError::SeqMismatch {
                game_id,
                after,
                last,
            })
        }
        (Follows::Fresh, last) => {
            return Err(StoreError::SeqMismatch {
                game_id,
                after: events.first().map_or(0, |e| e.seq - 1),
                last,
            })
        }
    };
    for (i, e) in events.iter().enumerate() {
        if e.seq != after + 1 + i as i64 {
            return Err(StoreError::SeqMismatch {
                game_id,
                after: after + i as i64,
                last,
            });
        }
    }
    Ok(())
}

/// Rejects a batch that repeats a `seq` before anything reaches the database.
pub(crate) fn check_batch(game_id: Uuid, events: &[EventRecord]) -> Result<()> {
    let mut seen = std::collections::HashSet::with_capacity(events.len());
    for e in events {
        if !seen.insert(e.seq) {
            return Err(StoreError::DuplicateSeq {
                game_id,
                seq: e.seq,
            });
        }
    }
    Ok(())
}

/// Checks that `piece` continues a log whose last stored `seq` (in either format) is
/// `last`, as `follows` requires: it starts right after it and packs at least one event.
///
/// # Errors
/// [`StoreError::SeqMismatch`].
pub(crate) fn check_piece(
    game_id: Uuid,
    follows: Follows,
    last: Option<i64>,
    piece: &LogPiece,
) -> Result<()> {
    let after = match follows {
        Follows::After(after) => after,
        Follows::Fresh | Follows::Any => piece.first_seq - 1,
    };
    let placed = match follows {
        Follows::Any => true,
        Follows::After(a) => last == Some(a),
        Follows::Fresh => last.is_none(),
    };
    if !placed || piece.first_seq != after + 1 || piece.last_seq < piece.first_seq {
        return Err(StoreError::SeqMismatch {
            game_id,
            after,
            last,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(first: i64, last: i64) -> LogPiece {
        LogPiece {
            first_seq: first,
            last_seq: last,
            bytes: vec![first as u8, last as u8],
        }
    }

    #[test]
    fn a_games_pieces_are_joined_in_order_and_the_fold_is_marked() {
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let (p1, p2, p3) = (piece(4, 5), piece(6, 6), piece(10, 12));
        let pieces = [
            (a, &p1, Follows::After(3)),
            (b, &p3, Follows::After(9)),
            (a, &p2, Follows::After(5)),
        ];
        // a: 3 stored, 30 tail rows (this group's row is the 31st: no fold);
        // b: 9 stored, 31 tail rows (the 32nd: fold).
        let ends = [((Some(3), true), 30), ((Some(9), true), 31)];
        let merged = merge_pieces(&pieces, &[a, b], &ends, 32).expect("merged");
        assert_eq!(
            merged,
            vec![
                TailAppend {
                    game_id: a,
                    after_seq: 3,
                    last_seq: 6,
                    bytes: vec![4, 5, 6, 6],
                    fold: false
                },
                TailAppend {
                    game_id: b,
                    after_seq: 9,
                    last_seq: 12,
                    bytes: vec![10, 12],
                    fold: true
                },
            ]
        );
    }

    #[test]
    fn a_piece_that_does_not_follow_the_one_before_it_fails_the_merge() {
        let a = Uuid::new_v4();
        let (p1, p2) = (piece(4, 5), piece(5, 6));
        let pieces = [(a, &p1, Follows::After(3)), (a, &p2, Follows::After(4))];
        let ends = [((Some(3), true), 0)];
        assert!(matches!(
            merge_pieces(&pieces, &[a], &ends, 32),
            Err(StoreError::SeqMismatch {
                after: 4,
                last: Some(5),
                ..
            })
        ));
        // A piece after JSON rows would hide them: refused.
        let rows = [((Some(3), false), 0)];
        assert!(matches!(
            merge_pieces(&pieces[..1], &[a], &rows, 32),
            Err(StoreError::InvalidWrite(_))
        ));
    }
}
