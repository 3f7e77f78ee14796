//! Admission control: what one client address, and everyone together, may use. Used by
//! the gateway (every connection, lookup and creation) and by the cluster (a room created
//! here for a client of another node counts against that client's address here too).
//!
//! * Open TCP connections, per address and in total ([`Admission::connect`] hands out a
//!   [`ConnGuard`] that gives the slot back when the socket closes).
//! * Rates per address and minute (governor token buckets): room creations, lookups by room
//!   code (HTTP and WebSocket), spectator joins.
//! * Rooms an address owns: unstarted lobbies and rooms with bots, per address, and rooms
//!   with bots on the whole server. The check and the count are one step: a creation
//!   that passes holds a [`Reservation`] (counted as an open room of its address at once)
//!   until the room is recorded or the creation fails, so concurrent creations from one
//!   address cannot pass the limit together while each waits for its room.
//!
//! Every refusal is a [`Denied`]: `rate_limited` (per address, with how long to wait) or
//! `server_full` (global). Decisions read the clock through governor and the room registry
//! through a caller-supplied status function; nothing here does I/O.

pub use crate::limits::{Limits, LimitsError};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use parchis_protocol::RoomStatus;
use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod denied;
mod held;
mod limits;
use denied::lock;
pub use denied::Denied;
use held::HeldRooms;
pub use held::Reservation;

/// The address a client is counted under: an IPv4 address as it is (an IPv4-mapped IPv6
/// address as its IPv4 one), an IPv6 address as its /64 network. One IPv6 subscriber
/// usually holds a whole /64 (2^64 addresses), so keyed by the full address every limit
/// per address would be a limit per connection for them.
pub fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let network = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(std::net::Ipv6Addr::from(network))
            }
        },
    }
}

/// Wrong admin tokens one address may send per minute (a burst of as many), whatever
/// the limits: the admin token is the admin API's only guard.
pub const ADMIN_GUESSES_PER_MINUTE: u32 = 10;

/// One per-address rate (`None`: unlimited).
struct Rate {
    what: &'static str,
    limiter: Option<DefaultKeyedRateLimiter<IpAddr>>,
}

impl Rate {
    fn per_minute(what: &'static str, n: u32) -> Rate {
        let limiter = (n != u32::MAX)
            .then(|| NonZeroU32::new(n.max(1)))
            .flatten()
            .map(|n| RateLimiter::keyed(Quota::per_minute(n)));
        Rate { what, limiter }
    }

    fn check(&self, ip: IpAddr) -> Result<(), Denied> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        limiter
            .check_key(&ip)
            .map_err(|not_until| Denied::RateLimited {
                what: self.what,
                retry_after: not_until.wait_time_from(DefaultClock::default().now()),
            })
    }

    fn forget_idle(&self) {
        if let Some(l) = &self.limiter {
            l.retain_recent();
            l.shrink_to_fit();
        }
    }
}

#[derive(Default)]
struct Connections {
    total: usize,
    per_address: HashMap<IpAddr, usize>,
}

/// The server's admission state. Shared through the server's `AppState`.
pub struct Admission {
    limits: Limits,
    connections: Arc<Mutex<Connections>>,
    creations: Rate,
    lookups: Rate,
    /// Reads of stored games (`GET /api/games…`): a budget of their own, as large as the
    /// lookups' (`lookups_per_minute`).
    game_reads: Rate,
    watches: Rate,
    /// Wrong admin tokens per address ([`ADMIN_GUESSES_PER_MINUTE`]).
    admin_guesses: Rate,
    /// Addresses refused every admin request until then: their wrong tokens ran out.
    admin_blocked: Mutex<HashMap<IpAddr, std::time::Instant>>,
    /// The rooms each address created (or is creating), and the server's bot rooms.
    rooms: HeldRooms,
}

