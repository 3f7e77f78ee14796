//! The admission limits of a server, per client address and in total.

/// Per-address and global admission limits. Every limit answers with an honest code:
/// HTTP 429 `rate_limited` with `Retry-After` (seconds) for a per-address limit, 503
/// `server_full` for a global one; on the WebSocket an `error` frame with the same codes.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Open TCP connections (HTTP and WebSocket) for the whole server. Clamped at start to
    /// the open-file limit minus [`Limits::reserved_fds`]. Beyond it a connection gets 503
    /// `server_full` (`/healthz` still answers).
    pub max_connections: usize,
    /// File descriptors kept free below the open-file limit for health checks, refusals,
    /// the database and logs.
    pub reserved_fds: usize,
    /// Open TCP connections from one client address; beyond it: 429 `rate_limited`.
    pub max_connections_per_address: usize,
    /// Rooms one address may create per minute (token bucket, burst = the same number).
    pub room_creations_per_minute: u32,
    /// Unstarted lobbies one address may have open at once (429 `rate_limited`).
    pub max_lobbies_per_address: usize,
    /// Rooms with bots (not yet finished) one address may have at once.
    pub max_bot_rooms_per_address: usize,
    /// Rooms with bots (not yet finished) on the whole server (503 `server_full`).
    pub max_bot_rooms: usize,
    /// Lookups by room code per address and minute: `GET /api/rooms/{code}` and the
    /// WebSocket `join` / `watch` / `resume`. Also, as a budget of its own, the stored-game
    /// reads per address and minute (`GET /api/games…`).
    pub lookups_per_minute: u32,
    /// `watch` joins one address may make per minute.
    pub watches_per_minute: u32,
    /// Reverse proxies whose `X-Forwarded-For` names the client (the gateway's `client_addr`);
    /// their own connections count only against [`Limits::max_connections`].
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Answers to connections over a limit (refusals, the server's `listener`) in flight at
    /// once; beyond it a connection over a limit is closed without an answer, so
    /// descriptors stay free for health checks and clients. At least 1.
    pub max_refusals: usize,
    /// `/readyz` and `/metrics` requests served at once on connections over a limit: a
    /// quota for operators and health checks, taken within [`Limits::max_refusals`]
    /// (at most that many). 0: they get the refusal like every other path.
    pub ops_reserved: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 16_384,
            reserved_fds: 256,
            max_connections_per_address: 64,
            room_creations_per_minute: 30,
            max_lobbies_per_address: 10,
            max_bot_rooms_per_address: 3,
            max_bot_rooms: 500,
            lookups_per_minute: 120,
            watches_per_minute: 60,
            trusted_proxies: Vec::new(),
            max_refusals: 128,
            ops_reserved: 4,
        }
    }
}

/// Admission limits that cannot work whatever the load; the server refuses to start
/// with them (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitsError {
    /// [`Limits::max_refusals`] is 0: not even `/healthz` would be answered over a limit.
    #[error("--max-refusals must be at least 1 (0 would answer no connection over a limit, not even /healthz)")]
    NoRefusals,
    /// [`Limits::ops_reserved`] is above [`Limits::max_refusals`], whose share it is.
    #[error("--ops-reserved ({ops}) must not exceed --max-refusals ({refusals}): operator requests over a limit are answered within the refusals")]
    OpsOverRefusals {
        /// The `ops_reserved` given.
        ops: usize,
        /// The `max_refusals` given.
        refusals: usize,
    },
}

impl Limits {
    /// Checks the settings that cannot work whatever the load (see [`LimitsError`]).
    pub fn validate(&self) -> Result<(), LimitsError> {
        if self.max_refusals == 0 {
            return Err(LimitsError::NoRefusals);
        }
        if self.ops_reserved > self.max_refusals {
            return Err(LimitsError::OpsOverRefusals {
                ops: self.ops_reserved,
                refusals: self.max_refusals,
            });
        }
        Ok(())
    }
}

impl Limits {
    /// Limits so high no single client meets them (tests and load runs from one address).
    pub fn unlimited_per_address() -> Limits {
        Limits {
            max_connections_per_address: usize::MAX,
            room_creations_per_minute: u32::MAX,
            max_lobbies_per_address: usize::MAX,
            max_bot_rooms_per_address: usize::MAX,
            lookups_per_minute: u32::MAX,
            watches_per_minute: u32::MAX,
            ..Limits::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_reject_no_refusals_and_an_ops_reserve_beyond_them() {
        let defaults = Limits::default();
        assert_eq!((defaults.max_refusals, defaults.ops_reserved), (128, 4));
        assert_eq!(defaults.validate(), Ok(()));
        let with = |max_refusals, ops_reserved| Limits {
            max_refusals,
            ops_reserved,
            ..Limits::default()
        };
        assert_eq!(with(1, 0).validate(), Ok(()));
        assert_eq!(with(1, 1).validate(), Ok(()));
        assert_eq!(with(0, 0).validate(), Err(LimitsError::NoRefusals));
        assert_eq!(
            with(3, 4).validate(),
            Err(LimitsError::OpsOverRefusals {
                ops: 4,
                refusals: 3
            })
        );
    }
}
