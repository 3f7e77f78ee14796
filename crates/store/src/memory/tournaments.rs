//! The memory store's tournaments (issue 27): each tournament's event log, with the SQL
//! backends' checks (seq follows, fence as on PostgreSQL) and orders.

use serde_json::Value;
use uuid::Uuid;

use super::inner::Inner;
use super::MemoryStore;
use crate::error::{Result, StoreError};
use crate::tournaments::{TournamentStore, MAX_TOURNAMENTS_LISTED};
use crate::writer::check_fence;
use async_trait::async_trait;
use parchis_records::Fence;

/// One stored tournament.
#[derive(Clone)]
pub(super) struct MemTournament {
    pub(super) created_at_ms: i64,
    pub(super) entries: Vec<Value>,
}

impl Inner {
    fn append_tournament(
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

#[async_trait]
impl TournamentStore for MemoryStore {
    async fn create_tournament(&self, id: Uuid, created_at_ms: i64, first: &Value) -> Result<()> {
        let mut inner = self.lock()?;
        if inner.tournaments.contains_key(&id) {
            return Err(StoreError::TournamentExists(id));
        }
        inner.tournaments.insert(
            id,
            MemTournament {
                created_at_ms,
                entries: vec![first.clone()],
            },
        );
        Ok(())
    }

    async fn append_tournament(
        &self,
        id: Uuid,
        after: i64,
        entries: &[Value],
        fence: Option<&Fence>,
    ) -> Result<()> {
        self.lock()?.append_tournament(id, after, entries, fence)
    }

    async fn tournament_log(&self, id: Uuid) -> Result<Vec<Value>> {
        Ok(self
            .lock()?
            .tournaments
            .get(&id)
            .map(|t| t.entries.clone())
            .unwrap_or_default())
    }

    async fn tournament_ids(&self, limit: u32) -> Result<Vec<Uuid>> {
        let inner = self.lock()?;
        let mut ids: Vec<(i64, Uuid)> = inner
            .tournaments
            .iter()
            .map(|(id, t)| (t.created_at_ms, *id))
            .collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        Ok(ids
            .into_iter()
            .take(limit.min(MAX_TOURNAMENTS_LISTED) as usize)
            .map(|(_, id)| id)
            .collect())
    }
}
