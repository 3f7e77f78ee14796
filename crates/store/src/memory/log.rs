//! The memory store's packed game logs (issue 28): the same rows as the SQL stores
//! (`games.log`, `games.log_seq`, `game_log_tail`), compacted by the same rule.

use uuid::Uuid;

use super::inner::Inner;
use crate::error::{Result, StoreError};
use parchis_records::{GameLog, LOG_COMPACT_EVERY};

impl Inner {
    /// Stores one piece, compacting once the tail holds [`LOG_COMPACT_EVERY`] pieces.
    ///
    /// # Errors
    /// [`StoreError::GameNotFound`], [`StoreError::DuplicateSeq`] for a piece already at
    /// `last_seq`.
    pub(super) fn append_log(
        &mut self,
        game_id: Uuid,
        last_seq: i64,
        bytes: Vec<u8>,
    ) -> Result<()> {
        if !self.games.contains_key(&game_id) {
            return Err(StoreError::GameNotFound(game_id));
        }
        let log = self.logs.entry(game_id).or_default();
        if log.tail.contains_key(&last_seq) || log.log_seq.is_some_and(|s| s >= last_seq) {
            return Err(StoreError::DuplicateSeq {
                game_id,
                seq: last_seq,
            });
        }
        log.tail.insert(last_seq, bytes);
        if log.tail.len() as i64 >= LOG_COMPACT_EVERY {
            self.compact_log(game_id);
        }
        Ok(())
    }

    /// Folds the game's tail into its log (the end's compaction and every
    /// [`LOG_COMPACT_EVERY`] pieces).
    pub(super) fn compact_log(&mut self, game_id: Uuid) {
        let Some(log) = self.logs.get_mut(&game_id) else {
            return;
        };
        for (seq, piece) in std::mem::take(&mut log.tail) {
            log.log.extend_from_slice(&piece);
            log.log_seq = Some(seq);
        }
    }

    /// The game's packed log, `None` when it has none.
    pub(super) fn game_log(&self, game_id: Uuid) -> Option<GameLog> {
        let log = self.logs.get(&game_id)?;
        let tail = log.tail.iter().map(|(s, b)| (*s, b.clone())).collect();
        let head = (!log.log.is_empty()).then(|| log.log.clone());
        crate::rows::game_log(head, log.log_seq, tail)
    }
}
