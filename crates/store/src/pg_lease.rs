//! PostgreSQL side of cluster mode (docs/CLUSTER.md, "Ownership: leases with an epoch"):
//! room leases and node heartbeats, each call one statement (or one short transaction)
//! on the pool, outside the group-commit writer. Expiry is always compared with the
//! database's `now()`, never with a node's clock.
//!
//! Row locks are always taken in `room_code` order (the writer's fence check, the
//! renewal), so transactions locking several lease rows never deadlock.
//!
//! Lock modes (PostgreSQL's row-level locks), chosen so that a renewal never waits for a
//! game write and a takeover always does:
//!
//! * the writer's fence check reads `owner, epoch` `FOR KEY SHARE`: it conflicts only
//!   with `FOR UPDATE`;
//! * every change of owner (an acquire, a claim) first locks the row `FOR UPDATE`, so
//!   it waits for every write transaction that checked the old fence, and a write that
//!   checks after it sees the new owner;
//! * a renewal locks and updates `expires_at` only, `FOR NO KEY UPDATE` (what an `UPDATE`
//!   of non-key columns takes anyway), which a fence check's `FOR KEY SHARE` does not
//!   block: however long the node's group commits take, its renewal does not wait for
//!   them. Releases and retirements are updates of the owner's own row, likewise.
//!
//! The renewal, the heartbeat, the sweeper's claims and node list and an adoption's
//! acquire run on the store's lease pool ([`crate::PostgresOptions::lease_connections`],
//! application name [`APPLICATION_NAME`]), not on the pool of the writer and the readers,
//! so game traffic never makes them wait for a connection (nor, by the lock modes
//! below, for a lock).
//!
//! Renewals and heartbeats commit with `synchronous_commit = off` (no WAL flush waited
//! for, so a disk busy with game commits does not slow them). That is safe: both only
//! ever push a deadline later, other transactions see the commit at once, and what a
//! database crash can undo is at most that extension: the lease then expires earlier
//! than its owner believes, another node may claim it, and the old owner's writes are
//! refused by their fence. Every write that matters (claims, acquires, fenced room
//! writes) keeps the synchronous commit, and flushing its WAL flushes every earlier
//! commit with it.

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, Postgres, Transaction};
use std::time::Duration;

/// The `application_name` of the lease pool's connections (`pg_stat_activity`).
pub(crate) const APPLICATION_NAME: &str = "parchis-store-lease";
/// Connections of a [`Keeper`]: the renewal's and the heartbeat's, which may run at once.
pub(crate) const KEEPER_CONNECTIONS: u32 = 2;

/// A pool of `size` lease connections (kept open, [`APPLICATION_NAME`], the statement
/// timeout of `pools`), bound to the tokio runtime this is awaited on: its connections'
/// sockets are registered there and its upkeep tasks run there.
pub(crate) async fn lease_pool(
    options: &PgConnectOptions,
    pools: crate::PostgresOptions,
    size: u32,
) -> Result<PgPool> {
    let timeout_ms = pools.lease_statement_timeout.as_millis().max(1).to_string();
    Ok(PgPoolOptions::new()
        .max_connections(size)
        .min_connections(size)
        .acquire_timeout(
            pools
                .lease_statement_timeout
                .max(Duration::from_millis(100)),
        )
        .connect_with(
            options
                .clone()
                .application_name(APPLICATION_NAME)
                // A node stopped (SIGSTOP, a VM pause) between a renewal's UPDATE and its
                // COMMIT would hold its lease rows locked FOR NO KEY UPDATE until it runs
                // again, and every other node's claims (FOR UPDATE SKIP LOCKED) would pass
                // its rooms by: the session ends after the same time idle in a transaction,
                // the renewal is rolled back and the leases expire as if it had not run.
                .options([
                    ("statement_timeout", timeout_ms.as_str()),
                    ("idle_in_transaction_session_timeout", timeout_ms.as_str()),
                ]),
        )
        .await?)
}

/// The renewal and the heartbeat on a pool of their own ([`crate::LeaseKeeper`],
/// docs/CLUSTER.md, "Lease thread").
pub(crate) struct Keeper {
    pool: PgPool,
}

