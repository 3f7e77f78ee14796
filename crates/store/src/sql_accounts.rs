//! [`AccountStore`] on SQLite and PostgreSQL: one body of SQL (`$N` placeholders, which
//! both take) written once in a macro and instantiated per backend, where only the type an
//! id is bound and read as differs (text on SQLite, `UUID` on PostgreSQL).
//!
//! These writes do not go through the group-commit writer: they are rare (a sign-up, a
//! password change), each is its own transaction on a pooled connection, durable when it
//! commits (`synchronous = FULL` on SQLite).

use async_trait::async_trait;
use uuid::Uuid;

use crate::accounts::{AccountRecord, AccountStore, Deletion, NewAccount, SessionPool};
use crate::error::{is_unique_violation, Result, StoreError};
use crate::rows::{self, GameId, GameRow, GAME_COLUMNS};
use crate::{PostgresStore, SqliteStore};
use parchis_records::GameRecord;

/// `a.id, a.username, a.password_hash, a.created_at_ms, a.password_changed_at_ms,
/// a.deleted_at_ms, a.banned_at_ms`, matching [`AccountRow`].
const ACCOUNT_COLUMNS: &str = "a.id, a.username, a.password_hash, a.created_at_ms, \
     a.password_changed_at_ms, a.deleted_at_ms, a.banned_at_ms";

/// A row of [`ACCOUNT_COLUMNS`].
type AccountRow<Id> = (Id, String, String, i64, i64, Option<i64>, Option<i64>);

/// A bearer token's last use is written at most this often (ms).
const TOKEN_TOUCH_MS: i64 = 60_000;

fn account<Id: GameId>(row: AccountRow<Id>) -> Result<AccountRecord> {
    let (id, username, password_hash, created_at_ms, password_changed_at_ms, deleted, banned) = row;
    Ok(AccountRecord {
        id: id.into_uuid()?,
        username,
        password_hash,
        created_at_ms,
        password_changed_at_ms,
        deleted_at_ms: deleted,
        banned_at_ms: banned,
    })
}

/// The key's reservation, if one holds at `now_ms`.
fn taken(key: &str) -> StoreError {
    StoreError::UsernameTaken(key.to_owned())
}

fn sqlite_id(id: Uuid) -> String {
    id.to_string()
}

fn pg_id(id: Uuid) -> Uuid {
    id
}

