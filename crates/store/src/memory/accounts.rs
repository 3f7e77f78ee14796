//! [`AccountStore`] on the memory store: the accounts' tables as maps inside the store's
//! one mutex ([`Inner::accounts`]), with the SQL backends' constraints and answers.

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;
use uuid::Uuid;

use super::inner::Inner;
use super::MemoryStore;
use crate::accounts::{AccountRecord, AccountStore, Deletion, NewAccount, SessionPool};
use crate::error::{Result, StoreError};
use parchis_records::GameRecord;

/// The accounts' tables.
#[derive(Clone, Default)]
pub(super) struct AccountTables {
    accounts: HashMap<Uuid, Account>,
    /// Username key → until (unix ms).
    reservations: HashMap<String, i64>,
    /// Token hash → its row.
    tokens: HashMap<String, Token>,
    /// `(account, blocked)` → created at (unix ms).
    blocks: BTreeMap<(Uuid, Uuid), i64>,
}

#[derive(Clone)]
struct Account {
    record: AccountRecord,
    key: String,
    /// Code hash → used at (unix ms).
    codes: HashMap<String, Option<i64>>,
}

#[derive(Clone)]
struct Token {
    account: Uuid,
    used_at_ms: i64,
}

/// A bearer token's last use is written at most this often (ms), as on SQL.
const TOKEN_TOUCH_MS: i64 = 60_000;

impl AccountTables {
    fn live(&mut self, id: Uuid) -> Option<&mut Account> {
        self.accounts
            .get_mut(&id)
            .filter(|a| a.record.deleted_at_ms.is_none())
    }

    /// Whether `key` is held by a live account other than `except`, or reserved at `now`.
    fn is_taken(&self, key: &str, except: Option<Uuid>, now_ms: i64) -> bool {
        self.reservations
            .get(key)
            .is_some_and(|until| *until > now_ms)
            || self.accounts.values().any(|a| {
                a.key == key && a.record.deleted_at_ms.is_none() && Some(a.record.id) != except
            })
    }

    fn revoke_tokens(&mut self, id: Uuid) {
        self.tokens.retain(|_, t| t.account != id);
    }
}

impl Inner {
    fn rename_seats(&mut self, id: Uuid, name: &str, keep_account: bool) {
        for seat in self.seats.values_mut() {
            if seat.account_id == Some(id) {
                name.clone_into(&mut seat.display_name);
                if !keep_account {
                    seat.account_id = None;
                }
            }
        }
    }
}

#[async_trait]
impl AccountStore for MemoryStore {
    async fn create_account(&self, a: &NewAccount) -> Result<()> {
        let mut inner = self.lock()?;
        let t = &mut inner.accounts;
        if t.is_taken(&a.username_key, None, a.created_at_ms) || t.accounts.contains_key(&a.id) {
            return Err(StoreError::UsernameTaken(a.username_key.clone()));
        }
        let record = AccountRecord {
            id: a.id,
            username: a.username.clone(),
            password_hash: a.password_hash.clone(),
            created_at_ms: a.created_at_ms,
            password_changed_at_ms: a.created_at_ms,
            deleted_at_ms: None,
            banned_at_ms: None,
        };
        let codes = a
            .recovery_code_hashes
            .iter()
            .map(|h| (h.clone(), None))
            .collect();
        t.accounts.insert(
            a.id,
            Account {
                record,
                key: a.username_key.clone(),
                codes,
            },
        );
        Ok(())
    }

    async fn account(&self, id: Uuid) -> Result<Option<AccountRecord>> {
        let inner = self.lock()?;
        Ok(inner.accounts.accounts.get(&id).map(|a| a.record.clone()))
    }

    async fn account_by_key(&self, key: &str) -> Result<Option<AccountRecord>> {
        let inner = self.lock()?;
        Ok(inner
            .accounts
            .accounts
            .values()
            .find(|a| a.key == key && a.record.deleted_at_ms.is_none())
            .map(|a| a.record.clone()))
    }

    async fn set_password(&self, id: Uuid, hash: &str, now_ms: i64) -> Result<bool> {
        let mut inner = self.lock()?;
        let t = &mut inner.accounts;
        let Some(a) = t.live(id) else {
            return Ok(false);
        };
        hash.clone_into(&mut a.record.password_hash);
        a.record.password_changed_at_ms = now_ms;
        t.revoke_tokens(id);
        Ok(true)
    }

    async fn use_recovery_code(
        &self,
        id: Uuid,
        code_hash: &str,
        hash: &str,
        now_ms: i64,
    ) -> Result<bool> {
        let mut inner = self.lock()?;
        let t = &mut inner.accounts;
        let Some(a) = t.live(id) else {
            return Ok(false);
        };
        match a.codes.get_mut(code_hash) {
            Some(used @ None) => *used = Some(now_ms),
            _ => return Ok(false),
        }
        hash.clone_into(&mut a.record.password_hash);
        a.record.password_changed_at_ms = now_ms;
        t.revoke_tokens(id);
        Ok(true)
    }