impl Keeper {
    /// A keeper on `pool` (from [`lease_pool`], on the runtime that will drive it).
    pub(crate) fn new(pool: PgPool) -> Keeper {
        Keeper { pool }
    }
}

#[async_trait]
impl crate::LeaseKeeper for Keeper {
    async fn renew_leases(&self, node: &str, ttl_ms: i64, held: &[Fence]) -> Result<Vec<Fence>> {
        renew(&self.pool, node, ttl_ms, held).await
    }

    async fn heartbeat_node(&self, node: &NodeRecord) -> Result<()> {
        heartbeat(&self.pool, node).await
    }

    async fn clock_ms(&self) -> Result<Option<i64>> {
        let ms: i64 =
            sqlx::query_scalar("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")
                .fetch_one(&self.pool)
                .await?;
        Ok(Some(ms))
    }
}

/// A transaction whose commit does not wait for the WAL flush (see the module docs).
async fn begin_async_commit(pool: &PgPool) -> Result<Transaction<'static, Postgres>> {
    let mut tx = pool.begin().await?;
    sqlx::query("SET LOCAL synchronous_commit = off")
        .execute(&mut *tx)
        .await?;
    Ok(tx)
}

use crate::error::{is_foreign_key_violation, Result, StoreError};
use parchis_records::RoomRecord;
use parchis_records::{Fence, Lease, NodeInfo, NodeRecord};

/// `now() + $N` milliseconds, for a bigint parameter `$N`.
macro_rules! in_ms {
    ($n:literal) => {
        concat!("now() + $", $n, "::bigint * interval '1 millisecond'")
    };
}

fn fences(node: &str, rows: Vec<(String, i64)>) -> Vec<Fence> {
    let mut fences: Vec<Fence> = rows
        .into_iter()
        .map(|(room_code, epoch)| Fence {
            room_code,
            node: node.to_owned(),
            epoch,
        })
        .collect();
    fences.sort_by(|a, b| a.room_code.cmp(&b.room_code));
    fences
}

fn room_not_found(room_code: &str) -> impl FnOnce(sqlx::Error) -> StoreError + '_ {
    move |e| {
        if is_foreign_key_violation(&e) {
            StoreError::RoomNotFound(room_code.to_owned())
        } else {
            e.into()
        }
    }
}

pub(crate) async fn acquire(
    pool: &PgPool,
    room_code: &str,
    node: &str,
    ttl_ms: i64,
) -> Result<Option<Fence>> {
    // The row first FOR UPDATE: waits for every write that checked the current fence
    // (FOR KEY SHARE), then the upsert reads the latest version.
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT 1 FROM room_leases WHERE room_code = $1 FOR UPDATE")
        .bind(room_code)
        .fetch_optional(&mut *tx)
        .await?;
    let epoch: Option<i64> = sqlx::query_scalar(concat!(
        "INSERT INTO room_leases AS l (room_code, owner, epoch, expires_at) \
         VALUES ($1, $2, 1, ",
        in_ms!(3),
        ") ON CONFLICT (room_code) DO UPDATE SET owner = excluded.owner, \
         epoch = l.epoch + 1, expires_at = excluded.expires_at \
         WHERE l.expires_at < now() AND NOT l.retired RETURNING l.epoch"
    ))
    .bind(room_code)
    .bind(node)
    .bind(ttl_ms)
    .fetch_optional(&mut *tx)
    .await
    .map_err(room_not_found(room_code))?;
    tx.commit().await?;
    Ok(epoch.map(|epoch| Fence {
        room_code: room_code.to_owned(),
        node: node.to_owned(),
        epoch,
    }))
}

/// Creates `room` and its first lease (epoch 1) for `node` in one transaction.
pub(crate) async fn create_leased(
    pool: &PgPool,
    room: &RoomRecord,
    node: &str,
    ttl_ms: i64,
) -> Result<Fence> {
    use crate::writer::{Backend, WriteOp};
    let mut tx = pool.begin().await?;
    crate::pg_writer::PgBackend::apply(&mut tx, &WriteOp::CreateRoom(room.clone())).await?;
    sqlx::query(concat!(
        "INSERT INTO room_leases (room_code, owner, epoch, expires_at) VALUES ($1, $2, 1, ",
        in_ms!(3),
        ")"
    ))
    .bind(&room.code)
    .bind(node)
    .bind(ttl_ms)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Fence {
        room_code: room.code.clone(),
        node: node.to_owned(),
        epoch: 1,
    })
}

