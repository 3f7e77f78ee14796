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
            lease: None,
            finished_at_ms: None,
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

    /// `tournaments.finished_at_ms` set once.
    pub(super) fn finish_tournament(&mut self, id: Uuid, at: i64) {
        if let Some(t) = self.tournaments.get_mut(&id) {
            t.finished_at_ms.get_or_insert(at);
        }
    }

    /// The unfinished tournaments, oldest first; with `free_at` (the store clock, ms)
    /// only those whose lease is absent or expired then.
    pub(super) fn unfinished_tournament_ids(&self, limit: u32, free_at: Option<i64>) -> Vec<Uuid> {
        let mut ids: Vec<(i64, Uuid)> = self
            .tournaments
            .iter()
            .filter(|(_, t)| t.finished_at_ms.is_none())
            .filter(|(_, t)| match (free_at, &t.lease) {
                (Some(now), Some((_, _, expires))) => *expires <= now,
                _ => true,
            })
            .map(|(id, t)| (t.created_at_ms, *id))
            .collect();
        ids.sort_unstable();
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
            let current = self
                .tournaments
                .get(&id)
                .and_then(|t| t.lease.as_ref())
                .map(|(owner, epoch, _)| (owner.clone(), *epoch));
            check_fence(fence, current.as_ref())?;
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

    /// PostgreSQL's `acquire_tournament_lease` on the store's clock (`now`, ms): taken when
    /// absent or expired (epoch + 1), renewed while `node` holds it, else `None`.
    pub(super) fn acquire_tournament_lease(
        &mut self,
        id: Uuid,
        node: &str,
        ttl_ms: i64,
        now: i64,
    ) -> Result<Option<Fence>> {
        let Some(t) = self.tournaments.get_mut(&id) else {
            return Err(StoreError::InvalidWrite(format!("no tournament {id}")));
        };
        let epoch = match &t.lease {
            None => 1,
            Some((owner, epoch, expires)) if owner == node && *expires > now => *epoch,
            Some((_, epoch, expires)) if *expires <= now => epoch + 1,
            Some(_) => return Ok(None),
        };
        t.lease = Some((node.to_owned(), epoch, now.saturating_add(ttl_ms)));
        Ok(Some(Fence {
            room_code: id.to_string(),
            node: node.to_owned(),
            epoch,
        }))
    }

    /// PostgreSQL's `release_tournament_lease`: expires now when held at `fence`.
    pub(super) fn release_tournament_lease(&mut self, id: Uuid, fence: &Fence, now: i64) {
        if let Some(t) = self.tournaments.get_mut(&id) {
            if let Some((owner, epoch, expires)) = &mut t.lease {
                if *owner == fence.node && *epoch == fence.epoch {
                    *expires = now;
                }
            }
        }
    }

    /// The node holding tournament `id`'s unexpired lease.
    pub(super) fn tournament_lease_owner(&self, id: Uuid, now: i64) -> Option<String> {
        self.tournaments
            .get(&id)
            .and_then(|t| t.lease.as_ref())
            .filter(|(_, _, expires)| *expires > now)
            .map(|(owner, _, _)| owner.clone())
    }
}
