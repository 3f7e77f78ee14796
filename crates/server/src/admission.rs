//! Admission control: what one client address, and everyone together, may use.
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

use crate::config::Limits;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use parchis_protocol::{ErrorCode, RoomStatus};
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
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

/// What an [`Owned`] entry holds: a place reserved for a room being created, or the
/// room once it is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Held {
    /// A [`Reservation`] (by its id): counts as an open lobby until it ends.
    Reserved(u64),
    /// A created room, by code: counts while it is a lobby or playing.
    Room(String),
}

/// A room created (or being created) by an address, remembered to count its lobbies and
/// bot rooms.
#[derive(Clone, Debug)]
struct Owned {
    held: Held,
    bots: bool,
}

impl Owned {
    /// Whether it still counts (`status` of a created room: lobby or playing).
    fn open(&self, status: &impl Fn(&str) -> Option<RoomStatus>) -> bool {
        match &self.held {
            Held::Reserved(_) => true,
            Held::Room(code) => {
                matches!(status(code), Some(RoomStatus::Lobby | RoomStatus::Playing))
            }
        }
    }

    /// Whether it counts as an unstarted lobby (a reservation is one to be).
    fn lobby(&self, status: &impl Fn(&str) -> Option<RoomStatus>) -> bool {
        match &self.held {
            Held::Reserved(_) => true,
            Held::Room(code) => status(code) == Some(RoomStatus::Lobby),
        }
    }
}

/// The rooms with bots of the whole server: created ones by code, reserved ones by
/// reservation id.
#[derive(Default)]
struct BotRooms {
    codes: HashSet<String>,
    reserved: HashSet<u64>,
}

/// The server's admission state. Shared through [`crate::AppState`].
pub struct Admission {
    limits: Limits,
    connections: Arc<Mutex<Connections>>,
    creations: Rate,
    lookups: Rate,
    watches: Rate,
    /// Address → rooms it created (or is creating) that may still count.
    owned: Mutex<HashMap<IpAddr, Vec<Owned>>>,
    /// Rooms with bots that may still be running (any creator, restored ones too) or are
    /// being created. Locked after `owned` when both are.
    bot_rooms: Mutex<BotRooms>,
    /// The next [`Reservation`] id.
    next_reservation: AtomicU64,
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
            next_reservation: AtomicU64::new(1),
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
        self.creations.check(ip)?;
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
        let mut owned = lock(&self.owned);
        let mine = owned.entry(ip).or_default();
        mine.retain(|r| r.open(&status));
        let lobbies = mine.iter().filter(|r| r.lobby(&status)).count();
        let denied = if lobbies >= self.limits.max_lobbies_per_address {
            Some(Denied::RateLimited {
                what: "unstarted rooms open from one address",
                retry_after: Duration::from_secs(60),
            })
        } else if bots
            && mine.iter().filter(|r| r.bots).count() >= self.limits.max_bot_rooms_per_address
        {
            Some(Denied::RateLimited {
                what: "rooms with bots open from one address",
                retry_after: Duration::from_secs(60),
            })
        } else {
            None
        };
        if let Some(denied) = denied {
            if mine.is_empty() {
                owned.remove(&ip);
            }
            return Err(denied);
        }
        let id = self.next_reservation.fetch_add(1, Ordering::Relaxed);
        if bots {
            let mut all = lock(&self.bot_rooms);
            all.codes.retain(|code| {
                matches!(status(code), Some(RoomStatus::Lobby | RoomStatus::Playing))
            });
            if all.codes.len() + all.reserved.len() >= self.limits.max_bot_rooms {
                if mine.is_empty() {
                    owned.remove(&ip);
                }
                return Err(Denied::ServerFull {
                    what: "rooms with bots",
                });
            }
            all.reserved.insert(id);
        }
        mine.push(Owned {
            held: Held::Reserved(id),
            bots,
        });
        Ok(Reservation {
            admission: self,
            ip,
            id,
            bots,
            done: false,
        })
    }

    /// Remembers that `ip` (if known: `None` for rooms restored after a restart, or
    /// placed here by a node that did not name the client) created room `code`, with no
    /// check (a creation checked by [`Admission::reserve`] records its room with
    /// [`Reservation::created`]).
    pub fn created(&self, ip: Option<IpAddr>, code: &str, bots: bool) {
        if let Some(ip) = ip {
            lock(&self.owned).entry(ip).or_default().push(Owned {
                held: Held::Room(code.to_owned()),
                bots,
            });
        }
        if bots {
            lock(&self.bot_rooms).codes.insert(code.to_owned());
        }
    }

    /// Ends reservation `id` of `ip`: its place becomes room `code`'s, or is given back
    /// (`None`).
    fn settle(&self, ip: IpAddr, id: u64, bots: bool, code: Option<&str>) {
        let mut owned = lock(&self.owned);
        if let Some(mine) = owned.get_mut(&ip) {
            match (mine.iter().position(|r| r.held == Held::Reserved(id)), code) {
                (Some(i), Some(code)) => mine[i].held = Held::Room(code.to_owned()),
                (Some(i), None) => {
                    mine.swap_remove(i);
                }
                (None, _) => {}
            }
            if mine.is_empty() {
                owned.remove(&ip);
            }
        }
        if bots {
            let mut all = lock(&self.bot_rooms);
            all.reserved.remove(&id);
            if let Some(code) = code {
                all.codes.insert(code.to_owned());
            }
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

/// The place of one room being created by an address ([`Admission::reserve`]): counted
/// among the address's open rooms (and the server's bot rooms) until
/// [`Reservation::created`] records the room in its place, or it is dropped (the
/// creation failed) and the place is given back.
#[must_use = "dropping a reservation gives its place back at once"]
pub struct Reservation<'a> {
    admission: &'a Admission,
    ip: IpAddr,
    id: u64,
    bots: bool,
    done: bool,
}

impl Reservation<'_> {
    /// The room was created, with code `code`: it counts in the reservation's place from
    /// now on (while it is a lobby or playing).
    pub fn created(mut self, code: &str) {
        self.done = true;
        self.admission
            .settle(self.ip, self.id, self.bots, Some(code));
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.admission.settle(self.ip, self.id, self.bots, None);
        }
    }
}

