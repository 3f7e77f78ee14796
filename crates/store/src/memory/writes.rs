//! The memory store's room writes, each checking everything before changing anything
//! (all or nothing). A [`RoomWrite::Batch`] is all or nothing across its writes through an
//! undo log: while it runs, every change notes what it replaced ([`Undo`]), and a write
//! that fails puts those back in reverse order. (Copying the whole store per batch, as
//! before, made every batch cost the size of the store.)

use serde_json::Value;
use uuid::Uuid;

use super::inner::{Inner, MemLog, Undo};
use crate::error::{Result, StoreError};
use crate::writer::{
    check_batch, check_follows, check_format, check_piece, Follows, LogEnd, FOLD_EVERY,
};
use parchis_records::{
    EventRecord, GameEnd, GameRecord, GameStart, LogPiece, RoomWrite, SeatRecord,
};

impl Inner {
    /// Notes a change for the running batch's undo log (nothing outside a batch).
    pub(super) fn note(&mut self, undo: Undo) {
        if let Some(log) = &mut self.undo {
            log.push(undo);
        }
    }

    /// Where the game's stored log ends, and whether it is packed.
    fn log_end(&self, game_id: Uuid) -> LogEnd {
        (self.last_seq(game_id), self.logs.contains_key(&game_id))
    }

    /// Puts back what a failed batch changed, newest first.
    fn roll_back(&mut self, undo: Vec<Undo>) {
        for u in undo.into_iter().rev() {
            match u {
                Undo::Room(code, room) => {
                    self.rooms.insert(code, room);
                }
                Undo::Seat(key, Some(seat)) => {
                    self.seats.insert(key, seat);
                }
                Undo::Seat(key, None) => {
                    self.seats.remove(&key);
                }
                Undo::Game(id, Some(game)) => {
                    self.games.insert(id, game);
                }
                Undo::Game(id, None) => {
                    self.games.remove(&id);
                }
                Undo::Events(id, seqs) => {
                    if let Some(log) = self.events.get_mut(&id) {
                        for seq in seqs {
                            log.remove(&seq);
                        }
                        if log.is_empty() {
                            self.events.remove(&id);
                        }
                    }
                }
                Undo::Log(id, Some(log)) => {
                    self.logs.insert(id, log);
                }
                Undo::Log(id, None) => {
                    self.logs.remove(&id);
                }
                Undo::Tail(id, seq) => {
                    if let Some(log) = self.logs.get_mut(&id) {
                        log.tail.remove(&seq);
                    }
                }
                Undo::Ratings(before, history_len) => {
                    for (key, rating) in before {
                        match rating {
                            Some(r) => self.ratings.insert(key, r),
                            None => self.ratings.remove(&key),
                        };
                    }
                    self.rating_history.truncate(history_len);
                }
            }
        }
    }

    /// The game's record to change, its old value noted for the batch.
    fn game_to_change(&mut self, id: Uuid) -> Result<&mut GameRecord> {
        if self.undo.is_some() {
            let old = self.games.get(&id).cloned();
            if old.is_some() {
                self.note(Undo::Game(id, old));
            }
        }
        self.game_mut(id)
    }

    /// Inserts or replaces a seat, noted for the batch.
    fn put_seat(&mut self, seat: SeatRecord) {
        let key = (seat.room_code.clone(), seat.colour.clone());
        let old = self.seats.insert(key.clone(), seat);
        self.note(Undo::Seat(key, old));
    }

