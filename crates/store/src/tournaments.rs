//! Championships (issue 27): the [`TournamentStore`] interface. A tournament is stored as
//! its director's event log, one JSON entry per `seq` (1, 2, …), which the director core
//! (`parchis-tournament`) folds back into its state; the store knows nothing of what the
//! entries mean.
//!
//! Appends are optimistic and write-ahead: the caller says which `seq` it believes last,
//! and an append that does not follow it writes nothing
//! ([`StoreError::TournamentSeqMismatch`](crate::StoreError::TournamentSeqMismatch)), so
//! two directors of one tournament can never interleave their events. In a cluster the
//! append also carries the director's [`Fence`] and is refused
//! ([`StoreError::Fenced`](crate::StoreError::Fenced)) once another node holds its lease.

use async_trait::async_trait;
use parchis_records::Fence;
use serde_json::Value;
use uuid::Uuid;

use crate::error::Result;

/// Most entries returned by one [`TournamentStore::tournament_log`] call is unbounded by
/// design (a tournament's log is bounded by its entrants and rounds); the list of
/// tournaments is bounded by this.
pub const MAX_TOURNAMENTS_LISTED: u32 = 500;

/// Tournaments' event logs. Every write is one transaction, durable when it returns `Ok`.
#[async_trait]
pub trait TournamentStore: Send + Sync {
    /// Stores a new tournament `id` with its first entry (seq 1).
    ///
    /// # Errors
    /// [`StoreError::TournamentExists`](crate::StoreError::TournamentExists) when `id` is
    /// taken (nothing written).
    async fn create_tournament(&self, id: Uuid, created_at_ms: i64, first: &Value) -> Result<()>;

    /// Appends `entries` as seqs `after + 1, after + 2, …`, when `after` is the last
    /// stored seq. With `fence`, the append is written only while tournament `id`'s lease
    /// ([`TournamentStore::acquire_tournament_lease`]) is held by `fence.node` at
    /// `fence.epoch`.
    ///
    /// # Errors
    /// [`StoreError::TournamentSeqMismatch`](crate::StoreError::TournamentSeqMismatch)
    /// when `after` is not the last seq (or the tournament does not exist: `last` is
    /// `None`); [`StoreError::Fenced`](crate::StoreError::Fenced); on SQLite a fence is
    /// [`StoreError::Unsupported`](crate::StoreError::Unsupported). Nothing is written on
    /// an error.
    async fn append_tournament(
        &self,
        id: Uuid,
        after: i64,
        entries: &[Value],
        fence: Option<&Fence>,
    ) -> Result<()>;

    /// Every entry of tournament `id`, by seq (empty when there is no such tournament).
    async fn tournament_log(&self, id: Uuid) -> Result<Vec<Value>>;

    /// The tournaments' ids, newest first (`created_at_ms`, then id, descending), at most
    /// `limit` (capped at [`MAX_TOURNAMENTS_LISTED`]).
    async fn tournament_ids(&self, limit: u32) -> Result<Vec<Uuid>>;

    /// Marks tournament `id` finished at `at_ms` (its director stored its last event); a
    /// second mark keeps the first time. Finished tournaments are neither restored nor
    /// claimed ([`TournamentStore::unfinished_tournament_ids`],
    /// [`TournamentStore::claimable_tournament_ids`]).
    ///
    /// # Errors
    /// The database's.
    async fn finish_tournament(&self, id: Uuid, at_ms: i64) -> Result<()>;

    /// The tournaments not marked finished, oldest first (`created_at_ms`, then id), at
    /// most `limit` (capped at [`MAX_TOURNAMENTS_LISTED`]): those a restarted single node
    /// restores.
    ///
    /// # Errors
    /// The database's.
    async fn unfinished_tournament_ids(&self, limit: u32) -> Result<Vec<Uuid>>;

    /// Cluster mode: the unfinished tournaments whose director lease is absent or expired
    /// (nobody directs them), oldest first, at most `limit` (capped at
    /// [`MAX_TOURNAMENTS_LISTED`]): those a node's claim loop takes. Tournaments that are
    /// finished or directed take no place in the limit, so none is starved by them.
    ///
    /// # Errors
    /// As [`TournamentStore::acquire_tournament_lease`].
    async fn claimable_tournament_ids(&self, _limit: u32) -> Result<Vec<Uuid>> {
        Err(crate::StoreError::Unsupported(
            "tournament leases need PostgreSQL (cluster mode)",
        ))
    }

    /// Cluster mode: acquires or renews tournament `id`'s director lease for `node`, for
    /// `ttl_ms` from the database's clock (`tournament_leases`). Taken when there is no
    /// lease or it has expired (the epoch grows by one: the previous holder's appends are
    /// fenced from then on); renewed, epoch unchanged, while `node` holds it. Returns the
    /// fence to append with (its `room_code` is the tournament id), or `None` when
    /// another node holds an unexpired lease.
    ///
    /// # Errors
    /// The database's; [`StoreError::Unsupported`](crate::StoreError::Unsupported) on a
    /// store without leases (SQLite, memory).
    async fn acquire_tournament_lease(
        &self,
        _id: Uuid,
        _node: &str,
        _ttl_ms: i64,
    ) -> Result<Option<Fence>> {
        Err(crate::StoreError::Unsupported(
            "tournament leases need PostgreSQL (cluster mode)",
        ))
    }

    /// Cluster mode: releases tournament `id`'s lease held by `fence` (a drained node's
    /// director stopped): it expires now, so another node's claim takes it at once (epoch
    /// + 1) instead of after the TTL. A lease no longer held at that epoch is left alone.
    ///
    /// # Errors
    /// As [`TournamentStore::acquire_tournament_lease`].
    async fn release_tournament_lease(&self, _id: Uuid, _fence: &Fence) -> Result<()> {
        Err(crate::StoreError::Unsupported(
            "tournament leases need PostgreSQL (cluster mode)",
        ))
    }

    /// The node holding tournament `id`'s unexpired director lease, if any.
    ///
    /// # Errors
    /// As [`TournamentStore::acquire_tournament_lease`].
    async fn tournament_lease_owner(&self, _id: Uuid) -> Result<Option<String>> {
        Err(crate::StoreError::Unsupported(
            "tournament leases need PostgreSQL (cluster mode)",
        ))
    }
}