impl Admission {
    /// New admission state for `limits`. `max_connections` is taken as given (see
    /// [`effective_max_connections`] for the clamp to the open-file limit).
    pub fn new(limits: Limits) -> Admission {
        Admission {
            creations: Rate::per_minute(
                "room creations per minute",
                limits.room_creations_per_minute,
            ),
            lookups: Rate::per_minute("lookups by room code per minute", limits.lookups_per_minute),
            game_reads: Rate::per_minute("stored-game reads per minute", limits.lookups_per_minute),
            watches: Rate::per_minute("spectator joins per minute", limits.watches_per_minute),
            admin_guesses: Rate::per_minute(
                "wrong admin tokens per minute",
                ADMIN_GUESSES_PER_MINUTE,
            ),
            admin_blocked: Mutex::default(),
            limits,
            connections: Arc::default(),
            rooms: HeldRooms::default(),
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Admits one TCP connection from `ip`: a guard holding its slot until dropped, or
    /// `server_full` (total) / `rate_limited` (this address; a trusted proxy has no
    /// per-address cap).
    pub fn connect(&self, ip: IpAddr) -> Result<ConnGuard, Denied> {
        let mut c = lock(&self.connections);
        if c.total >= self.limits.max_connections {
            return Err(Denied::ServerFull {
                what: "connections",
            });
        }
        let proxy = self.limits.trusted_proxies.contains(&ip);
        let ip = address_key(ip);
        let mine = c.per_address.entry(ip).or_default();
        if *mine >= self.limits.max_connections_per_address && !proxy {
            return Err(Denied::RateLimited {
                what: "open connections from one address",
                retry_after: Duration::from_secs(1),
            });
        }
        *mine += 1;
        c.total += 1;
        Ok(ConnGuard {
            ip,
            connections: self.connections.clone(),
        })
    }

    /// Open connections: `(total, from ip)`.
    pub fn open_connections(&self, ip: IpAddr) -> (usize, usize) {
        let c = lock(&self.connections);
        (
            c.total,
            c.per_address.get(&address_key(ip)).copied().unwrap_or(0),
        )
    }

    /// One lookup by room code from `ip` (`GET /api/rooms/{code}`, `join`, `watch`,
    /// `resume`).
    pub fn lookup(&self, ip: IpAddr) -> Result<(), Denied> {
        self.lookups.check(address_key(ip))
    }

    /// One read of stored games from `ip` (`GET /api/games`, `/api/games/{id}`, its
    /// replay and export: each reads the database and may rebuild a whole game), at most
    /// `lookups_per_minute` a minute, counted apart from the lookups by room code.
    pub fn game_read(&self, ip: IpAddr) -> Result<(), Denied> {
        self.game_reads.check(address_key(ip))
    }

    /// May `ip` try the admin token now? Not while its wrong tokens have run out
    /// ([`Admission::admin_token_wrong`]): then every admin request from it is refused,
    /// the right token too, until it may guess again.
    pub fn admin_attempt(&self, ip: IpAddr) -> Result<(), Denied> {
        let ip = address_key(ip);
        let now = std::time::Instant::now();
        match lock(&self.admin_blocked).get(&ip) {
            Some(until) if *until > now => Err(Denied::RateLimited {
                what: "wrong admin tokens per minute",
                retry_after: *until - now,
            }),
            _ => Ok(()),
        }
    }

    /// `ip` sent a wrong admin token (or none): one of its [`ADMIN_GUESSES_PER_MINUTE`];
    /// past them it is blocked until the next one is due.
    pub fn admin_token_wrong(&self, ip: IpAddr) {
        let ip = address_key(ip);
        if let Err(Denied::RateLimited { retry_after, .. }) = self.admin_guesses.check(ip) {
            lock(&self.admin_blocked).insert(ip, std::time::Instant::now() + retry_after);
        }
    }

    /// One spectator join from `ip`.
    pub fn watch(&self, ip: IpAddr) -> Result<(), Denied> {
        self.watches.check(address_key(ip))
    }

    /// May `ip` create a room (`bots`: with bots)? Checks, in order: its lobbies and bot
    /// rooms open (or being created) now, the server's bot rooms ([`Admission::reserve`]),
    /// then its creation rate (so a refusal for too many open rooms does not use up the
    /// rate). `status` tells a registered room's status (`None`: gone); finished and gone
    /// rooms no longer count. The answer holds the room's place: record the room with
    /// [`Reservation::created`]; dropping it (the creation failed) gives the place back.
    pub fn may_create(
        &self,
        ip: IpAddr,
        bots: bool,
        status: impl Fn(&str) -> Option<RoomStatus>,
    ) -> Result<Reservation<'_>, Denied> {
        let reservation = self.reserve(ip, bots, status)?;
        self.creations.check(address_key(ip))?;
        Ok(reservation)
    }

    /// May this node run one more room of `ip` (`bots`: with bots)? Its lobbies and bot
    /// rooms open (or being created) here, and the node's bot rooms, as
    /// [`Admission::may_create`] checks them, without its creation rate: for a room
    /// another node placed here (cluster mode), whose creation that node already counted.
    ///
    /// The check and the count are one step under one lock: the place is held (counted
    /// as an open lobby of `ip`, and a bot room if `bots`) from this answer until the
    /// [`Reservation`] is recorded ([`Reservation::created`]) or dropped, so N creations
    /// at once from one address never pass a limit of fewer than N together.
    ///
    /// # Errors
    /// `rate_limited` for the address's open lobbies or bot rooms, `server_full` for the
    /// server's bot rooms.
    pub fn reserve(
        &self,
        ip: IpAddr,
        bots: bool,
        status: impl Fn(&str) -> Option<RoomStatus>,
    ) -> Result<Reservation<'_>, Denied> {
        self.rooms
            .reserve(&self.limits, address_key(ip), bots, status)
    }

    /// Remembers that `ip` (if known: `None` for rooms restored after a restart, or
    /// placed here by a node that did not name the client) created room `code`, with no
    /// check (a creation checked by [`Admission::reserve`] records its room with
    /// [`Reservation::created`]).
    pub fn created(&self, ip: Option<IpAddr>, code: &str, bots: bool) {
        self.rooms.created(ip.map(address_key), code, bots);
    }

    /// Drops rate-limiter state of addresses that have been quiet (memory stays bounded by
    /// the active addresses). Call now and then.
    pub fn forget_idle(&self) {
        self.creations.forget_idle();
        self.lookups.forget_idle();
        self.game_reads.forget_idle();
        self.watches.forget_idle();
        self.admin_guesses.forget_idle();
        let now = std::time::Instant::now();
        lock(&self.admin_blocked).retain(|_, until| *until > now);
    }
}

/// One admitted connection's slot; dropping it frees the slot.
#[derive(Debug)]
pub struct ConnGuard {
    ip: IpAddr,
    connections: Arc<Mutex<Connections>>,
}

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Connections({})", self.total)
    }
}

impl Drop for ConnGuard {
    fn drop(&mut self) {
        let mut c = lock(&self.connections);
        c.total = c.total.saturating_sub(1);
        if let Some(n) = c.per_address.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                c.per_address.remove(&self.ip);
            }
        }
    }
}

/// The soft open-file limit of this process (Linux: `/proc/self/limits`), if known.
pub fn open_file_limit() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// `configured` clamped to the open-file limit minus `reserved` descriptors (unchanged
/// where the limit is unknown or unlimited).
pub fn effective_max_connections(configured: usize, reserved: usize) -> usize {
    match open_file_limit() {
        Some(limit) => configured.min(limit.saturating_sub(reserved).max(1)),
        None => configured,
    }
}

#[cfg(test)]
mod tests;