    /// Applies one room write to room `code`; whether a row changed (for `delete_seat`).
    pub(super) fn write(&mut self, code: &str, write: RoomWrite) -> Result<bool> {
        match write {
            RoomWrite::UpsertSeat(seat) => self.upsert_seat(seat).map(|()| true),
            RoomWrite::DeleteSeat { colour } => {
                let key = (code.to_owned(), colour);
                let old = self.seats.remove(&key);
                let removed = old.is_some();
                if removed {
                    self.note(Undo::Seat(key, old));
                }
                Ok(removed)
            }
            RoomWrite::Append {
                game_id,
                after_seq,
                events,
            } => self.append(game_id, Follows::After(after_seq), events),
            RoomWrite::AppendLog {
                game_id,
                after_seq,
                piece,
            } => {
                if !self.games.contains_key(&game_id) {
                    return Err(StoreError::GameNotFound(game_id));
                }
                let end = self.log_end(game_id);
                check_format(game_id, end, true)?;
                check_piece(game_id, Follows::After(after_seq), end.0, &piece)?;
                self.insert_piece(game_id, piece);
                Ok(true)
            }
            RoomWrite::Start(start) => self.start_game(*start).map(|()| true),
            RoomWrite::End(end) => self.end_game(*end).map(|()| true),
            RoomWrite::SetDeadline {
                game_id,
                deadline_ms,
            } => {
                self.game_to_change(game_id)?.deadline_ms = deadline_ms;
                Ok(true)
            }
            RoomWrite::RoomStatus(update) => self.set_status(code, update).map(|()| true),
            // All or nothing: what each write changed is noted, and put back on a failure.
            RoomWrite::Batch(writes) => {
                let outer = self.undo.replace(Vec::new());
                let mut result = Ok(true);
                for write in writes {
                    if let Err(e) = self.write(code, write) {
                        result = Err(e);
                        break;
                    }
                }
                let undo = std::mem::replace(&mut self.undo, outer).unwrap_or_default();
                if result.is_err() {
                    self.roll_back(undo);
                } else if let Some(outer) = &mut self.undo {
                    outer.extend(undo);
                }
                result
            }
        }
    }

    pub(super) fn upsert_seat(&mut self, seat: SeatRecord) -> Result<()> {
        if !self.rooms.contains_key(&seat.room_code) {
            return Err(StoreError::RoomNotFound(seat.room_code.clone()));
        }
        self.put_seat(seat);
        Ok(())
    }

    /// Appends a batch whose log position `follows` requires (for [`Follows::Any`]: no
    /// `seq` already stored). An empty batch is a no-op.
    pub(super) fn append(
        &mut self,
        game_id: Uuid,
        follows: Follows,
        events: Vec<EventRecord>,
    ) -> Result<bool> {
        if events.is_empty() {
            return Ok(false);
        }
        if !self.games.contains_key(&game_id) {
            return Err(StoreError::GameNotFound(game_id));
        }
        check_batch(game_id, &events)?;
        let end = self.log_end(game_id);
        if follows != Follows::Any {
            check_format(game_id, end, false)?;
        }
        check_follows(game_id, follows, end.0, &events)?;
        if let Some(dup) = self
            .events
            .get(&game_id)
            .and_then(|log| events.iter().find(|e| log.contains_key(&e.seq)))
        {
            return Err(StoreError::DuplicateSeq {
                game_id,
                seq: dup.seq,
            });
        }
        self.insert_events(game_id, events);
        Ok(true)
    }

    /// Inserts checked event rows, noted for the batch.
    fn insert_events(&mut self, game_id: Uuid, events: Vec<EventRecord>) {
        if events.is_empty() {
            return;
        }
        let seqs: Vec<i64> = events.iter().map(|e| e.seq).collect();
        let log = self.events.entry(game_id).or_default();
        for e in events {
            log.insert(e.seq, e);
        }
        self.note(Undo::Events(game_id, seqs));
    }

    /// Inserts a checked piece as a tail row, then folds the tail once it holds
    /// [`FOLD_EVERY`] pieces.
    fn insert_piece(&mut self, game_id: Uuid, piece: LogPiece) {
        if !self.logs.contains_key(&game_id) {
            self.note(Undo::Log(game_id, None));
        }
        let log = self.logs.entry(game_id).or_default();
        log.tail.insert(piece.last_seq, piece.bytes);
        let full = log.tail.len() as i64 >= FOLD_EVERY;
        self.note(Undo::Tail(game_id, piece.last_seq));
        if full {
            self.fold(game_id);
        }
    }

    /// Folds a game's tail into its folded log (nothing to do without tail pieces).
    fn fold(&mut self, game_id: Uuid) {
        let Some(log) = self.logs.get(&game_id).filter(|l| !l.tail.is_empty()) else {
            return;
        };
        if self.undo.is_some() {
            let old = log.clone();
            self.note(Undo::Log(game_id, Some(old)));
        }
        if let Some(log) = self.logs.get_mut(&game_id) {
            for (seq, bytes) in std::mem::take(&mut log.tail) {
                log.folded.extend_from_slice(&bytes);
                log.log_seq = Some(seq);
            }
        }
    }

