//! Quick pairing's pool in the database (issue 26, `docs/ACCOUNTS.md` "Quick pairing",
//! cluster mode): the [`PairingStore`] interface and its PostgreSQL implementation
//! (migration `postgres/0014_pairing_tickets.sql`). Every node enters, polls and cancels
//! tickets here; the one node holding the `pairing` lease runs the matcher, whose writes
//! carry the lease's [`Fence`] and are refused ([`StoreError::Fenced`]) once another node
//! holds it. A ticket's bookkeeping is the server's: the store keeps it as JSON
//! (`body`), with the account, whether it waits (one waiting ticket per account: a
//! unique index) and when it was last polled beside it.
//!
//! Single-node servers (SQLite, memory) keep their pool in memory: [`crate::Store::pairing`]
//! is `None` there.

use async_trait::async_trait;
use parchis_records::Fence;
use serde_json::Value;
use uuid::Uuid;

use crate::error::{is_unique_violation, Result, StoreError};
use crate::writer::check_fence;
use crate::PostgresStore;

/// The lease row's name and the fence's key.
pub const PAIRING_LEASE: &str = "pairing";

/// One stored ticket.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredTicket {
    /// The ticket (32 hex digits).
    pub id: String,
    /// The logged-in player's account; `None` for a guest.
    pub account: Option<Uuid>,
    /// Waiting in its pool (not paired, not expired).
    pub waiting: bool,
    /// When it was last polled (unix ms).
    pub polled_ms: i64,
    /// The server's bookkeeping of the ticket.
    pub body: Value,
}

/// What [`PairingStore::enter_pairing`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entered {
    /// Stored.
    Stored,
    /// The account has a waiting ticket already (nothing stored).
    AlreadyWaiting,
    /// The pool holds `max` tickets (nothing stored).
    Full,
}

/// Quick pairing's tickets and its matcher's lease. Every call is one transaction.
#[async_trait]
pub trait PairingStore: Send + Sync {
    /// Stores a new ticket, unless its account waits already or `max` tickets are held.
    async fn enter_pairing(&self, ticket: &StoredTicket, max: usize) -> Result<Entered>;

    /// Ticket `id`, marked polled at `now_ms` (never moved back); `None` if unknown.
    async fn poll_pairing(&self, id: &str, now_ms: i64) -> Result<Option<StoredTicket>>;

    /// Forgets ticket `id`; whether it was held.
    async fn leave_pairing(&self, id: &str) -> Result<bool>;

    /// Every ticket.
    async fn pairing_tickets(&self) -> Result<Vec<StoredTicket>>;

    /// The matcher's changes, in one transaction fenced by the pairing lease: `insert`
    /// new tickets (a player put back in the pool), `update` the state and body of
    /// tickets still held (one that left meanwhile stays gone; `polled_ms` only moves
    /// forward), `delete` tickets `(id, polled_ms)` not polled since `polled_ms` (a
    /// ticket polled meanwhile stays).
    ///
    /// # Errors
    /// [`StoreError::Fenced`] once another node holds the lease (nothing written).
    async fn write_pairing(
        &self,
        fence: &Fence,
        insert: &[StoredTicket],
        update: &[StoredTicket],
        delete: &[(String, i64)],
    ) -> Result<()>;

    /// Acquires or renews the matcher's lease for `node`, for `ttl_ms` from the
    /// database's clock: taken when free or expired (epoch + 1), renewed (epoch kept)
    /// while `node` holds it; `None` while another node holds it.
    async fn acquire_pairing_lease(&self, node: &str, ttl_ms: i64) -> Result<Option<Fence>>;
}

type Row = (String, Option<Uuid>, bool, i64, String);

fn ticket(row: Row) -> Result<StoredTicket> {
    let (id, account, waiting, polled_ms, body) = row;
    let body = serde_json::from_str(&body)
        .map_err(|e| StoreError::Corrupt(format!("pairing ticket {id}: {e}")))?;
    Ok(StoredTicket {
        id,
        account,
        waiting,
        polled_ms,
        body,
    })
}

fn text(value: &Value) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::InvalidWrite(e.to_string()))
}

const COLUMNS: &str = "id, account_id, waiting, polled_ms, body";

