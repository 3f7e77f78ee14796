//! The memory store's accounts: the methods of `AccountStore` on its tables
//! ([`Inner::accounts`], maps inside the store's one mutex), with the SQL backends'
//! constraints and answers.

use uuid::Uuid;

use super::inner::{Account, AccountTables, Inner, Token};
use crate::accounts::{AccountRecord, Deletion, NewAccount};
use crate::error::{Result, StoreError};
use parchis_records::GameRecord;

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

/// The memory store's [`AccountStore`](crate::AccountStore) methods, on its tables (the
/// trait's impl in the parent module locks and calls them).
impl Inner {
    pub(super) fn create_account(&mut self, a: &NewAccount) -> Result<()> {
        let t = &mut self.accounts;
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

    pub(super) fn account(&mut self, id: Uuid) -> Result<Option<AccountRecord>> {
        Ok(self.accounts.accounts.get(&id).map(|a| a.record.clone()))
    }

    pub(super) fn account_by_key(&mut self, key: &str) -> Result<Option<AccountRecord>> {
        Ok(self
            .accounts
            .accounts
            .values()
            .find(|a| a.key == key && a.record.deleted_at_ms.is_none())
            .map(|a| a.record.clone()))
    }

    pub(super) fn set_password(&mut self, id: Uuid, hash: &str, now_ms: i64) -> Result<bool> {
        let t = &mut self.accounts;
        let Some(a) = t.live(id) else {
            return Ok(false);
        };
        hash.clone_into(&mut a.record.password_hash);
        a.record.password_changed_at_ms = now_ms;
        t.revoke_tokens(id);
        Ok(true)
    }

    pub(super) fn use_recovery_code(
        &mut self,
        id: Uuid,
        code_hash: &str,
        hash: &str,
        now_ms: i64,
    ) -> Result<bool> {
        let t = &mut self.accounts;
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

    pub(super) fn recovery_codes_left(&mut self, id: Uuid) -> Result<u32> {
        let left = self.accounts.accounts.get(&id).map_or(0, |a| {
            a.codes.values().filter(|used| used.is_none()).count()
        });
        Ok(u32::try_from(left).unwrap_or(u32::MAX))
    }

    pub(super) fn delete_account(&mut self, id: Uuid, d: &Deletion) -> Result<bool> {
        let t = &mut self.accounts;
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
        self.rename_seats(id, &d.neutral_name, false);
        Ok(true)
    }

    pub(super) fn rename_account(
        &mut self,
        id: Uuid,
        username: &str,
        key: &str,
        now_ms: i64,
    ) -> Result<bool> {
        let t = &mut self.accounts;
        if t.is_taken(key, Some(id), now_ms) {
            return Err(StoreError::UsernameTaken(key.to_owned()));
        }
        let Some(a) = t.live(id) else {
            return Ok(false);
        };
        username.clone_into(&mut a.record.username);
        key.clone_into(&mut a.key);
        self.rename_seats(id, username, true);
        Ok(true)
    }

    pub(super) fn set_banned(&mut self, id: Uuid, banned_at_ms: Option<i64>) -> Result<bool> {
        let t = &mut self.accounts;
        let Some(a) = t.live(id) else {
            return Ok(false);
        };
        a.record.banned_at_ms = banned_at_ms;
        if banned_at_ms.is_some() {
            t.revoke_tokens(id);
        }
        Ok(true)
    }

    pub(super) fn insert_token(&mut self, token_hash: &str, id: Uuid, now_ms: i64) -> Result<()> {
        self.accounts.tokens.insert(
            token_hash.to_owned(),
            Token {
                account: id,
                used_at_ms: now_ms,
            },
        );
        Ok(())
    }

    pub(super) fn token_account(
        &mut self,
        token_hash: &str,
        now_ms: i64,
        idle_ms: i64,
    ) -> Result<Option<AccountRecord>> {
        let t = &mut self.accounts;
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

    pub(super) fn delete_token(&mut self, token_hash: &str) -> Result<()> {
        self.accounts.tokens.remove(token_hash);
        Ok(())
    }

    pub(super) fn block(&mut self, id: Uuid, blocked: Uuid, now_ms: i64) -> Result<()> {
        let t = &mut self.accounts;
        if !t.accounts.contains_key(&id) || !t.accounts.contains_key(&blocked) {
            // The SQL tables' foreign keys refuse it too.
            return Err(StoreError::Corrupt(format!("no account {id} or {blocked}")));
        }
        t.blocks.entry((id, blocked)).or_insert(now_ms);
        Ok(())
    }

    pub(super) fn unblock(&mut self, id: Uuid, blocked: Uuid) -> Result<bool> {
        Ok(self.accounts.blocks.remove(&(id, blocked)).is_some())
    }

    pub(super) fn blocked(&mut self, id: Uuid) -> Result<Vec<Uuid>> {
        let mut blocked: Vec<(i64, Uuid)> = self
            .accounts
            .blocks
            .iter()
            .filter(|((by, _), _)| *by == id)
            .map(|((_, of), at)| (*at, *of))
            .collect();
        blocked.sort();
        Ok(blocked.into_iter().map(|(_, of)| of).collect())
    }

    pub(super) fn account_games(&mut self, id: Uuid, limit: u32) -> Result<Vec<GameRecord>> {
        let rooms: std::collections::HashSet<&str> = self
            .seats
            .values()
            .filter(|s| s.account_id == Some(id))
            .map(|s| s.room_code.as_str())
            .collect();
        let mut games: Vec<GameRecord> = self
            .games
            .values()
            .filter(|g| rooms.contains(g.room_code.as_str()))
            .cloned()
            .collect();
        games.sort_by_key(|g| std::cmp::Reverse((g.created_at_ms, g.id)));
        games.truncate(limit as usize);
        Ok(games)
    }
}