macro_rules! sql_account_store {
    ($store:ty, $id:ident, $Id:ty, |$me:ident| $pool:expr, $session:expr, $begin:literal) => {
        #[async_trait]
        impl AccountStore for $store {
            async fn create_account(&self, a: &NewAccount) -> Result<()> {
                let $me = self;
                let mut tx = $pool.begin_with($begin).await?;
                let reserved = sqlx::query_scalar::<_, i64>(
                    "SELECT until_ms FROM username_reservations \
                     WHERE username_key = $1 AND until_ms > $2",
                )
                .bind(&a.username_key)
                .bind(a.created_at_ms)
                .fetch_optional(&mut *tx)
                .await?;
                if reserved.is_some() {
                    return Err(taken(&a.username_key));
                }
                sqlx::query(
                    "INSERT INTO accounts (id, username, username_key, password_hash, \
                     created_at_ms, password_changed_at_ms) VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind($id(a.id))
                .bind(&a.username)
                .bind(&a.username_key)
                .bind(&a.password_hash)
                .bind(a.created_at_ms)
                .bind(a.created_at_ms)
                .execute(&mut *tx)
                .await
                .map_err(|e| {
                    if is_unique_violation(&e) {
                        taken(&a.username_key)
                    } else {
                        e.into()
                    }
                })?;
                for hash in &a.recovery_code_hashes {
                    sqlx::query(
                        "INSERT INTO account_recovery_codes (account_id, code_hash) \
                         VALUES ($1, $2)",
                    )
                    .bind($id(a.id))
                    .bind(hash)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
                Ok(())
            }

            async fn account(&self, id: Uuid) -> Result<Option<AccountRecord>> {
                let $me = self;
                let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts a WHERE a.id = $1");
                sqlx::query_as::<_, AccountRow<$Id>>(&sql)
                    .bind($id(id))
                    .fetch_optional($pool)
                    .await?
                    .map(account)
                    .transpose()
            }

            async fn account_by_key(&self, key: &str) -> Result<Option<AccountRecord>> {
                let $me = self;
                let sql = format!(
                    "SELECT {ACCOUNT_COLUMNS} FROM accounts a \
                     WHERE a.username_key = $1 AND a.deleted_at_ms IS NULL"
                );
                sqlx::query_as::<_, AccountRow<$Id>>(&sql)
                    .bind(key)
                    .fetch_optional($pool)
                    .await?
                    .map(account)
                    .transpose()
            }

            async fn set_password(&self, id: Uuid, hash: &str, now_ms: i64) -> Result<bool> {
                let $me = self;
                let mut tx = $pool.begin_with($begin).await?;
                let done = sqlx::query(
                    "UPDATE accounts SET password_hash = $1, password_changed_at_ms = $2 \
                     WHERE id = $3 AND deleted_at_ms IS NULL",
                )
                .bind(hash)
                .bind(now_ms)
                .bind($id(id))
                .execute(&mut *tx)
                .await?;
                if done.rows_affected() == 0 {
                    return Ok(false);
                }
                sqlx::query("DELETE FROM account_tokens WHERE account_id = $1")
                    .bind($id(id))
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(true)
            }

            async fn use_recovery_code(
                &self,
                id: Uuid,
                code_hash: &str,
                hash: &str,
                now_ms: i64,
            ) -> Result<bool> {
                let $me = self;
                let mut tx = $pool.begin_with($begin).await?;
                let spent = sqlx::query(
                    "UPDATE account_recovery_codes SET used_at_ms = $1 \
                     WHERE account_id = $2 AND code_hash = $3 AND used_at_ms IS NULL",
                )
                .bind(now_ms)
                .bind($id(id))
                .bind(code_hash)
                .execute(&mut *tx)
                .await?;
                if spent.rows_affected() == 0 {
                    return Ok(false);
                }
                let done = sqlx::query(
                    "UPDATE accounts SET password_hash = $1, password_changed_at_ms = $2 \
                     WHERE id = $3 AND deleted_at_ms IS NULL",
                )
                .bind(hash)
                .bind(now_ms)
                .bind($id(id))
                .execute(&mut *tx)
                .await?;
                if done.rows_affected() == 0 {
                    return Ok(false);
                }
                sqlx::query("DELETE FROM account_tokens WHERE account_id = $1")
                    .bind($id(id))
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(true)
            }

            async fn recovery_codes_left(&self, id: Uuid) -> Result<u32> {
                let $me = self;
                let n: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM account_recovery_codes \
                     WHERE account_id = $1 AND used_at_ms IS NULL",
                )
                .bind($id(id))
                .fetch_one($pool)
                .await?;
                Ok(u32::try_from(n).unwrap_or(u32::MAX))
            }

            // Over 80 lines: one transaction's statements in order.
            async fn delete_account(&self, id: Uuid, d: &Deletion) -> Result<bool> {
                let $me = self;
                let mut tx = $pool.begin_with($begin).await?;
                let key: Option<String> = sqlx::query_scalar(
                    "SELECT username_key FROM accounts WHERE id = $1 AND deleted_at_ms IS NULL",
                )
                .bind($id(id))
                .fetch_optional(&mut *tx)
                .await?;
                let Some(key) = key else {
                    return Ok(false);
                };
                sqlx::query(
                    "INSERT INTO username_reservations (username_key, until_ms) VALUES ($1, $2) \
                     ON CONFLICT (username_key) DO UPDATE SET until_ms = excluded.until_ms",
                )
                .bind(&key)
                .bind(d.reserve_until_ms)
                .execute(&mut *tx)
                .await?;
                sqlx::query(
                    "UPDATE accounts SET username = $1, username_key = $2, password_hash = '', \
                     deleted_at_ms = $3 WHERE id = $4",
                )
                .bind(&d.neutral_name)
                .bind(format!("deleted:{id}"))
                .bind(d.now_ms)
                .bind($id(id))
                .execute(&mut *tx)
                .await?;
                for sql in [
                    "DELETE FROM account_tokens WHERE account_id = $1",
                    "DELETE FROM account_recovery_codes WHERE account_id = $1",
                    "DELETE FROM account_blocks WHERE account_id = $1",
                    "DELETE FROM account_blocks WHERE blocked_id = $1",
                ] {
                    sqlx::query(sql).bind($id(id)).execute(&mut *tx).await?;
                }
                sqlx::query(
                    "UPDATE seats SET display_name = $1, account_id = NULL WHERE account_id = $2",
                )
                .bind(&d.neutral_name)
                .bind($id(id))
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(true)
            }

            async fn rename_account(
                &self,
                id: Uuid,
                username: &str,
                key: &str,
                now_ms: i64,
            ) -> Result<bool> {
                let $me = self;
                let mut tx = $pool.begin_with($begin).await?;
                let reserved = sqlx::query_scalar::<_, i64>(
                    "SELECT until_ms FROM username_reservations \
                     WHERE username_key = $1 AND until_ms > $2",
                )
                .bind(key)
                .bind(now_ms)
                .fetch_optional(&mut *tx)
                .await?;
                if reserved.is_some() {
                    return Err(taken(key));
                }
                let done = sqlx::query(
                    "UPDATE accounts SET username = $1, username_key = $2 \
                     WHERE id = $3 AND deleted_at_ms IS NULL",
                )
                .bind(username)
                .bind(key)
                .bind($id(id))
                .execute(&mut *tx)
                .await
                .map_err(|e| if is_unique_violation(&e) { taken(key) } else { e.into() })?;
                if done.rows_affected() == 0 {
                    return Ok(false);
                }
                sqlx::query("UPDATE seats SET display_name = $1 WHERE account_id = $2")
                    .bind(username)
                    .bind($id(id))
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(true)
            }

            async fn set_banned(&self, id: Uuid, banned_at_ms: Option<i64>) -> Result<bool> {
                let $me = self;
                let mut tx = $pool.begin_with($begin).await?;
                let done = sqlx::query(
                    "UPDATE accounts SET banned_at_ms = $1 WHERE id = $2 AND deleted_at_ms IS NULL",
                )
                .bind(banned_at_ms)
                .bind($id(id))
                .execute(&mut *tx)
                .await?;
                if done.rows_affected() == 0 {
                    return Ok(false);
                }
                if banned_at_ms.is_some() {
                    sqlx::query("DELETE FROM account_tokens WHERE account_id = $1")
                        .bind($id(id))
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
                Ok(true)
            }

            async fn insert_token(&self, token_hash: &str, id: Uuid, now_ms: i64) -> Result<()> {
                let $me = self;
                sqlx::query(
                    "INSERT INTO account_tokens (token_hash, account_id, created_at_ms, used_at_ms) \
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(token_hash)
                .bind($id(id))
                .bind(now_ms)
                .bind(now_ms)
                .execute($pool)
                .await?;
                Ok(())
            }

            async fn token_account(
                &self,
                token_hash: &str,
                now_ms: i64,
                idle_ms: i64,
            ) -> Result<Option<AccountRecord>> {
                let $me = self;
                let sql = format!(
                    "SELECT {ACCOUNT_COLUMNS}, t.used_at_ms FROM account_tokens t \
                     JOIN accounts a ON a.id = t.account_id \
                     WHERE t.token_hash = $1 AND t.used_at_ms > $2 \
                     AND a.deleted_at_ms IS NULL AND a.banned_at_ms IS NULL"
                );
                type Row<Id> = (Id, String, String, i64, i64, Option<i64>, Option<i64>, i64);
                let row = sqlx::query_as::<_, Row<$Id>>(&sql)
                    .bind(token_hash)
                    .bind(now_ms.saturating_sub(idle_ms))
                    .fetch_optional($pool)
                    .await?;
                let Some((id, name, hash, created, changed, deleted, banned, used)) = row else {
                    return Ok(None);
                };
                if now_ms - used >= TOKEN_TOUCH_MS {
                    sqlx::query("UPDATE account_tokens SET used_at_ms = $1 WHERE token_hash = $2")
                        .bind(now_ms)
                        .bind(token_hash)
                        .execute($pool)
                        .await?;
                }
                account((id, name, hash, created, changed, deleted, banned)).map(Some)
            }

            async fn delete_token(&self, token_hash: &str) -> Result<()> {
                let $me = self;
                sqlx::query("DELETE FROM account_tokens WHERE token_hash = $1")
                    .bind(token_hash)
                    .execute($pool)
                    .await?;
                Ok(())
            }

            async fn block(&self, id: Uuid, blocked: Uuid, now_ms: i64) -> Result<()> {
                let $me = self;
                sqlx::query(
                    "INSERT INTO account_blocks (account_id, blocked_id, created_at_ms) \
                     VALUES ($1, $2, $3) ON CONFLICT (account_id, blocked_id) DO NOTHING",
                )
                .bind($id(id))
                .bind($id(blocked))
                .bind(now_ms)
                .execute($pool)
                .await?;
                Ok(())
            }

            async fn unblock(&self, id: Uuid, blocked: Uuid) -> Result<bool> {
                let $me = self;
                let done = sqlx::query(
                    "DELETE FROM account_blocks WHERE account_id = $1 AND blocked_id = $2",
                )
                .bind($id(id))
                .bind($id(blocked))
                .execute($pool)
                .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn blocked(&self, id: Uuid) -> Result<Vec<Uuid>> {
                let $me = self;
                let ids: Vec<$Id> = sqlx::query_scalar(
                    "SELECT blocked_id FROM account_blocks WHERE account_id = $1 \
                     ORDER BY created_at_ms, blocked_id",
                )
                .bind($id(id))
                .fetch_all($pool)
                .await?;
                ids.into_iter().map(GameId::into_uuid).collect()
            }

            async fn account_games(&self, id: Uuid, limit: u32) -> Result<Vec<GameRecord>> {
                let $me = self;
                let sql = format!(
                    "SELECT {GAME_COLUMNS} FROM games g WHERE g.room_code IN \
                     (SELECT s.room_code FROM seats s WHERE s.account_id = $1) \
                     ORDER BY g.created_at_ms DESC, g.id DESC LIMIT $2"
                );
                sqlx::query_as::<_, GameRow<$Id>>(&sql)
                    .bind($id(id))
                    .bind(i64::from(limit))
                    .fetch_all($pool)
                    .await?
                    .into_iter()
                    .map(rows::game)
                    .collect()
            }

            fn session_pool(&self) -> SessionPool {
                let $me = self;
                $session
            }
        }
    };
}

sql_account_store!(
    SqliteStore,
    sqlite_id,
    String,
    |me| me.pool(),
    SessionPool::Sqlite(me.pool().clone()),
    // The write lock at once: a deferred transaction that reads and then writes fails at
    // once with "database is locked" (SQLITE_BUSY, no busy timeout) when the group-commit
    // writer committed in between; an immediate one waits out the busy timeout.
    "BEGIN IMMEDIATE"
);

sql_account_store!(
    PostgresStore,
    pg_id,
    Uuid,
    |me| me.pool_and_schema().0,
    SessionPool::Postgres {
        pool: me.pool_and_schema().0.clone(),
        schema: me.pool_and_schema().1.to_owned(),
    },
    "BEGIN"
);