#[async_trait]
impl PairingStore for PostgresStore {
    async fn enter_pairing(&self, t: &StoredTicket, max: usize) -> Result<Entered> {
        let mut tx = self.pool_and_schema().0.begin().await?;
        let held: i64 = sqlx::query_scalar("SELECT count(*) FROM pairing_tickets")
            .fetch_one(&mut *tx)
            .await?;
        if usize::try_from(held).unwrap_or(usize::MAX) >= max {
            return Ok(Entered::Full);
        }
        let inserted = sqlx::query(
            "INSERT INTO pairing_tickets (id, account_id, waiting, polled_ms, body) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&t.id)
        .bind(t.account)
        .bind(t.waiting)
        .bind(t.polled_ms)
        .bind(text(&t.body)?)
        .execute(&mut *tx)
        .await;
        match inserted {
            Ok(_) => {
                tx.commit().await?;
                Ok(Entered::Stored)
            }
            Err(e) if is_unique_violation(&e) => Ok(Entered::AlreadyWaiting),
            Err(e) => Err(e.into()),
        }
    }

    async fn poll_pairing(&self, id: &str, now_ms: i64) -> Result<Option<StoredTicket>> {
        let row = sqlx::query_as::<_, Row>(&format!(
            "UPDATE pairing_tickets SET polled_ms = GREATEST(polled_ms, $2) \
             WHERE id = $1 RETURNING {COLUMNS}"
        ))
        .bind(id)
        .bind(now_ms)
        .fetch_optional(self.pool_and_schema().0)
        .await?;
        row.map(ticket).transpose()
    }

    async fn leave_pairing(&self, id: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM pairing_tickets WHERE id = $1")
            .bind(id)
            .execute(self.pool_and_schema().0)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn pairing_tickets(&self) -> Result<Vec<StoredTicket>> {
        sqlx::query_as::<_, Row>(&format!(
            "SELECT {COLUMNS} FROM pairing_tickets ORDER BY id"
        ))
        .fetch_all(self.pool_and_schema().0)
        .await?
        .into_iter()
        .map(ticket)
        .collect()
    }

    async fn write_pairing(
        &self,
        fence: &Fence,
        insert: &[StoredTicket],
        update: &[StoredTicket],
        delete: &[(String, i64)],
    ) -> Result<()> {
        let mut tx = self.pool_and_schema().0.begin().await?;
        let current = sqlx::query_as::<_, (String, i64)>(
            "SELECT owner, epoch FROM pairing_lease WHERE name = $1 FOR KEY SHARE",
        )
        .bind(PAIRING_LEASE)
        .fetch_optional(&mut *tx)
        .await?;
        check_fence(fence, current.as_ref())?;
        for (id, polled_ms) in delete {
            sqlx::query("DELETE FROM pairing_tickets WHERE id = $1 AND polled_ms <= $2")
                .bind(id)
                .bind(polled_ms)
                .execute(&mut *tx)
                .await?;
        }
        for t in update {
            sqlx::query(
                "UPDATE pairing_tickets SET waiting = $2, body = $3, \
                 polled_ms = GREATEST(polled_ms, $4) WHERE id = $1",
            )
            .bind(&t.id)
            .bind(t.waiting)
            .bind(text(&t.body)?)
            .bind(t.polled_ms)
            .execute(&mut *tx)
            .await?;
        }
        for t in insert {
            sqlx::query(
                "INSERT INTO pairing_tickets (id, account_id, waiting, polled_ms, body) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            )
            .bind(&t.id)
            .bind(t.account)
            .bind(t.waiting)
            .bind(t.polled_ms)
            .bind(text(&t.body)?)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn acquire_pairing_lease(&self, node: &str, ttl_ms: i64) -> Result<Option<Fence>> {
        // One statement, as a tournament's lease (`sql_tournaments.rs`).
        let epoch = sqlx::query_scalar::<_, i64>(
            "INSERT INTO pairing_lease (name, owner, epoch, expires_at) \
             VALUES ($1, $2, 1, now() + $3::bigint * interval '1 millisecond') \
             ON CONFLICT (name) DO UPDATE SET \
               epoch = CASE WHEN pairing_lease.owner = EXCLUDED.owner \
                             AND pairing_lease.expires_at > now() \
                        THEN pairing_lease.epoch ELSE pairing_lease.epoch + 1 END, \
               owner = EXCLUDED.owner, \
               expires_at = EXCLUDED.expires_at \
             WHERE pairing_lease.owner = EXCLUDED.owner \
                OR pairing_lease.expires_at <= now() \
             RETURNING epoch",
        )
        .bind(PAIRING_LEASE)
        .bind(node)
        .bind(ttl_ms)
        .fetch_optional(self.pool_and_schema().0)
        .await?;
        Ok(epoch.map(|epoch| Fence {
            room_code: PAIRING_LEASE.to_owned(),
            node: node.to_owned(),
            epoch,
        }))
    }
}