    async fn recovery_codes_left(&self, id: Uuid) -> Result<u32> {
        let inner = self.lock()?;
        let left = inner.accounts.accounts.get(&id).map_or(0, |a| {
            a.codes.values().filter(|used| used.is_none()).count()
        });
        Ok(u32::try_from(left).unwrap_or(u32::MAX))
    }

    async fn delete_account(&self, id: Uuid, d: &Deletion) -> Result<bool> {
        let mut inner = self.lock()?;
        let t = &mut inner.accounts;
        let Some(a) = t.live(id) else {
            return Ok(false);
        };
        let key = std::mem::replace(&mut a.key, format!("deleted:{id}"));
        d.neutral_name.clone_into(&mut a.record.username);
        a.record.password_hash.clear();
        a.record.deleted_at_ms = Some(d.now_ms);
        a.codes.clear();
        t.reservations.insert(key, d.reserve_until_ms);
        t.revoke_tokens(id);
        t.blocks.retain(|(by, of), _| *by != id && *of != id);
        inner.rename_seats(id, &d.neutral_name, false);
        Ok(true)
    }

    async fn rename_account(
        &self,
        id: Uuid,
        username: &str,
        key: &str,
        now_ms: i64,
    ) -> Result<bool> {
        let mut inner = self.lock()?;
        let t = &mut inner.accounts;
        if t.is_taken(key, Some(id), now_ms) {
            return Err(StoreError::UsernameTaken(key.to_owned()));
        }
        let Some(a) = t.live(id) else {
            return Ok(false);
        };
        username.clone_into(&mut a.record.username);
        key.clone_into(&mut a.key);
        inner.rename_seats(id, username, true);
        Ok(true)
    }

    async fn set_banned(&self, id: Uuid, banned_at_ms: Option<i64>) -> Result<bool> {
        let mut inner = self.lock()?;
        let t = &mut inner.accounts;
        let Some(a) = t.live(id) else {
            return Ok(false);
        };
        a.record.banned_at_ms = banned_at_ms;
        if banned_at_ms.is_some() {
            t.revoke_tokens(id);
        }
        Ok(true)
    }

    async fn insert_token(&self, token_hash: &str, id: Uuid, now_ms: i64) -> Result<()> {
        let mut inner = self.lock()?;
        inner.accounts.tokens.insert(
            token_hash.to_owned(),
            Token {
                account: id,
                used_at_ms: now_ms,
            },
        );
        Ok(())
    }

    async fn token_account(
        &self,
        token_hash: &str,
        now_ms: i64,
        idle_ms: i64,
    ) -> Result<Option<AccountRecord>> {
        let mut inner = self.lock()?;
        let t = &mut inner.accounts;
        let Some(token) = t.tokens.get_mut(token_hash) else {
            return Ok(None);
        };
        if token.used_at_ms <= now_ms.saturating_sub(idle_ms) {
            return Ok(None);
        }
        if now_ms - token.used_at_ms >= TOKEN_TOUCH_MS {
            token.used_at_ms = now_ms;
        }
        let id = token.account;
        Ok(t.accounts
            .get(&id)
            .map(|a| a.record.clone())
            .filter(AccountRecord::is_active))
    }

    async fn delete_token(&self, token_hash: &str) -> Result<()> {
        self.lock()?.accounts.tokens.remove(token_hash);
        Ok(())
    }

    async fn block(&self, id: Uuid, blocked: Uuid, now_ms: i64) -> Result<()> {
        let mut inner = self.lock()?;
        let t = &mut inner.accounts;
        if !t.accounts.contains_key(&id) || !t.accounts.contains_key(&blocked) {
            // The SQL tables' foreign keys refuse it too.
            return Err(StoreError::Corrupt(format!("no account {id} or {blocked}")));
        }
        t.blocks.entry((id, blocked)).or_insert(now_ms);
        Ok(())
    }

    async fn unblock(&self, id: Uuid, blocked: Uuid) -> Result<bool> {
        Ok(self
            .lock()?
            .accounts
            .blocks
            .remove(&(id, blocked))
            .is_some())
    }

    async fn blocked(&self, id: Uuid) -> Result<Vec<Uuid>> {
        let inner = self.lock()?;
        let mut blocked: Vec<(i64, Uuid)> = inner
            .accounts
            .blocks
            .iter()
            .filter(|((by, _), _)| *by == id)
            .map(|((_, of), at)| (*at, *of))
            .collect();
        blocked.sort();
        Ok(blocked.into_iter().map(|(_, of)| of).collect())
    }

    async fn account_games(&self, id: Uuid, limit: u32) -> Result<Vec<GameRecord>> {
        let inner = self.lock()?;
        let rooms: std::collections::HashSet<&str> = inner
            .seats
            .values()
            .filter(|s| s.account_id == Some(id))
            .map(|s| s.room_code.as_str())
            .collect();
        let mut games: Vec<GameRecord> = inner
            .games
            .values()
            .filter(|g| rooms.contains(g.room_code.as_str()))
            .cloned()
            .collect();
        games.sort_by_key(|g| std::cmp::Reverse((g.created_at_ms, g.id)));
        games.truncate(limit as usize);
        Ok(games)
    }

    fn session_pool(&self) -> SessionPool {
        SessionPool::Memory
    }
}
