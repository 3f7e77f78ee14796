//! Server settings that are not per-room.

use std::time::Duration;

/// Limits and knobs of a running server. [`ServerConfig::default`] is the production
/// default; tests tighten it.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Base URL used in invite links, e.g. `http://127.0.0.1:8080`.
    pub public_url: String,
    /// Largest text frame accepted (bytes); larger ones get `frame_too_large` (16 KiB).
    pub max_message_bytes: usize,
    /// Hard limit (bytes) enforced by the WebSocket layer, which closes with 1009.
    pub hard_max_message_bytes: usize,
    /// WebSocket read buffer per connection (bytes). Small: idle connections are cheap.
    pub read_buffer_bytes: usize,
    /// Kernel send buffer per TCP connection (bytes); `None` keeps the OS default (which
    /// grows to megabytes for a client that stops reading). Default 64 KiB.
    pub send_buffer_bytes: Option<usize>,
    /// Commands per second allowed per connection (token bucket, burst = 2 × rate).
    pub commands_per_second: u32,
    /// Errors per connection within [`ServerConfig::error_window`] before it is closed (1008).
    pub max_errors: u32,
    /// Window over which errors are counted.
    pub error_window: Duration,
    /// Outbound messages queued per connection before it is disconnected as too slow
    /// (default 4096; the byte limit, [`ServerConfig::outbound_queue_bytes`], is the one
    /// that matters for a reader that stopped).
    pub outbound_queue: usize,
    /// Commands queued per room actor.
    pub room_queue: usize,
    /// Room events kept for reconnecting clients; older gaps get a snapshot.
    pub history: usize,
    /// Fixed dice seed (tests only): each room's server seed is derived from it and the
    /// room's ordinal, and its games are marked `"mode": "test"` (never verifiable,
    /// `docs/FAIR_DICE.md`). `None`: server seeds come from the OS CSPRNG.
    pub dice_seed: Option<u64>,
    /// Fixed server seed for every game (tests only, takes precedence over `dice_seed`):
    /// fair-dice games become reproducible; they are marked `"mode": "test"` too.
    pub fixed_server_seed: Option<[u8; 32]>,
    /// Maximum number of live rooms; creations beyond it get 503 `server_full`.
    pub max_rooms: usize,
    /// Bearer token of the admin API (`/admin/…`); `None` disables it.
    pub admin_token: Option<String>,
    /// Tests only: `POST /admin/debug/stall` may block every worker thread of the main
    /// runtime, `POST /admin/debug/shed` make a cluster node shed load ([`crate::stall`]).
    /// Default off.
    pub debug_stall_hook: bool,
    /// The outbound bytes queued for one connection and not yet written to its socket;
    /// a frame that would go beyond drops the connection as a slow consumer (4001). A
    /// reader that keeps up never holds more than a burst (default 1 MiB).
    pub outbound_queue_bytes: usize,
    /// Presence frames (who is connected, how many watch) go out at most once per this
    /// interval per room; changes in between are coalesced into the next (default 250 ms).
    pub presence_interval: Duration,
    /// An unstarted room with no seats and no connections is disposed of after this
    /// long (default 10 min).
    pub lobby_idle: Duration,
    /// Bots of a room with no person connected (no player, no spectator) wait at least
    /// this long before each roll and move, whatever the room's `bot_think_ms`
    /// (default 1 s): a game between bots alone cannot burn CPU and database.
    pub min_unwatched_bot_think: Duration,
    /// Limits on what one client address, or everyone together, may use
    /// ([`crate::admission`]).
    pub limits: Limits,
    /// Timeouts and liveness checks of connections ([`crate::listener`], [`crate::ws`]).
    pub timeouts: Timeouts,
    /// Origins whose pages may open a WebSocket (`Origin` header, e.g.
    /// `https://parchis.example`). Always allowed: no `Origin` (apps), and an `Origin`
    /// equal to the request's own `Host` (the server's own pages). `*` allows every origin.
    /// Default: the origin of [`ServerConfig::public_url`].
    pub allowed_origins: Vec<String>,
}

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
    /// Reverse proxies whose `X-Forwarded-For` names the client ([`crate::client_addr`]);
    /// their own connections count only against [`Limits::max_connections`].
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Answers to connections over a limit (refusals, [`crate::listener`]) in flight at
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

