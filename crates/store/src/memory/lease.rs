//! The memory store's leases and node heartbeats: PostgreSQL's semantics
//! (docs/CLUSTER.md, "Ownership: leases with an epoch") on the store's own clock, `now`
//! in milliseconds, passed in by the caller.

use super::inner::{Inner, MemLease, MemNode};
use crate::error::{Result, StoreError};
use parchis_records::{Fence, Lease, NodeInfo, NodeRecord};
use parchis_records::{RoomRecord, RoomStatus};

/// Leases and heartbeats, with PostgreSQL's semantics on the store's clock (`now`, ms).
impl Inner {
    pub(super) fn fence_current(&self, code: &str) -> Option<(String, i64)> {
        self.leases.get(code).map(|l| (l.owner.clone(), l.epoch))
    }

    /// Acquires `code` for `node` if it has no lease or an expired, unretired one.
    fn acquire(&mut self, code: &str, node: &str, ttl_ms: i64, now: i64) -> Option<Fence> {
        let epoch = match self.leases.get(code) {
            None => 1,
            Some(l) if l.expires_at < now && !l.retired => l.epoch + 1,
            Some(_) => return None,
        };
        self.leases.insert(
            code.to_owned(),
            MemLease {
                owner: node.to_owned(),
                epoch,
                expires_at: now.saturating_add(ttl_ms),
                retired: false,
            },
        );
        Some(Fence {
            room_code: code.to_owned(),
            node: node.to_owned(),
            epoch,
        })
    }

    pub(super) fn claim_expired(
        &mut self,
        node: &str,
        ttl_ms: i64,
        limit: u32,
        now: i64,
    ) -> Vec<Fence> {
        let unfinished = |code: &String| {
            self.rooms
                .get(code)
                .is_some_and(|r| r.status != RoomStatus::Finished)
        };
        let mut expired: Vec<(i64, String)> = self
            .leases
            .iter()
            .filter(|(code, l)| l.expires_at < now && !l.retired && unfinished(code))
            .map(|(code, l)| (l.expires_at, code.clone()))
            .collect();
        expired.sort();
        let mut fresh: Vec<&RoomRecord> = self
            .rooms
            .values()
            .filter(|r| r.status != RoomStatus::Finished && !self.leases.contains_key(&r.code))
            .collect();
        fresh.sort_by(|a, b| (a.created_at_ms, &a.code).cmp(&(b.created_at_ms, &b.code)));
        let codes: Vec<String> = expired
            .into_iter()
            .map(|(_, code)| code)
            .chain(fresh.into_iter().map(|r| r.code.clone()))
            .take(limit as usize)
            .collect();
        let mut fences: Vec<Fence> = codes
            .iter()
            .filter_map(|code| self.acquire(code, node, ttl_ms, now))
            .collect();
        fences.sort_by(|a, b| a.room_code.cmp(&b.room_code));
        fences
    }

    /// How long the longest expired lease `claim_expired` would take has been expired.
    pub(super) fn longest_expired_ms(&self, now: i64) -> Option<i64> {
        self.leases
            .iter()
            .filter(|(code, l)| {
                l.expires_at < now
                    && !l.retired
                    && self
                        .rooms
                        .get(*code)
                        .is_some_and(|r| r.status != RoomStatus::Finished)
            })
            .map(|(_, l)| now.saturating_sub(l.expires_at))
            .max()
    }

    /// The lease if `fence` (owner and epoch) still matches it.
    fn own_lease(&mut self, fence: &Fence) -> Option<&mut MemLease> {
        self.leases
            .get_mut(&fence.room_code)
            .filter(|l| l.owner == fence.node && l.epoch == fence.epoch)
    }

    /// Acquires an existing room's lease.
    ///
    /// # Errors
    /// [`StoreError::RoomNotFound`].
    pub(super) fn acquire_room(
        &mut self,
        code: &str,
        node: &str,
        ttl_ms: i64,
        now: i64,
    ) -> Result<Option<Fence>> {
        if !self.rooms.contains_key(code) {
            return Err(StoreError::RoomNotFound(code.to_owned()));
        }
        Ok(self.acquire(code, node, ttl_ms, now))
    }

    /// Creates a room and its first lease together.
    ///
    /// # Errors
    /// [`StoreError::RoomExists`].
    pub(super) fn create_leased(
        &mut self,
        room: &RoomRecord,
        node: &str,
        ttl_ms: i64,
        now: i64,
    ) -> Result<Fence> {
        if self.rooms.contains_key(&room.code) || self.leases.contains_key(&room.code) {
            return Err(StoreError::RoomExists(room.code.clone()));
        }
        self.rooms.insert(room.code.clone(), room.clone());
        self.acquire(&room.code, node, ttl_ms, now)
            .ok_or_else(|| StoreError::RoomExists(room.code.clone()))
    }

    pub(super) fn renew(
        &mut self,
        node: &str,
        ttl_ms: i64,
        held: &[Fence],
        now: i64,
    ) -> Vec<Fence> {
        let mut kept = Vec::new();
        for fence in held {
            let mine = Fence {
                node: node.to_owned(),
                ..fence.clone()
            };
            if let Some(lease) = self.own_lease(&mine).filter(|l| !l.retired) {
                lease.expires_at = now.saturating_add(ttl_ms);
                kept.push(mine);
            }
        }
        kept.sort_by(|a, b| a.room_code.cmp(&b.room_code));
        kept.dedup();
        kept
    }

    pub(super) fn release(&mut self, fence: &Fence, now: i64) -> bool {
        self.own_lease(fence)
            .map(|l| l.expires_at = now - 1)
            .is_some()
    }

    pub(super) fn retire(&mut self, fence: &Fence, now: i64) -> bool {
        self.own_lease(fence)
            .map(|l| {
                l.retired = true;
                l.expires_at = l.expires_at.min(now);
            })
            .is_some()
    }

    pub(super) fn lease(&self, code: &str, now: i64) -> Option<Lease> {
        self.leases.get(code).map(|l| Lease {
            room_code: code.to_owned(),
            owner: l.owner.clone(),
            epoch: l.epoch,
            expires_in_ms: l.expires_at - now,
            retired: l.retired,
        })
    }

    pub(super) fn heartbeat(&mut self, node: &NodeRecord, now: i64) {
        let record = NodeRecord {
            // INTEGER on PostgreSQL: the same bound here.
            rooms: node.rooms.min(i32::MAX as u32),
            ..node.clone()
        };
        self.nodes.insert(
            node.node_id.clone(),
            MemNode {
                record,
                seen_at: now,
            },
        );
    }

    pub(super) fn live_nodes(&self, max_age_ms: i64, now: i64) -> Vec<NodeInfo> {
        let mut nodes: Vec<NodeInfo> = self
            .nodes
            .values()
            .filter(|n| now - n.seen_at <= max_age_ms)
            .map(|n| NodeInfo {
                node_id: n.record.node_id.clone(),
                rooms: n.record.rooms,
                draining: n.record.draining,
                shedding: n.record.shedding,
                seen_ms_ago: (now - n.seen_at).max(0),
            })
            .collect();
        nodes.sort_by(|a, b| (a.rooms, &a.node_id).cmp(&(b.rooms, &b.node_id)));
        nodes
    }
}
