//! Why a client was refused ([`Denied`]), and the one way this crate takes its locks.

use parchis_protocol::ErrorCode;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Why a client was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    /// A per-address limit: try again after `retry_after`.
    #[error("{what}: try again in {} s", retry_after.as_secs().max(1))]
    RateLimited {
        /// What was limited, for the client (e.g. "room creations per minute").
        what: &'static str,
        /// How long until the limit lets the next one through.
        retry_after: Duration,
    },
    /// A global limit: the server has no room for more.
    #[error("the server is full: {what}")]
    ServerFull {
        /// What is full (e.g. "connections").
        what: &'static str,
    },
}

impl Denied {
    /// The wire error code: `rate_limited` or `server_full`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Denied::RateLimited { .. } => ErrorCode::RateLimited,
            Denied::ServerFull { .. } => ErrorCode::ServerFull,
        }
    }

    /// Whole seconds for a `Retry-After` header (at least 1).
    pub fn retry_after_secs(&self) -> u64 {
        match self {
            Denied::RateLimited { retry_after, .. } => {
                retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0)
            }
            Denied::ServerFull { .. } => 5,
        }
        .max(1)
    }
}

/// Locks `m`.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means a panic elsewhere; the counters are still consistent.
    m.lock().unwrap_or_else(|e| e.into_inner())
}
