//! The rooms each address holds (`--max-lobbies-per-address`,
//! `--max-bot-rooms-per-address`) and the server's rooms with bots (`--max-bot-rooms`),
//! for [`super::Admission`]: a creation's check and its count are one step
//! ([`HeldRooms::reserve`] hands out a [`Reservation`], counted at once, that becomes the
//! room's entry or is given back).

use crate::denied::{lock, Denied};
use crate::limits::Limits;
use parchis_protocol::RoomStatus;
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

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

/// Address → the rooms it created (or is creating) that may still count, and the
/// server's bot rooms.
#[derive(Default)]
pub(super) struct HeldRooms {
    /// Address → rooms it created (or is creating) that may still count.
    owned: Mutex<HashMap<IpAddr, Vec<Owned>>>,
    /// Rooms with bots that may still be running (any creator, restored ones too) or are
    /// being created. Locked after `owned` when both are.
    bot_rooms: Mutex<BotRooms>,
    /// The next [`Reservation`] id.
    next: AtomicU64,
}

impl HeldRooms {
    /// See [`super::Admission::reserve`] (`limits`: the limits in force).
    pub(super) fn reserve(
        &self,
        limits: &Limits,
        ip: IpAddr,
        bots: bool,
        status: impl Fn(&str) -> Option<RoomStatus>,
    ) -> Result<Reservation<'_>, Denied> {
        let mut owned = lock(&self.owned);
        let mine = owned.entry(ip).or_default();
        mine.retain(|r| r.open(&status));
        let lobbies = mine.iter().filter(|r| r.lobby(&status)).count();
        let denied = if lobbies >= limits.max_lobbies_per_address {
            Some(Denied::RateLimited {
                what: "unstarted rooms open from one address",
                retry_after: Duration::from_secs(60),
            })
        } else if bots && mine.iter().filter(|r| r.bots).count() >= limits.max_bot_rooms_per_address
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
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if bots {
            let mut all = lock(&self.bot_rooms);
            all.codes.retain(|code| {
                matches!(status(code), Some(RoomStatus::Lobby | RoomStatus::Playing))
            });
            if all.codes.len() + all.reserved.len() >= limits.max_bot_rooms {
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
            rooms: self,
            ip,
            id,
            bots,
            done: false,
        })
    }

    /// See [`super::Admission::created`].
    pub(super) fn created(&self, ip: Option<IpAddr>, code: &str, bots: bool) {
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
}

/// The place of one room being created by an address ([`crate::Admission::reserve`]): counted
/// among the address's open rooms (and the server's bot rooms) until
/// [`Reservation::created`] records the room in its place, or it is dropped (the
/// creation failed) and the place is given back.
#[must_use = "dropping a reservation gives its place back at once"]
pub struct Reservation<'a> {
    rooms: &'a HeldRooms,
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
        self.rooms.settle(self.ip, self.id, self.bots, Some(code));
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.rooms.settle(self.ip, self.id, self.bots, None);
        }
    }
}

impl std::fmt::Debug for Reservation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reservation({} #{})", self.ip, self.id)
    }
}
