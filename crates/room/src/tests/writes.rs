//! What a write the room produced stores of a game's log, read from the write itself
//! (before `From<Write> for RoomWrite`): the piece of a packed game, or the JSON rows of
//! a game stored as rows (issue 28: the room builds one or the other, never both).

use parchis_room_core::persist::Write;
use parchis_store::EventRecord;
use uuid::Uuid;

/// What one write the room produced stores of a game's log.
pub struct LogPart<'a> {
    /// The game.
    pub game_id: Uuid,
    /// Its JSON rows (a game stored as rows; empty for a packed game).
    pub rows: &'a [EventRecord],
    /// Its packed piece (a packed game; `None` for a game stored as rows).
    pub piece: Option<&'a parchis_store::LogPiece>,
}

/// The log parts of `write` (inside a batch too), in order; none for a write that is no
/// log write (a seat, the room's status, the deadline column).
pub fn log_parts(write: &Write) -> Vec<LogPart<'_>> {
    match write {
        Write::Append {
            game_id,
            events,
            piece,
            ..
        } => vec![LogPart {
            game_id: *game_id,
            rows: events,
            piece: piece.as_ref(),
        }],
        Write::Start(start) => vec![LogPart {
            game_id: start.game.id,
            rows: &start.events,
            piece: start.log.as_ref(),
        }],
        Write::End(end) => vec![LogPart {
            game_id: end.game_id,
            rows: &end.events,
            piece: end.log.as_ref(),
        }],
        Write::Batch(writes) => writes.iter().flat_map(log_parts).collect(),
        _ => Vec::new(),
    }
}

/// The seqs a log write of game `game_id` stores (first, last), from its piece or its
/// rows; `None` if it stores nothing of that game.
pub fn written_seqs(write: &Write, game_id: Uuid) -> Option<(u64, u64)> {
    let seqs: Vec<(i64, i64)> = log_parts(write)
        .into_iter()
        .filter(|p| p.game_id == game_id)
        .filter_map(|p| match (p.piece, p.rows.first(), p.rows.last()) {
            (Some(piece), _, _) => Some((piece.first_seq, piece.last_seq)),
            (None, Some(first), Some(last)) => Some((first.seq, last.seq)),
            _ => None,
        })
        .collect();
    let first = seqs.iter().map(|s| s.0).min()?;
    let last = seqs.iter().map(|s| s.1).max()?;
    Some((u64::try_from(first).ok()?, u64::try_from(last).ok()?))
}

/// Issue 28, "each frame serialised once": every log write the room produced for a
/// packed game (as the room hands it to the store, before `From<Write> for RoomWrite`)
/// carries its piece and no JSON row, and the pieces follow each other seq by seq to the
/// end of the stored `log`.
pub fn assert_writes_packed(seed: u64, writes: &[Write], log: &[parchis_room_core::LoggedEvent]) {
    let mut next = log.first().map(|e| e.seq).expect("a game was logged");
    let mut pieces = 0;
    for part in writes.iter().flat_map(log_parts) {
        assert!(
            part.rows.is_empty(),
            "seed {seed}: a packed game's write carries JSON rows: {:?}",
            part.rows
        );
        let piece = part
            .piece
            .expect("a packed game's log write carries its piece");
        assert_eq!(piece.first_seq as u64, next, "seed {seed}: pieces follow");
        next = piece.last_seq as u64 + 1;
        pieces += 1;
    }
    assert!(pieces > 1, "seed {seed}: the start and later writes");
    assert_eq!(
        next,
        log.last().map_or(0, |e| e.seq + 1),
        "seed {seed}: the pieces reach the end of the log"
    );
}