impl std::fmt::Debug for Reservation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reservation({} #{})", self.ip, self.id)
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
            a.may_create(ip(1), false, lobby)
                .expect("within the rate")
                .created(&format!("A{n}"));
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
            a.reserve(ip(1), false, lobby)
                .expect("a lobby fits")
                .created(&format!("P{n}"));
        }
        // Three lobbies held here: a fourth is refused, and the rate (2) was not used.
        let denied = a.reserve(ip(1), false, lobby).unwrap_err();
        assert_eq!(denied.code(), ErrorCode::RateLimited);
        assert!(denied.to_string().contains("unstarted rooms"), "{denied}");
        let gone = |_: &str| None;
        assert!(a.may_create(ip(1), false, gone).is_ok(), "rate unused");
        assert!(a.may_create(ip(1), false, gone).is_ok(), "rate unused");
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
        a.may_create(ip(1), true, get)
            .expect("first bot room")
            .created("B1");
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
    fn a_reservation_counts_from_the_check_until_it_is_given_back_or_recorded() {
        let a = Admission::new(Limits {
            room_creations_per_minute: 100,
            max_lobbies_per_address: 2,
            ..limits()
        });
        let status = std::sync::Mutex::new(HashMap::<String, RoomStatus>::new());
        let get = |c: &str| status.lock().ok().and_then(|s| s.get(c).copied());
        // Two creations under way (no room registered yet): a third is refused.
        let first = a.reserve(ip(1), false, get).expect("first");
        let second = a.may_create(ip(1), false, get).expect("second");
        let denied = a.reserve(ip(1), false, get).unwrap_err();
        assert!(denied.to_string().contains("unstarted rooms"), "{denied}");
        assert!(a.reserve(ip(2), false, get).is_ok(), "another address");
        // The first creation failed: its place is free again.
        drop(first);
        let third = a.reserve(ip(1), false, get).expect("the place given back");
        // The second is a lobby now: it keeps counting in its reservation's place.
        second.created("L2");
        status
            .lock()
            .unwrap()
            .insert("L2".into(), RoomStatus::Lobby);
        assert!(a.reserve(ip(1), false, get).is_err(), "L2 and the third");
        // Started: no longer a lobby.
        status
            .lock()
            .unwrap()
            .insert("L2".into(), RoomStatus::Playing);
        assert!(a.reserve(ip(1), false, get).is_ok());
        drop(third);
        // The server's bot rooms count reservations too.
        let bots = a.reserve(ip(3), true, get).expect("bot room of 3");
        let other = a.reserve(ip(4), true, get).expect("bot room of 4");
        assert_eq!(
            a.reserve(ip(5), true, get).unwrap_err().code(),
            ErrorCode::ServerFull
        );
        drop(other);
        bots.created("B3");
        status
            .lock()
            .unwrap()
            .insert("B3".into(), RoomStatus::Playing);
        let fifth = a.reserve(ip(5), true, get).expect("one place free");
        assert_eq!(
            a.reserve(ip(6), true, get).unwrap_err().code(),
            ErrorCode::ServerFull,
            "B3 and the fifth's"
        );
        drop(fifth);
    }

    #[test]
    fn concurrent_creations_of_one_address_never_pass_its_limit_together() {
        let a = Admission::new(Limits {
            room_creations_per_minute: 1000,
            max_lobbies_per_address: 3,
            max_bot_rooms_per_address: 100,
            max_bot_rooms: 5,
            ..limits()
        });
        let gone = |_: &str| None;
        let threads = 16;
        let barrier = std::sync::Barrier::new(threads);
        let (lobbies, bots) = std::thread::scope(|s| {
            let tasks: Vec<_> = (0..threads)
                .map(|n| {
                    let (a, barrier) = (&a, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        // One address's lobbies, and bot rooms of many addresses.
                        let lobby = a.may_create(ip(1), false, gone).ok();
                        let bot = a.reserve(ip(10 + n as u8), true, gone).ok();
                        (lobby, bot)
                    })
                })
                .collect();
            let held: Vec<_> = tasks.into_iter().filter_map(|t| t.join().ok()).collect();
            let lobbies = held.iter().filter(|(l, _)| l.is_some()).count();
            let bots = held.iter().filter(|(_, b)| b.is_some()).count();
            (lobbies, bots)
        });
        assert_eq!((lobbies, bots), (3, 5));
        // Every reservation was dropped with its thread's answer: all three places are
        // free again, and no more.
        let again: Vec<_> = (0..3)
            .map(|_| a.reserve(ip(1), false, gone).expect("given back"))
            .collect();
        assert!(a.reserve(ip(1), false, gone).is_err());
        drop(again);
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