    pub(super) fn start_game(&mut self, start: GameStart) -> Result<()> {
        let game_id = start.game.id;
        if self.games.contains_key(&game_id) {
            return Err(StoreError::GameExists(game_id));
        }
        let code = &start.game.room_code;
        if let Some(s) = std::iter::once(code)
            .chain(start.seats.iter().map(|s| &s.room_code))
            .find(|c| !self.rooms.contains_key(*c))
        {
            return Err(StoreError::RoomNotFound(s.clone()));
        }
        match &start.log {
            Some(_) if !start.events.is_empty() => {
                return Err(StoreError::InvalidWrite(format!(
                    "the start of game {game_id} carries both a packed log and event rows"
                )))
            }
            Some(piece) => check_piece(game_id, Follows::Fresh, None, piece)?,
            None if start.events.is_empty() => {
                return Err(StoreError::SeqMismatch {
                    game_id,
                    after: 0,
                    last: None,
                })
            }
            None => {
                check_batch(game_id, &start.events)?;
                check_follows(game_id, Follows::Fresh, None, &start.events)?;
            }
        }
        self.set_status(code, start.room)?;
        self.games.insert(game_id, start.game);
        self.note(Undo::Game(game_id, None));
        for seat in start.seats {
            self.put_seat(seat);
        }
        self.insert_events(game_id, start.events);
        if let Some(piece) = start.log {
            self.insert_piece(game_id, piece);
        }
        Ok(())
    }

    pub(super) fn end_game(&mut self, end: GameEnd) -> Result<()> {
        let game_id = end.game_id;
        let game = self.game_mut(game_id)?;
        if game.finished_at_ms.is_some() {
            return Err(StoreError::GameFinished(game_id));
        }
        if !self.rooms.contains_key(&end.room_code) {
            return Err(StoreError::RoomNotFound(end.room_code.clone()));
        }
        let log_end = self.log_end(game_id);
        let last = log_end.0;
        match &end.log {
            Some(_) if !end.events.is_empty() => {
                return Err(StoreError::InvalidWrite(format!(
                    "the end of game {game_id} carries both a packed log and event rows"
                )))
            }
            Some(piece) => {
                check_format(game_id, log_end, true)?;
                check_piece(game_id, Follows::After(end.after_seq), last, piece)?
            }
            None if end.events.is_empty() => {}
            None => {
                check_format(game_id, log_end, false)?;
                check_batch(game_id, &end.events)?;
                check_follows(game_id, Follows::After(end.after_seq), last, &end.events)?;
            }
        }
        // Computed (and checked) before anything changes: the end stays all or nothing.
        let rating_rows = match &end.rated {
            Some(rated) => Some(self.rating_rows(game_id, end.finished_at_ms, rated)?),
            None => None,
        };
        self.set_status(&end.room_code, end.room)?;
        self.finish(game_id, end.result, end.reason, end.finished_at_ms)?;
        if let Some(rows) = rating_rows {
            if self.undo.is_some() {
                let before = rows
                    .iter()
                    .map(|(r, _)| {
                        let key = (r.account_id, r.pool.clone());
                        let old = self.ratings.get(&key).cloned();
                        (key, old)
                    })
                    .collect();
                let len = self.rating_history.len();
                self.note(Undo::Ratings(before, len));
            }
            self.apply_rating_rows(rows);
        }
        self.insert_events(game_id, end.events);
        if let Some(piece) = end.log {
            self.insert_piece(game_id, piece);
        }
        self.fold(game_id);
        Ok(())
    }

    pub(super) fn finish(
        &mut self,
        game_id: Uuid,
        result: Value,
        reason: String,
        finished_at_ms: i64,
    ) -> Result<()> {
        let game = self.game_to_change(game_id)?;
        if game.finished_at_ms.is_some() {
            return Err(StoreError::GameFinished(game_id));
        }
        game.finished_at_ms = Some(finished_at_ms);
        game.result = Some(result);
        game.reason = Some(reason);
        game.deadline_ms = None;
        // A finish folds the tail, as the SQL backends' `FinishGame` does.
        self.fold(game_id);
        Ok(())
    }
}

impl MemLog {
    /// The last seq it packs (`None`: nothing yet).
    pub(super) fn last_seq(&self) -> Option<i64> {
        self.tail.keys().next_back().copied().or(self.log_seq)
    }
}