/// A setting that cannot work; the binary refuses to start with it (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
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
    /// The admin token is shorter than [`MIN_ADMIN_TOKEN_CHARS`]: the admin API has no
    /// other guard, and a short token can be guessed.
    #[error("--admin-token (PARCHIS_ADMIN_TOKEN) must be at least {MIN_ADMIN_TOKEN_CHARS} characters, not {0}: it is the only guard of the admin API (use a long random one, e.g. `openssl rand -hex 32`)")]
    ShortAdminToken(usize),
}

/// The fewest characters an admin token may have.
pub const MIN_ADMIN_TOKEN_CHARS: usize = 16;

/// Checks the admin token (`None` or empty: the admin API is off, nothing to check).
///
/// # Errors
/// [`ConfigError::ShortAdminToken`] for a token under [`MIN_ADMIN_TOKEN_CHARS`]
/// characters (surrounding spaces not counted).
pub fn check_admin_token(token: Option<&str>) -> Result<(), ConfigError> {
    match token.map(|t| t.trim().chars().count()) {
        Some(n) if n > 0 && n < MIN_ADMIN_TOKEN_CHARS => Err(ConfigError::ShortAdminToken(n)),
        _ => Ok(()),
    }
}

impl Limits {
    /// Checks the settings that cannot work whatever the load (see [`ConfigError`]).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.max_refusals == 0 {
            return Err(ConfigError::NoRefusals);
        }
        if self.ops_reserved > self.max_refusals {
            return Err(ConfigError::OpsOverRefusals {
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

/// Connection timeouts.
#[derive(Clone, Debug)]
pub struct Timeouts {
    /// A client must send a request's whole header (the WebSocket upgrade too) within this
    /// long of starting it, or of connecting: trickled and idle HTTP connections are closed.
    pub header_read: Duration,
    /// An HTTP request must be answered within this long (408 otherwise).
    pub request: Duration,
    /// A WebSocket that has not joined, watched or resumed a room within this long is
    /// closed with 4004.
    pub join: Duration,
    /// The server pings every WebSocket this often.
    pub ping_interval: Duration,
    /// A WebSocket from which nothing (not even a pong) arrived for `ping_interval +
    /// pong_timeout` is dropped as half-open; its seat shows disconnected and its grace
    /// period starts.
    pub pong_timeout: Duration,
    /// A frame not written to the socket within this long (the client stopped reading)
    /// drops the connection as a slow consumer (4001).
    pub write: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            header_read: Duration::from_secs(10),
            request: Duration::from_secs(10),
            join: Duration::from_secs(30),
            ping_interval: Duration::from_secs(15),
            pong_timeout: Duration::from_secs(15),
            write: Duration::from_secs(10),
        }
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            public_url: "http://127.0.0.1:8080".into(),
            max_message_bytes: 16 * 1024,
            hard_max_message_bytes: 64 * 1024,
            read_buffer_bytes: 4 * 1024,
            send_buffer_bytes: Some(64 * 1024),
            commands_per_second: 10,
            max_errors: 20,
            error_window: Duration::from_secs(10),
            outbound_queue: 4096,
            room_queue: 64,
            history: 1024,
            dice_seed: None,
            fixed_server_seed: None,
            max_rooms: 10_000,
            admin_token: None,
            debug_stall_hook: false,
            outbound_queue_bytes: 1024 * 1024,
            presence_interval: Duration::from_millis(250),
            lobby_idle: Duration::from_secs(10 * 60),
            min_unwatched_bot_think: Duration::from_secs(1),
            limits: Limits::default(),
            timeouts: Timeouts::default(),
            allowed_origins: vec!["http://127.0.0.1:8080".into()],
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
        assert_eq!(with(0, 0).validate(), Err(ConfigError::NoRefusals));
        assert_eq!(
            with(3, 4).validate(),
            Err(ConfigError::OpsOverRefusals {
                ops: 4,
                refusals: 3
            })
        );
    }
}
