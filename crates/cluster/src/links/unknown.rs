//! The negative cache of unknown room codes (`docs/CLUSTER.md`, "Hostile clients"): a
//! code that no node served and that PostgreSQL does not hold is remembered for [`TTL`],
//! so a flood of lookups of that code (room view, `join`, `watch`, `resume`, a command
//! before joining) costs one NATS request and one store read per [`TTL`] instead of one
//! of each per lookup. Bounded: at most [`CAPACITY`] codes (the least recently used go
//! first), and codes longer than [`MAX_CODE_LEN`] are not remembered.
//!
//! Only "the store has no such room" is remembered (not a finished game, not a room
//! being moved, not a failed read). The cache is consulted after this node's own rooms,
//! so a room running here is always found; a room created here forgets its code
//! ([`UnknownCodes::forget`], from [`parchis_room::create()`]). A room created on another
//! node right after this node remembered its code as unknown would be hidden here for
//! at most [`TTL`]; as codes are 50 random bits (`parchis_room::ids`) nobody can know a code
//! before its room exists, so a remembered miss is a guess that a creation would match
//! once in 2^50 / [`CAPACITY`] creations.

use hashlink::LruCache;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a code found unknown is answered unknown without asking again.
pub const TTL: Duration = Duration::from_secs(5);
/// The most codes remembered at once.
pub const CAPACITY: usize = 4096;
/// Longer codes (never a room's: codes are `parchis_room::ids::CODE_LEN` characters) are not
/// remembered, so a flood of long strings cannot fill the memory.
pub const MAX_CODE_LEN: usize = 32;

/// Codes found unknown, each with when it was found. See the module docs.
pub struct UnknownCodes {
    codes: Mutex<LruCache<String, Instant>>,
    ttl: Duration,
}

impl Default for UnknownCodes {
    /// [`CAPACITY`] codes for [`TTL`].
    fn default() -> UnknownCodes {
        UnknownCodes::new(CAPACITY, TTL)
    }
}

impl UnknownCodes {
    /// A cache of at most `capacity` codes (at least 1), each remembered for `ttl`.
    pub fn new(capacity: usize, ttl: Duration) -> UnknownCodes {
        UnknownCodes {
            codes: Mutex::new(LruCache::new(capacity.max(1))),
            ttl,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<String, Instant>> {
        // A poisoned lock only means a panic elsewhere; the cache is still consistent.
        self.codes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `code` was found unknown less than the TTL before `now`. An expired entry
    /// is dropped.
    pub fn is_unknown_at(&self, code: &str, now: Instant) -> bool {
        let mut codes = self.lock();
        match codes.get(code) {
            Some(found) if now.saturating_duration_since(*found) < self.ttl => true,
            Some(_) => {
                codes.remove(code);
                false
            }
            None => false,
        }
    }

    /// [`UnknownCodes::is_unknown_at`] now; counts a hit in
    /// `parchis_cluster_unknown_code_lookups_total{answer="cached"}`.
    pub fn is_unknown(&self, code: &str) -> bool {
        let hit = self.is_unknown_at(code, Instant::now());
        if hit {
            metrics::counter!(parchis_telemetry::names::UNKNOWN_CODE_LOOKUPS, "answer" => "cached")
                .increment(1);
        }
        hit
    }

    /// Remembers that the store held no room `code` at `now` (not when `code` is longer
    /// than [`MAX_CODE_LEN`]).
    pub fn note_at(&self, code: &str, now: Instant) {
        if code.len() <= MAX_CODE_LEN {
            self.lock().insert(code.to_owned(), now);
        }
    }

    /// [`UnknownCodes::note_at`] now; counts the store read that found nothing in
    /// `parchis_cluster_unknown_code_lookups_total{answer="read"}`.
    pub fn note(&self, code: &str) {
        metrics::counter!(parchis_telemetry::names::UNKNOWN_CODE_LOOKUPS, "answer" => "read")
            .increment(1);
        self.note_at(code, Instant::now());
    }

    /// A room `code` now exists (created here): no longer unknown.
    pub fn forget(&self, code: &str) {
        self.lock().remove(code);
    }

    /// How many codes are remembered (expired ones included until looked up or evicted).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no code is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_unknown_for_the_ttl_then_asked_again() {
        let cache = UnknownCodes::new(8, Duration::from_secs(5));
        let t0 = Instant::now();
        assert!(!cache.is_unknown_at("ABCDE12345", t0), "not looked up yet");
        cache.note_at("ABCDE12345", t0);
        assert!(cache.is_unknown_at("ABCDE12345", t0));
        assert!(cache.is_unknown_at("ABCDE12345", t0 + Duration::from_millis(4999)));
        assert!(!cache.is_unknown_at("OTHERCODE1", t0));
        assert!(!cache.is_unknown_at("ABCDE12345", t0 + Duration::from_secs(5)));
        assert!(cache.is_empty(), "the expired entry is dropped");
    }

    #[test]
    fn a_room_created_here_is_no_longer_unknown() {
        let cache = UnknownCodes::new(8, Duration::from_secs(5));
        let t0 = Instant::now();
        cache.note_at("NEWROOM123", t0);
        cache.forget("NEWROOM123");
        assert!(!cache.is_unknown_at("NEWROOM123", t0));
        cache.forget("NEVERNOTED");
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn the_cache_is_bounded_and_long_codes_are_not_kept() {
        let cache = UnknownCodes::new(3, Duration::from_secs(5));
        let t0 = Instant::now();
        for code in ["A", "B", "C"] {
            cache.note_at(code, t0);
        }
        // A looked up again: B is now the least recently used, and goes first.
        assert!(cache.is_unknown_at("A", t0));
        cache.note_at("D", t0);
        assert_eq!(cache.len(), 3);
        assert!(!cache.is_unknown_at("B", t0));
        for code in ["A", "C", "D"] {
            assert!(cache.is_unknown_at(code, t0), "{code}");
        }
        cache.note_at(&"X".repeat(MAX_CODE_LEN + 1), t0);
        assert!(!cache.is_unknown_at(&"X".repeat(MAX_CODE_LEN + 1), t0));
        cache.note_at(&"Y".repeat(MAX_CODE_LEN), t0);
        assert!(cache.is_unknown_at(&"Y".repeat(MAX_CODE_LEN), t0));
        assert_eq!(cache.len(), 3);
    }
}
