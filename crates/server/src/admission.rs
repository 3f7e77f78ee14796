//! Admission control: what one client address, and everyone together, may use.
//!
//! * Open TCP connections, per address and in total ([`Admission::connect`] hands out a
//!   [`ConnGuard`] that gives the slot back when the socket closes).
//! * Rates per address and minute (governor token buckets): room creations, lookups by room
//!   code (HTTP and WebSocket), spectator joins.
//! * Rooms an address owns: unstarted lobbies and rooms with bots, per address, and rooms
//!   with bots on the whole server.
//!
//! Every refusal is a [`Denied`]: `rate_limited` (per address, with how long to wait) or
//! `server_full` (global). Decisions read the clock through governor and the room registry
//! through a caller-supplied status function; nothing here does I/O.

use crate::config::Limits;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use parchis_protocol::{ErrorCode, RoomStatus};
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, MutexGuard};
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

/// A room created by an address, remembered to count its lobbies and bot rooms.
#[derive(Clone, Debug)]
struct Owned {
    code: String,
    bots: bool,
}

/// The server's admission state. Shared through [`crate::AppState`].
pub struct Admission {
    limits: Limits,
    connections: Arc<Mutex<Connections>>,
    creations: Rate,
    lookups: Rate,
    watches: Rate,
    /// Address → rooms it created that may still count.
    owned: Mutex<HashMap<IpAddr, Vec<Owned>>>,
    /// Codes of rooms with bots that may still be running (any creator, restored ones too).
    bot_rooms: Mutex<HashSet<String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means a panic elsewhere; the counters are still consistent.
    m.lock().unwrap_or_else(|e| e.into_inner())
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
            watches: Rate::per_minute("spectator joins per minute", limits.watches_per_minute),
            limits,
            connections: Arc::default(),
            owned: Mutex::default(),
            bot_rooms: Mutex::default(),
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
        (c.total, c.per_address.get(&ip).copied().unwrap_or(0))
    }

    /// One lookup by room code from `ip` (`GET /api/rooms/{code}`, `join`, `watch`,
    /// `resume`).
    pub fn lookup(&self, ip: IpAddr) -> Result<(), Denied> {
        self.lookups.check(ip)
    }

    /// One spectator join from `ip`.
    pub fn watch(&self, ip: IpAddr) -> Result<(), Denied> {
        self.watches.check(ip)
    }

    /// May `ip` create a room (`bots`: with bots)? Checks, in order: its lobbies and bot
    /// rooms open now, the server's bot rooms ([`Admission::may_hold`]), then its creation
    /// rate (so a refusal for too many open rooms does not use up the rate). `status`
    /// tells a registered room's status (`None`: gone); finished and gone rooms no longer
    /// count.
    pub fn may_create(
        &self,
        ip: IpAddr,
        bots: bool,
        status: impl Fn(&str) -> Option<RoomStatus>,
    ) -> Result<(), Denied> {
        self.may_hold(ip, bots, status)?;
        self.creations.check(ip)
    }

    /// May this node run one more room of `ip` (`bots`: with bots)? Its lobbies and bot
    /// rooms open here, and the node's bot rooms, as [`Admission::may_create`] checks
    /// them, without its creation rate: for a room another node placed here (cluster
    /// mode), whose creation that node already counted.
    pub fn may_hold(
        &self,
        ip: IpAddr,
        bots: bool,
        status: impl Fn(&str) -> Option<RoomStatus>,
    ) -> Result<(), Denied> {
        {
            let mut owned = lock(&self.owned);
            let mine = owned.entry(ip).or_default();
            mine.retain(|r| {
                matches!(
                    status(&r.code),
                    Some(RoomStatus::Lobby | RoomStatus::Playing)
                )
            });
            let lobbies = mine
                .iter()
                .filter(|r| status(&r.code) == Some(RoomStatus::Lobby))
                .count();
            if lobbies >= self.limits.max_lobbies_per_address {
                return Err(Denied::RateLimited {
                    what: "unstarted rooms open from one address",
                    retry_after: Duration::from_secs(60),
                });
            }
            if bots
                && mine.iter().filter(|r| r.bots).count() >= self.limits.max_bot_rooms_per_address
            {
                return Err(Denied::RateLimited {
                    what: "rooms with bots open from one address",
                    retry_after: Duration::from_secs(60),
                });
            }
            if mine.is_empty() {
                owned.remove(&ip);
            }
        }
        if bots {
            let mut all = lock(&self.bot_rooms);
            all.retain(|code| {
                matches!(status(code), Some(RoomStatus::Lobby | RoomStatus::Playing))
            });
            if all.len() >= self.limits.max_bot_rooms {
                return Err(Denied::ServerFull {
                    what: "rooms with bots",
                });
            }
        }
        Ok(())
    }

    /// Remembers that `ip` (if known: `None` for rooms restored after a restart) created
    /// room `code`.
    pub fn created(&self, ip: Option<IpAddr>, code: &str, bots: bool) {
        if let Some(ip) = ip {
            lock(&self.owned).entry(ip).or_default().push(Owned {
                code: code.to_owned(),
                bots,
            });
        }
        if bots {
            lock(&self.bot_rooms).insert(code.to_owned());
        }
    }

    /// Drops rate-limiter state of addresses that have been quiet (memory stays bounded by
    /// the active addresses). Call now and then.
    pub fn forget_idle(&self) {
        self.creations.forget_idle();
        self.lookups.forget_idle();
        self.watches.forget_idle();
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
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            max_connections: 3,
            max_connections_per_address: 2,
            room_creations_per_minute: 2,
            max_lobbies_per_address: 5,
            max_bot_rooms_per_address: 1,
            max_bot_rooms: 2,
            ..Limits::default()
        }
    }

    fn ip(n: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, n])
    }

    #[test]
    fn connections_are_capped_per_address_and_in_total_and_given_back() {
        let a = Admission::new(limits());
        let g1 = a.connect(ip(1)).expect("first");
        let _g2 = a.connect(ip(1)).expect("second");
        assert_eq!(a.connect(ip(1)).unwrap_err().code(), ErrorCode::RateLimited);
        let _g3 = a.connect(ip(2)).expect("other address");
        assert_eq!(a.connect(ip(3)).unwrap_err().code(), ErrorCode::ServerFull);
        drop(g1);
        assert_eq!(a.open_connections(ip(1)), (2, 1));
        assert!(a.connect(ip(3)).is_ok());
    }

    #[test]
    fn creations_are_rated_per_address_with_a_retry_after() {
        let a = Admission::new(limits());
        let lobby = |_: &str| Some(RoomStatus::Lobby);
        for n in 0..2 {
            a.may_create(ip(1), false, lobby).expect("within the rate");
            a.created(Some(ip(1)), &format!("A{n}"), false);
        }
        let denied = a.may_create(ip(1), false, lobby).unwrap_err();
        assert_eq!(denied.code(), ErrorCode::RateLimited);
        assert!((1..=30).contains(&denied.retry_after_secs()), "{denied:?}");
        assert!(a.may_create(ip(2), false, lobby).is_ok());
    }

    #[test]
    fn holding_a_placed_room_checks_the_open_rooms_not_the_creation_rate() {
        let a = Admission::new(Limits {
            max_lobbies_per_address: 3,
            ..limits()
        });
        let lobby = |_: &str| Some(RoomStatus::Lobby);
        for n in 0..3 {
            a.may_hold(ip(1), false, lobby).expect("a lobby fits");
            a.created(Some(ip(1)), &format!("P{n}"), false);
        }
        // Three lobbies held here: a fourth is refused, and the rate (2) was not used.
        let denied = a.may_hold(ip(1), false, lobby).unwrap_err();
        assert_eq!(denied.code(), ErrorCode::RateLimited);
        assert!(denied.to_string().contains("unstarted rooms"), "{denied}");
        let gone = |_: &str| None;
        a.may_create(ip(1), false, gone).expect("rate unused");
        a.may_create(ip(1), false, gone).expect("rate unused");
        assert!(a.may_create(ip(1), false, gone).is_err());
    }

    #[test]
    fn open_lobbies_and_bot_rooms_count_until_they_finish() {
        let a = Admission::new(Limits {
            room_creations_per_minute: 100,
            max_lobbies_per_address: 1,
            ..limits()
        });
        let status = std::sync::Mutex::new(HashMap::<String, RoomStatus>::new());
        let get = |c: &str| status.lock().ok().and_then(|s| s.get(c).copied());
        a.may_create(ip(1), true, get).expect("first bot room");
        a.created(Some(ip(1)), "B1", true);
        status
            .lock()
            .unwrap()
            .insert("B1".into(), RoomStatus::Lobby);
        // One lobby open: a second is refused.
        assert_eq!(
            a.may_create(ip(1), false, get).unwrap_err().code(),
            ErrorCode::RateLimited
        );
        status
            .lock()
            .unwrap()
            .insert("B1".into(), RoomStatus::Playing);
        // Playing: no longer a lobby, still a bot room of this address.
        assert!(a.may_create(ip(1), false, get).is_ok());
        assert_eq!(
            a.may_create(ip(1), true, get).unwrap_err().code(),
            ErrorCode::RateLimited
        );
        // Another address: one more bot room fits the server, then it is full.
        a.created(Some(ip(2)), "B2", true);
        status
            .lock()
            .unwrap()
            .insert("B2".into(), RoomStatus::Playing);
        assert_eq!(
            a.may_create(ip(3), true, get).unwrap_err().code(),
            ErrorCode::ServerFull
        );
        status
            .lock()
            .unwrap()
            .insert("B1".into(), RoomStatus::Finished);
        assert!(a.may_create(ip(1), true, get).is_ok());
    }

    #[test]
    fn the_connection_cap_stays_below_the_open_file_limit() {
        let clamped = effective_max_connections(usize::MAX, 256);
        if let Some(limit) = open_file_limit() {
            assert_eq!(clamped, limit - 256);
        }
        assert_eq!(effective_max_connections(10, 256), 10);
    }
}
