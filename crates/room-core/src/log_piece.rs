//! The game's packed log written beside its events (issue 28, `docs/STORAGE.md`): each
//! write that carries a game's events (a start, an append, an end, in a batch or alone)
//! gets the piece [`crate::throws::Encoder::push`] makes of them, in the same write, so
//! the piece is durable exactly when its events are, behind the same fence. The encoder
//! moves on only once the write is stored ([`LogState::written`]); a write that failed
//! is packed again from the same state when retried.
//!
//! A game restored without a packed log (stored before it existed) gets no pieces:
//! its log would lack its beginning.

use crate::persist::{self, Write};
use crate::replay::LoggedEvent;
use crate::throws::{self, Encoder};
use parchis_records::EventRecord;
use uuid::Uuid;

/// The room's packing state: the encoder of the stored pieces and, while a write is
/// under way, the one that includes it.
#[derive(Clone, Debug, Default)]
pub struct LogState {
    /// The encoder after the last stored piece; `None`: the game's events get no piece.
    stored: Option<Encoder>,
    /// After the write under way, adopted once it is stored.
    pending: Option<Option<Encoder>>,
}

impl LogState {
    /// `write` with the piece of the game's packed log of the events it carries (a
    /// [`Write::Batch`] holding them and a [`Write::LogPiece`], the piece before a
    /// game's end, whose transaction compacts the log); `write` as it is when it carries
    /// no events or the game gets no pieces.
    pub fn piece(&mut self, write: Write) -> Write {
        self.pending = None;
        let mut writes = match write {
            Write::Batch(writes) => writes,
            one => vec![one],
        };
        let Some((game_id, fresh, events)) = events_of(&writes) else {
            return unbatch(writes);
        };
        let base = if fresh {
            Some(Encoder::new())
        } else {
            self.stored.clone()
        };
        let Some(mut encoder) = base else {
            return unbatch(writes);
        };
        let logged: Result<Vec<LoggedEvent>, _> =
            events.iter().map(|r| persist::event_from(r)).collect();
        let Ok(logged) = logged else {
            // Never for the room's own records; the game then goes on without pieces.
            self.pending = Some(None);
            return unbatch(writes);
        };
        let Some(last) = logged.last() else {
            return unbatch(writes);
        };
        let last_seq = last.seq;
        let mut bytes = Vec::new();
        encoder.push(&logged, &mut bytes);
        self.pending = Some(Some(encoder));
        let piece = Write::LogPiece {
            game_id,
            last_seq,
            bytes,
        };
        match writes.iter().position(|w| matches!(w, Write::End(_))) {
            Some(at) => writes.insert(at, piece),
            None => writes.push(piece),
        }
        Write::Batch(writes)
    }

    /// The outcome of the last write given to [`LogState::piece`]: stored (the
    /// encoder moves on) or not (it stays where it was).
    pub fn written(&mut self, stored: bool) {
        if let Some(next) = self.pending.take() {
            if stored {
                self.stored = next;
            }
        }
    }

    /// A restored game's packing state: the stored packed log (`None`: stored without
    /// one), decoded, must give back exactly the game's stored events `log`; else the
    /// game gets no more pieces. Returns whether it does.
    pub fn resume(&mut self, packed: Option<&[u8]>, log: &[LoggedEvent]) -> bool {
        *self = LogState::default();
        let Some(bytes) = packed else {
            return false;
        };
        match throws::decode(bytes) {
            Ok(decoded) if decoded.events == log => {
                self.stored = Some(decoded.encoder);
                true
            }
            _ => false,
        }
    }
}

/// The game and events of the writes that carry a game's events (a start: `fresh`).
fn events_of(writes: &[Write]) -> Option<(Uuid, bool, Vec<&EventRecord>)> {
    let mut found: Option<(Uuid, bool, Vec<&EventRecord>)> = None;
    for w in writes {
        let (id, fresh, events) = match w {
            Write::Start(start) => (start.game.id, true, &start.events),
            Write::Append {
                game_id, events, ..
            } => (*game_id, false, events),
            Write::End(end) => (end.game_id, false, &end.events),
            _ => continue,
        };
        let entry = found.get_or_insert((id, fresh, Vec::new()));
        if entry.0 != id {
            return None;
        }
        entry.1 |= fresh;
        entry.2.extend(events.iter());
    }
    found.filter(|(_, _, events)| !events.is_empty())
}

fn unbatch(mut writes: Vec<Write>) -> Write {
    if writes.len() == 1 {
        writes.remove(0)
    } else {
        Write::Batch(writes)
    }
}
