//! [`TournamentStore`] on SQLite and PostgreSQL: one body of SQL (`$N` placeholders, which
//! both take) written once in a macro and instantiated per backend, where only the type an
//! id is bound and read as differs (text on SQLite, `UUID` on PostgreSQL), and the fence
//! check (PostgreSQL's `room_leases` row read `FOR KEY SHARE`, as the room writer does;
//! SQLite has no leases).
//!
//! Appends do not go through the group-commit writer: a tournament writes a few entries a
//! minute. Each is its own transaction, durable when it commits.

use async_trait::async_trait;
use serde_json::Value;
use uuid::Uuid;

use crate::error::{is_unique_violation, Result, StoreError};
use crate::rows::GameId;
use crate::tournaments::{TournamentStore, MAX_TOURNAMENTS_LISTED};
use crate::writer::check_fence;
use crate::{PostgresStore, SqliteStore};
use parchis_records::Fence;

fn sqlite_id(id: Uuid) -> String {
    id.to_string()
}

fn pg_id(id: Uuid) -> Uuid {
    id
}

fn entry(text: &str, id: Uuid, seq: i64) -> Result<Value> {
    serde_json::from_str(text)
        .map_err(|e| StoreError::Corrupt(format!("entry {seq} of tournament {id}: {e}")))
}

fn text(value: &Value) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::InvalidWrite(e.to_string()))
}

/// SQLite has no leases: a fenced append is refused.
async fn sqlite_fence(
    _tx: &mut sqlx::SqliteConnection,
    _id: Uuid,
    fence: Option<&Fence>,
) -> Result<()> {
    match fence {
        None => Ok(()),
        Some(_) => Err(StoreError::Unsupported(
            "fenced tournament appends need PostgreSQL (cluster mode)",
        )),
    }
}

/// The tournament's lease row (`tournament_leases`, migration 0012), `FOR KEY SHARE` (a
/// takeover's `UPDATE` waits for this transaction, and this one sees the new owner after
/// it). The fence's `room_code` is the director's key; the row read is tournament `id`'s.
async fn pg_fence(tx: &mut sqlx::PgConnection, id: Uuid, fence: Option<&Fence>) -> Result<()> {
    let Some(fence) = fence else { return Ok(()) };
    let current = sqlx::query_as::<_, (String, i64)>(
        "SELECT owner, epoch FROM tournament_leases WHERE tournament_id = $1 FOR KEY SHARE",
    )
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    check_fence(fence, current.as_ref())
}

/// [`TournamentStore::acquire_tournament_lease`] on PostgreSQL.
async fn pg_acquire_lease(
    pool: &sqlx::PgPool,
    id: Uuid,
    node: &str,
    ttl_ms: i64,
) -> Result<Option<Fence>> {
    // One statement: insert the first lease, or take an expired one (epoch + 1),
    // or renew our own (epoch kept); a lease another node holds is left alone.
    let epoch = sqlx::query_scalar::<_, i64>(
        "INSERT INTO tournament_leases (tournament_id, owner, epoch, expires_at) \
                 VALUES ($1, $2, 1, now() + $3::bigint * interval '1 millisecond') \
                 ON CONFLICT (tournament_id) DO UPDATE SET \
                   epoch = CASE WHEN tournament_leases.owner = EXCLUDED.owner \
                                 AND tournament_leases.expires_at > now() \
                            THEN tournament_leases.epoch ELSE tournament_leases.epoch + 1 END, \
                   owner = EXCLUDED.owner, \
                   expires_at = EXCLUDED.expires_at \
                 WHERE tournament_leases.owner = EXCLUDED.owner \
                    OR tournament_leases.expires_at <= now() \
                 RETURNING epoch",
    )
    .bind(id)
    .bind(node)
    .bind(ttl_ms)
    .fetch_optional(pool)
    .await?;
    Ok(epoch.map(|epoch| Fence {
        room_code: id.to_string(),
        node: node.to_owned(),
        epoch,
    }))
}

/// [`TournamentStore::release_tournament_lease`] on PostgreSQL.
async fn pg_release_lease(pool: &sqlx::PgPool, id: Uuid, fence: &Fence) -> Result<()> {
    sqlx::query(
        "UPDATE tournament_leases SET expires_at = now() \
                 WHERE tournament_id = $1 AND owner = $2 AND epoch = $3",
    )
    .bind(id)
    .bind(&fence.node)
    .bind(fence.epoch)
    .execute(pool)
    .await?;
    Ok(())
}

/// [`TournamentStore::claimable_tournament_ids`] on PostgreSQL.
async fn pg_claimable(pool: &sqlx::PgPool, limit: u32) -> Result<Vec<Uuid>> {
    Ok(sqlx::query_scalar::<_, Uuid>(
        "SELECT t.id FROM tournaments t \
                 LEFT JOIN tournament_leases l ON l.tournament_id = t.id \
                 WHERE t.finished_at_ms IS NULL \
                   AND (l.tournament_id IS NULL OR l.expires_at <= now()) \
                 ORDER BY t.created_at_ms, t.id LIMIT $1",
    )
    .bind(i64::from(limit.min(MAX_TOURNAMENTS_LISTED)))
    .fetch_all(pool)
    .await?)
}

