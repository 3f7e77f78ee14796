//! The memory store's tournaments (issue 27): each tournament's event log, with the SQL
//! backends' checks (seq follows, fence as on PostgreSQL) and orders.

use serde_json::Value;
use uuid::Uuid;

use super::inner::{Inner, MemTournament};
use crate::error::{Result, StoreError};
use crate::tournaments::MAX_TOURNAMENTS_LISTED;
use crate::writer::check_fence;
use parchis_records::Fence;

impl Inner {
    pub(super) fn create_tournament(&mut self, id: Uuid, at: i64, first: &Value) -> Result<()> {
        if self.tournaments.contains_key(&id) {
            return Err(StoreError::TournamentExists(id));
        }
        let t = MemTournament {
            created_at_ms: at,
            entries: vec![first.clone()],
        };
        self.tournaments.insert(id, t);
        Ok(())
    }

    pub(super) fn tournament_log(&self, id: Uuid) -> Vec<Value> {
        self.tournaments
            .get(&id)
            .map(|t| t.entries.clone())
            .unwrap_or_default()
    }

    pub(super) fn tournament_ids(&self, limit: u32) -> Vec<Uuid> {
        let mut ids: Vec<(i64, Uuid)> = self
            .tournaments
            .iter()
            .map(|(id, t)| (t.created_at_ms, *id))
            .collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        ids.into_iter()
            .take(limit.min(MAX_TOURNAMENTS_LISTED) as usize)
            .map(|(_, id)| id)
            .collect()
    }

    pub(super) fn append_tournament(
        &mut self,
        id: Uuid,
        after: i64,
        entries: &[Value],
        fence: Option<&Fence>,
    ) -> Result<()> {
        if let Some(fence) = fence {
            check_fence(fence, self.fence_current(&fence.room_code).as_ref())?;
        }
        let Some(t) = self.tournaments.get_mut(&id) else {
            return Err(StoreError::TournamentSeqMismatch {
                tournament: id,
                after,
                last: None,
            });
        };
        let last = t.entries.len() as i64;
        if last != after {
            return Err(StoreError::TournamentSeqMismatch {
                tournament: id,
                after,
                last: Some(last),
            });
        }
        t.entries.extend(entries.iter().cloned());
        Ok(())
    }
}
