//! Server settings that are not per-room.

pub use parchis_admission::Limits;
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
    /// ([`parchis_admission`]).
    pub limits: Limits,
    /// Timeouts and liveness checks of connections ([`crate::listener`], [`crate::ws`]).
    pub timeouts: Timeouts,
    /// Origins whose pages may open a WebSocket (`Origin` header, e.g.
    /// `https://parchis.example`). Always allowed: no `Origin` (apps), and an `Origin`
    /// equal to the request's own `Host` (the server's own pages). `*` allows every origin.
    /// Default: the origin of [`ServerConfig::public_url`].
    pub allowed_origins: Vec<String>,
    /// Accounts' limits (issue 26, [`crate::accounts`]).
    pub accounts: AccountLimits,
    /// How long the players of a quick pairing's room have to claim their seats before
    /// its lobby is closed (`docs/ACCOUNTS.md`, "Claim wait"; default 60 s).
    pub pairing_claim_wait: Duration,
    /// Tournaments' limits (issue 27, [`crate::tournaments`]).
    pub tournaments: TournamentLimits,
}

/// What one organiser may make the server run (`POST /api/tournaments`): a tournament's
/// bots play at the tournament's think time even when nobody watches, so an account must
/// not be able to start an unbounded number of bot games.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TournamentLimits {
    /// Tournaments not finished (registering or running) one account may organise at
    /// once (default 5); one more is refused `409 too_many_tournaments`. Per node in a
    /// cluster (counted over the directors running there).
    pub max_open_per_account: usize,
    /// Largest `bot_fill.up_to` a tournament may ask for, in entrants (default 32; each
    /// is a bot, or a team of two in `pairs`); more is refused `400 bad_request`. At most
    /// `parchis_tournament::MAX_ENTRANTS` (256), which the settings' own rule checks.
    pub max_bot_fill: u32,
}

impl Default for TournamentLimits {
    fn default() -> Self {
        TournamentLimits {
            max_open_per_account: 5,
            max_bot_fill: 32,
        }
    }
}

/// Limits of sign-ups, log-ins and password hashing ([`crate::accounts`]). A rate of
/// `u32::MAX` is unlimited. Every attempt counts, whether it succeeds or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountLimits {
    /// Sign-ups per client address and hour (default 10: a household behind one address
    /// signs up a few accounts).
    pub signups_per_hour: u32,
    /// Log-in and recovery attempts per client address and minute (default 20).
    pub logins_per_minute: u32,
    /// Log-in and recovery attempts per username and hour, from every address together
    /// (default 30): guessing one player's password from many addresses stays slow.
    pub logins_per_hour_per_username: u32,
    /// Argon2id hashes computed at once (default 2); more wait their turn, so a flood of
    /// log-ins cannot take every core.
    pub concurrent_hashes: usize,
}

impl Default for AccountLimits {
    fn default() -> Self {
        AccountLimits {
            signups_per_hour: 10,
            logins_per_minute: 20,
            logins_per_hour_per_username: 30,
            concurrent_hashes: 2,
        }
    }
}

impl AccountLimits {
    /// No rate limits (tests whose clients all come from one address); hashes bounded
    /// as by default.
    pub fn unlimited() -> AccountLimits {
        AccountLimits {
            signups_per_hour: u32::MAX,
            logins_per_minute: u32::MAX,
            logins_per_hour_per_username: u32::MAX,
            ..AccountLimits::default()
        }
    }
}

/// A setting that cannot work; the binary refuses to start with it (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The admission limits cannot work.
    #[error(transparent)]
    Limits(#[from] parchis_admission::LimitsError),
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

impl ServerConfig {
    /// Where the rooms' server seeds come from (`--dice-seed`, tests' fixed seed).
    pub fn dice(&self) -> parchis_room_core::dice::DiceConfig {
        parchis_room_core::dice::DiceConfig {
            dice_seed: self.dice_seed,
            fixed_server_seed: self.fixed_server_seed,
        }
    }

    /// What every room is given (`parchis-room`): its command queue, its history (at
    /// most half a connection's outbound queue: a reload resumes from seq 0, and a long
    /// game's history would otherwise overflow the queue and drop the connection as a slow
    /// consumer, again and again), the most rooms, the dice and the room limits.
    pub fn rooms_config(&self) -> parchis_room::RoomsConfig {
        parchis_room::RoomsConfig {
            room_queue: self.room_queue,
            history_len: self.history.min(self.outbound_queue / 2),
            max_rooms: self.max_rooms,
            dice: self.dice(),
            limits: self.room_limits(),
        }
    }

    /// The limits of one room.
    pub fn room_limits(&self) -> parchis_room_core::RoomLimits {
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        parchis_room_core::RoomLimits {
            lobby_idle_ms: ms(self.lobby_idle),
            presence_interval_ms: ms(self.presence_interval),
            min_unwatched_bot_think_ms: ms(self.min_unwatched_bot_think),
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
            accounts: AccountLimits::default(),
            pairing_claim_wait: Duration::from_secs(60),
            tournaments: TournamentLimits::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rooms' and the room core's defaults (used by their own tests, below this
    /// crate) are the server's defaults: one set of numbers, checked here.
    #[test]
    fn the_rooms_defaults_are_the_servers() {
        let server = ServerConfig::default().rooms_config();
        let rooms = parchis_room::RoomsConfig::default();
        assert_eq!(server.room_queue, rooms.room_queue);
        assert_eq!(server.history_len, rooms.history_len);
        assert_eq!(server.max_rooms, rooms.max_rooms);
        assert_eq!(server.dice, rooms.dice);
        assert_eq!(server.limits, rooms.limits);
        assert_eq!(server.limits, parchis_room_core::RoomLimits::default());
    }
}