/// [`TournamentStore::tournament_lease_owner`] on PostgreSQL.
async fn pg_lease_owner(pool: &sqlx::PgPool, id: Uuid) -> Result<Option<String>> {
    Ok(sqlx::query_scalar::<_, String>(
        "SELECT owner FROM tournament_leases \
                 WHERE tournament_id = $1 AND expires_at > now()",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?)
}

macro_rules! sql_tournament_store {
    ($store:ty, $id:ident, $Id:ty, $fence:ident, |$me:ident| $pool:expr $(; $($extra:tt)*)?) => {
        #[async_trait]
        impl TournamentStore for $store {
            async fn create_tournament(
                &self,
                id: Uuid,
                created_at_ms: i64,
                first: &Value,
            ) -> Result<()> {
                let $me = self;
                let first = text(first)?;
                let mut tx = $pool.begin().await?;
                sqlx::query("INSERT INTO tournaments (id, created_at_ms) VALUES ($1, $2)")
                    .bind($id(id))
                    .bind(created_at_ms)
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| {
                        if is_unique_violation(&e) {
                            StoreError::TournamentExists(id)
                        } else {
                            e.into()
                        }
                    })?;
                sqlx::query(
                    "INSERT INTO tournament_entries (tournament_id, seq, entry) \
                     VALUES ($1, 1, $2)",
                )
                .bind($id(id))
                .bind(first)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn append_tournament(
                &self,
                id: Uuid,
                after: i64,
                entries: &[Value],
                fence: Option<&Fence>,
            ) -> Result<()> {
                let $me = self;
                let texts = entries.iter().map(text).collect::<Result<Vec<_>>>()?;
                let mut tx = $pool.begin().await?;
                $fence(&mut *tx, id, fence).await?;
                let exists = sqlx::query_scalar::<_, i64>(
                    "SELECT created_at_ms FROM tournaments WHERE id = $1",
                )
                .bind($id(id))
                .fetch_optional(&mut *tx)
                .await?;
                let last = sqlx::query_scalar::<_, Option<i64>>(
                    "SELECT MAX(seq) FROM tournament_entries WHERE tournament_id = $1",
                )
                .bind($id(id))
                .fetch_one(&mut *tx)
                .await?;
                if exists.is_none() || last != Some(after) {
                    return Err(StoreError::TournamentSeqMismatch {
                        tournament: id,
                        after,
                        last: exists.and(last),
                    });
                }
                for (i, t) in texts.into_iter().enumerate() {
                    sqlx::query(
                        "INSERT INTO tournament_entries (tournament_id, seq, entry) \
                         VALUES ($1, $2, $3)",
                    )
                    .bind($id(id))
                    .bind(after + 1 + i as i64)
                    .bind(t)
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| {
                        if is_unique_violation(&e) {
                            // A concurrent append won the race after our read.
                            StoreError::TournamentSeqMismatch {
                                tournament: id,
                                after,
                                last: None,
                            }
                        } else {
                            e.into()
                        }
                    })?;
                }
                tx.commit().await?;
                Ok(())
            }

            async fn tournament_log(&self, id: Uuid) -> Result<Vec<Value>> {
                let $me = self;
                sqlx::query_as::<_, (i64, String)>(
                    "SELECT seq, entry FROM tournament_entries WHERE tournament_id = $1 \
                     ORDER BY seq",
                )
                .bind($id(id))
                .fetch_all($pool)
                .await?
                .into_iter()
                .map(|(seq, t)| entry(&t, id, seq))
                .collect()
            }

            async fn finish_tournament(&self, id: Uuid, at_ms: i64) -> Result<()> {
                let $me = self;
                sqlx::query(
                    "UPDATE tournaments SET finished_at_ms = $2 \
                     WHERE id = $1 AND finished_at_ms IS NULL",
                )
                .bind($id(id))
                .bind(at_ms)
                .execute($pool)
                .await?;
                Ok(())
            }

            async fn unfinished_tournament_ids(&self, limit: u32) -> Result<Vec<Uuid>> {
                let $me = self;
                sqlx::query_scalar::<_, $Id>(
                    "SELECT id FROM tournaments WHERE finished_at_ms IS NULL \
                     ORDER BY created_at_ms, id LIMIT $1",
                )
                .bind(i64::from(limit.min(MAX_TOURNAMENTS_LISTED)))
                .fetch_all($pool)
                .await?
                .into_iter()
                .map(GameId::into_uuid)
                .collect()
            }

            async fn tournament_ids(&self, limit: u32) -> Result<Vec<Uuid>> {
                let $me = self;
                sqlx::query_scalar::<_, $Id>(
                    "SELECT id FROM tournaments ORDER BY created_at_ms DESC, id DESC LIMIT $1",
                )
                .bind(i64::from(limit.min(MAX_TOURNAMENTS_LISTED)))
                .fetch_all($pool)
                .await?
                .into_iter()
                .map(GameId::into_uuid)
                .collect()
            }

            $($($extra)*)?
        }
    };
}

sql_tournament_store!(SqliteStore, sqlite_id, String, sqlite_fence, |me| me.pool());

sql_tournament_store!(PostgresStore, pg_id, Uuid, pg_fence, |me| me
.pool_and_schema()
.0;
async fn acquire_tournament_lease(
    &self,
    id: Uuid,
    node: &str,
    ttl_ms: i64,
) -> Result<Option<Fence>> {
    pg_acquire_lease(self.pool_and_schema().0, id, node, ttl_ms).await
}
async fn tournament_lease_owner(&self, id: Uuid) -> Result<Option<String>> {
    pg_lease_owner(self.pool_and_schema().0, id).await
}
async fn release_tournament_lease(&self, id: Uuid, fence: &Fence) -> Result<()> {
    pg_release_lease(self.pool_and_schema().0, id, fence).await
}
async fn claimable_tournament_ids(&self, limit: u32) -> Result<Vec<Uuid>> {
    pg_claimable(self.pool_and_schema().0, limit).await
});