pub(crate) async fn claim_expired(
    pool: &PgPool,
    node: &str,
    ttl_ms: i64,
    limit: u32,
) -> Result<Vec<Fence>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    // Expired leases first; rows another sweeper (or a writer's fence check) has locked
    // are skipped, and a row claimed since this statement's snapshot is re-checked after
    // locking and dropped.
    let mut rows: Vec<(String, i64)> = sqlx::query_as(concat!(
        "WITH picked AS (SELECT l.room_code FROM room_leases l JOIN rooms r ON r.code = l.room_code \
         WHERE l.expires_at < now() AND NOT l.retired AND r.status <> 'finished' \
         ORDER BY l.expires_at LIMIT $3 FOR UPDATE OF l SKIP LOCKED) \
         UPDATE room_leases l SET owner = $1, epoch = l.epoch + 1, expires_at = ",
        in_ms!(2),
        " FROM picked WHERE l.room_code = picked.room_code RETURNING l.room_code, l.epoch"
    ))
    .bind(node)
    .bind(ttl_ms)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?;
    let left = i64::from(limit) - rows.len() as i64;
    if left > 0 {
        // Unfinished rooms that never had a lease: the first insert of a row wins, a
        // concurrent claimer's waits for it and then skips the room.
        let fresh: Vec<(String, i64)> = sqlx::query_as(concat!(
            "INSERT INTO room_leases (room_code, owner, epoch, expires_at) \
             SELECT r.code, $1, 1, ",
            in_ms!(2),
            " FROM rooms r WHERE r.status <> 'finished' \
             AND NOT EXISTS (SELECT 1 FROM room_leases l WHERE l.room_code = r.code) \
             ORDER BY r.created_at_ms, r.code LIMIT $3 \
             ON CONFLICT (room_code) DO NOTHING RETURNING room_code, epoch"
        ))
        .bind(node)
        .bind(ttl_ms)
        .bind(left)
        .fetch_all(pool)
        .await?;
        rows.extend(fresh);
    }
    if !rows.is_empty() {
        tracing::info!(
            node,
            claimed = rows.len(),
            "claimed rooms with expired or no leases"
        );
    }
    Ok(fences(node, rows))
}

pub(crate) async fn renew(
    pool: &PgPool,
    node: &str,
    ttl_ms: i64,
    held: &[Fence],
) -> Result<Vec<Fence>> {
    if held.is_empty() {
        return Ok(Vec::new());
    }
    let codes: Vec<&str> = held.iter().map(|f| f.room_code.as_str()).collect();
    let epochs: Vec<i64> = held.iter().map(|f| f.epoch).collect();
    // The rows are locked in room_code order first (as the writer's fence check does),
    // FOR NO KEY UPDATE: not blocked by the fence checks' FOR KEY SHARE (module docs).
    let mut tx = begin_async_commit(pool).await?;
    let rows: Vec<(String, i64)> = sqlx::query_as(concat!(
        "WITH held AS (SELECT * FROM UNNEST($3::text[], $4::bigint[]) AS h(room_code, epoch)), \
         mine AS (SELECT l.room_code, l.epoch FROM room_leases l \
         JOIN held h ON h.room_code = l.room_code AND h.epoch = l.epoch \
         WHERE l.owner = $1 AND NOT l.retired ORDER BY l.room_code FOR NO KEY UPDATE OF l) \
         UPDATE room_leases l SET expires_at = ",
        in_ms!(2),
        " FROM mine WHERE l.room_code = mine.room_code AND l.epoch = mine.epoch \
         AND l.owner = $1 RETURNING l.room_code, l.epoch"
    ))
    .bind(node)
    .bind(ttl_ms)
    .bind(codes)
    .bind(epochs)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(fences(node, rows))
}

