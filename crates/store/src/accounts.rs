//! Accounts (issue 26): the [`AccountStore`] interface, its records, and the pool a
//! session store shares with the backend ([`SessionPool`]).
//!
//! The store knows nothing about usernames' rules or passwords: the caller gives it the
//! username's key (its confusables skeleton, so that two names with one key are one name)
//! and the password's Argon2id hash, and secrets (recovery codes, bearer tokens) only as
//! their SHA-256 hashes ([`hash_token`](crate::hash_token)). All times are unix
//! milliseconds given by the caller, so every backend (and every node) decides the same.

use async_trait::async_trait;
use uuid::Uuid;

use crate::error::Result;
use parchis_records::GameRecord;

/// One row of `accounts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountRecord {
    /// Primary key, a UUID v7 (other tables, the ratings' among them, name accounts by it).
    pub id: Uuid,
    /// The username as typed at sign-up (or the neutral name once deleted).
    pub username: String,
    /// The Argon2id PHC string of the password (empty once deleted). Never logged.
    pub password_hash: String,
    /// Sign-up time (unix ms).
    pub created_at_ms: i64,
    /// When the password was last set (unix ms); at sign-up, `created_at_ms`.
    pub password_changed_at_ms: i64,
    /// When the account was deleted (unix ms), `None` while it lives.
    pub deleted_at_ms: Option<i64>,
    /// When an admin banned it (unix ms), `None` when not banned.
    pub banned_at_ms: Option<i64>,
}

impl AccountRecord {
    /// Neither deleted nor banned: may log in and be seen.
    pub fn is_active(&self) -> bool {
        self.deleted_at_ms.is_none() && self.banned_at_ms.is_none()
    }
}

/// What [`AccountStore::create_account`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAccount {
    /// Its id (UUID v7, made by the caller).
    pub id: Uuid,
    /// The username as typed.
    pub username: String,
    /// The username's key (see the module docs); unique among live accounts.
    pub username_key: String,
    /// The Argon2id PHC string of the password.
    pub password_hash: String,
    /// Now (unix ms).
    pub created_at_ms: i64,
    /// Lowercase hex SHA-256 of each one-time recovery code (ten at sign-up).
    pub recovery_code_hashes: Vec<String>,
}

/// How [`AccountStore::delete_account`] scrubs an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deletion {
    /// Now (unix ms).
    pub now_ms: i64,
    /// Until when (unix ms) its username's key may not be taken again.
    pub reserve_until_ms: i64,
    /// The neutral name its row and its seats take ("deleted player").
    pub neutral_name: String,
}

/// The database pool a session store can share with this backend
/// ([`AccountStore::session_pool`]): tower-sessions-sqlx-store's table `tower_sessions` is
/// created by this crate's migrations.
#[derive(Debug, Clone)]
pub enum SessionPool {
    /// No database: sessions must live in the process (the memory store).
    Memory,
    /// The SQLite store's pool.
    Sqlite(sqlx::SqlitePool),
    /// The PostgreSQL store's pool and the schema its tables are in (the first of its
    /// `search_path`: `tower_sessions` lives there).
    Postgres {
        /// The main pool.
        pool: sqlx::PgPool,
        /// `current_schema()` when the store opened.
        schema: String,
    },
}

/// Accounts, their recovery codes, bearer tokens, blocks and reserved usernames.
///
/// Every write is one transaction, durable when it returns `Ok`.
#[async_trait]
pub trait AccountStore: Send + Sync {
    /// Inserts an account and its recovery codes.
    ///
    /// # Errors
    /// [`StoreError::UsernameTaken`](crate::StoreError::UsernameTaken) when a live account
    /// has the same key, or a deleted one's reservation of it has not ended by
    /// `created_at_ms` (nothing written).
    async fn create_account(&self, account: &NewAccount) -> Result<()>;

    /// The account with this id, whatever its state.
    async fn account(&self, id: Uuid) -> Result<Option<AccountRecord>>;

    /// The live (not deleted) account with this username key, banned or not.
    async fn account_by_key(&self, username_key: &str) -> Result<Option<AccountRecord>>;

    /// Sets a live account's password hash and `password_changed_at_ms`, and revokes its
    /// bearer tokens (the caller's cookie sessions fall by their auth hash). `false`: no
    /// live account with this id.
    async fn set_password(&self, id: Uuid, password_hash: &str, now_ms: i64) -> Result<bool>;

    /// Spends one unused recovery code of a live account and sets its password, as
    /// [`set_password`](AccountStore::set_password), in one transaction. `false` (nothing
    /// written): no such unused code for this account.
    async fn use_recovery_code(
        &self,
        id: Uuid,
        code_hash: &str,
        password_hash: &str,
        now_ms: i64,
    ) -> Result<bool>;

    /// How many unused recovery codes the account has.
    async fn recovery_codes_left(&self, id: Uuid) -> Result<u32>;

    /// Deletes a live account in one transaction: reserves its username key until
    /// `reserve_until_ms`, scrubs its row (neutral name, key `deleted:<id>`, no password),
    /// drops its tokens, recovery codes and blocks (both ways), and gives its seats the
    /// neutral name and no account, so that its games stay readable. `false`: no live
    /// account with this id.
    async fn delete_account(&self, id: Uuid, deletion: &Deletion) -> Result<bool>;

    /// Renames a live account (its seats too); the old key is not reserved.
    /// `false`: no live account with this id.
    ///
    /// # Errors
    /// [`StoreError::UsernameTaken`](crate::StoreError::UsernameTaken) as
    /// [`create_account`](AccountStore::create_account) (another account's key, or a
    /// reservation not ended at `now_ms`).
    async fn rename_account(
        &self,
        id: Uuid,
        username: &str,
        username_key: &str,
        now_ms: i64,
    ) -> Result<bool>;

    /// Bans (`Some(now)`) or unbans (`None`) a live account; a ban also revokes its bearer
    /// tokens. `false`: no live account with this id.
    async fn set_banned(&self, id: Uuid, banned_at_ms: Option<i64>) -> Result<bool>;

    /// Stores a bearer token's hash for an account.
    async fn insert_token(&self, token_hash: &str, id: Uuid, now_ms: i64) -> Result<()>;

    /// The active (not deleted, not banned) account of a bearer token used within
    /// `idle_ms` of `now_ms`; marks it used (at most once a minute, to keep reads cheap).
    async fn token_account(
        &self,
        token_hash: &str,
        now_ms: i64,
        idle_ms: i64,
    ) -> Result<Option<AccountRecord>>;

    /// Forgets a bearer token (log-out); no error if unknown.
    async fn delete_token(&self, token_hash: &str) -> Result<()>;

    /// Records that `id` blocks `blocked` (again: no change).
    async fn block(&self, id: Uuid, blocked: Uuid, now_ms: i64) -> Result<()>;

    /// Lifts a block; `false` when there was none.
    async fn unblock(&self, id: Uuid, blocked: Uuid) -> Result<bool>;

    /// The accounts `id` blocks, oldest block first.
    async fn blocked(&self, id: Uuid) -> Result<Vec<Uuid>>;

    /// Games of rooms where one of the account's seats is stored, newest first
    /// (`created_at_ms`, then id, descending), at most `limit`.
    async fn account_games(&self, id: Uuid, limit: u32) -> Result<Vec<GameRecord>>;

    /// The pool a session store may share (see [`SessionPool`]).
    fn session_pool(&self) -> SessionPool;
}