/// Sets `set` on the lease row if `fence` still matches; whether it did.
async fn update_own(pool: &PgPool, fence: &Fence, set: &str) -> Result<bool> {
    let done = sqlx::query(&format!(
        "UPDATE room_leases SET {set} WHERE room_code = $1 AND owner = $2 AND epoch = $3"
    ))
    .bind(&fence.room_code)
    .bind(&fence.node)
    .bind(fence.epoch)
    .execute(pool)
    .await?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn release(pool: &PgPool, fence: &Fence) -> Result<bool> {
    // A millisecond back, so that even a transaction started in the same microsecond
    // finds it expired.
    update_own(pool, fence, "expires_at = now() - interval '1 millisecond'").await
}

pub(crate) async fn retire(pool: &PgPool, fence: &Fence) -> Result<bool> {
    update_own(
        pool,
        fence,
        "retired = true, expires_at = LEAST(expires_at, now())",
    )
    .await
}

/// `(expires_at - now())` or `(now() - seen_at)` in whole milliseconds.
macro_rules! ms_between {
    ($later:literal, $earlier:literal) => {
        concat!(
            "(EXTRACT(EPOCH FROM (",
            $later,
            " - ",
            $earlier,
            ")) * 1000)::bigint"
        )
    };
}

pub(crate) async fn lease(pool: &PgPool, room_code: &str) -> Result<Option<Lease>> {
    let row: Option<(String, i64, i64, bool)> = sqlx::query_as(concat!(
        "SELECT owner, epoch, ",
        ms_between!("expires_at", "now()"),
        ", retired FROM room_leases WHERE room_code = $1"
    ))
    .bind(room_code)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|(owner, epoch, expires_in_ms, retired)| Lease {
        room_code: room_code.to_owned(),
        owner,
        epoch,
        expires_in_ms,
        retired,
    }))
}

pub(crate) async fn heartbeat(pool: &PgPool, node: &NodeRecord) -> Result<()> {
    let mut tx = begin_async_commit(pool).await?;
    sqlx::query(
        "INSERT INTO cluster_nodes (node_id, rooms, draining, shedding, started_at, seen_at) \
         VALUES ($1, $2, $3, $4, now(), now()) ON CONFLICT (node_id) DO UPDATE SET \
         rooms = excluded.rooms, draining = excluded.draining, shedding = excluded.shedding, \
         seen_at = excluded.seen_at",
    )
    .bind(&node.node_id)
    .bind(i32::try_from(node.rooms).unwrap_or(i32::MAX))
    .bind(node.draining)
    .bind(node.shedding)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

pub(crate) async fn live_nodes(pool: &PgPool, max_age_ms: i64) -> Result<Vec<NodeInfo>> {
    let rows: Vec<(String, i32, bool, bool, i64)> = sqlx::query_as(concat!(
        "SELECT node_id, rooms, draining, shedding, ",
        ms_between!("now()", "seen_at"),
        " FROM cluster_nodes WHERE seen_at >= now() - $1::bigint * interval '1 millisecond' \
         ORDER BY rooms, node_id COLLATE \"C\""
    ))
    .bind(max_age_ms)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(node_id, rooms, draining, shedding, seen_ms_ago)| NodeInfo {
                node_id,
                rooms: u32::try_from(rooms).unwrap_or(0),
                draining,
                shedding,
                seen_ms_ago: seen_ms_ago.max(0),
            },
        )
        .collect())
}

pub(crate) async fn longest_expired_ms(pool: &PgPool) -> Result<Option<i64>> {
    // As `claim_expired` picks (the partial index on live leases' expiry, oldest first).
    let row: Option<(i64,)> = sqlx::query_as(concat!(
        "SELECT ",
        ms_between!("now()", "l.expires_at"),
        " FROM room_leases l JOIN rooms r ON r.code = l.room_code \
         WHERE l.expires_at < now() AND NOT l.retired AND r.status <> 'finished' \
         ORDER BY l.expires_at LIMIT 1"
    ))
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|(ms,)| ms.max(0)))
}

pub(crate) async fn forget_node(pool: &PgPool, node_id: &str) -> Result<()> {
    sqlx::query("DELETE FROM cluster_nodes WHERE node_id = $1")
        .bind(node_id)
        .execute(pool)
        .await?;
    Ok(())
}
