//! The quick-pairing tickets of this node ([`Pairing`], kept in [`crate::state`]): who
//! waits in which queue, since when, at what μ, whom they block; and what each paired
//! ticket was given. Plain bookkeeping with the time passed in (unix ms), below the
//! routes and the matcher of [`crate::pairing`], which hold it under one mutex.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use parchis_engine::Colour;
use parchis_protocol::{PairingPool, PairingPools, PairingStatus, PAIRING_TICKET_IDLE_MS};
use parchis_ratings::{MatchConfig, Pool, Queue, Waiting};
use uuid::Uuid;

/// The node's tickets and the matcher's numbers.
#[derive(Debug, Default)]
pub struct Pairing {
    tickets: Mutex<Tickets>,
    /// The window's numbers ([`MatchConfig`]'s defaults).
    pub config: MatchConfig,
}

impl Pairing {
    /// The tickets (a poisoned lock is taken over: the bookkeeping stays consistent
    /// between calls).
    pub fn lock(&self) -> MutexGuard<'_, Tickets> {
        self.tickets.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Most tickets held at once (waiting or paired); beyond, `POST /api/pairing` is
/// answered 503 `server_full`.
pub const MAX_TICKETS: usize = 10_000;

/// One ticket.
#[derive(Clone, Debug)]
pub struct Ticket {
    /// The player in the matcher: the account's id, or a fresh id for a guest.
    pub player: Uuid,
    /// The logged-in player's account (`None`: a guest).
    pub account: Option<Uuid>,
    /// The name the seat shows (the username, or the guest's name).
    pub name: String,
    /// The queue waited in.
    pub queue: Queue,
    /// The player's μ in the queue's pool when they entered (25 without a rating).
    pub mu: f64,
    /// When they entered (unix ms).
    pub since_ms: i64,
    /// When the ticket was last polled (or made).
    pub polled_ms: i64,
    /// The accounts this player blocks (read when entering).
    pub blocks: Vec<Uuid>,
    /// Waiting, being seated, or paired.
    pub state: State,
}

/// Where a ticket is.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    /// In its queue.
    Waiting,
    /// In a group whose room is being opened (not offered to the matcher again).
    Seating,
    /// Its room is open: the room's code and the colour reserved for it.
    Paired {
        /// The room.
        room: String,
        /// The reserved colour.
        colour: Colour,
    },
}

/// Why a ticket was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// [`MAX_TICKETS`] are held.
    Full,
    /// The account already has a ticket that is not paired.
    AlreadyWaiting,
}

/// The tickets, by ticket id.
#[derive(Debug, Default)]
pub struct Tickets {
    by_id: HashMap<String, Ticket>,
}

impl Tickets {
    /// Takes `ticket` under `id`.
    ///
    /// # Errors
    /// [`Refused`].
    pub fn enter(&mut self, id: String, ticket: Ticket) -> Result<(), Refused> {
        if self.by_id.len() >= MAX_TICKETS {
            return Err(Refused::Full);
        }
        let waits = |t: &Ticket| !matches!(t.state, State::Paired { .. });
        if ticket.account.is_some()
            && self
                .by_id
                .values()
                .any(|t| t.account == ticket.account && waits(t))
        {
            return Err(Refused::AlreadyWaiting);
        }
        self.by_id.insert(id, ticket);
        Ok(())
    }

    /// Ticket `id`'s state at `now` (it counts as polled), or `None` for an unknown one.
    pub fn poll(&mut self, id: &str, now: i64, config: &MatchConfig) -> Option<PairingStatus> {
        let t = self.by_id.get_mut(id)?;
        t.polled_ms = now;
        Some(match &t.state {
            State::Waiting | State::Seating => PairingStatus::Waiting {
                waiting_ms: (now - t.since_ms).max(0),
                window: finite(config.window(t.since_ms, now)),
            },
            State::Paired { room, colour } => PairingStatus::Paired {
                room: room.clone(),
                colour: *colour,
            },
        })
    }

    /// Drops ticket `id`; whether it was held.
    pub fn leave(&mut self, id: &str) -> bool {
        self.by_id.remove(id).is_some()
    }

    /// Drops the tickets not polled for [`PAIRING_TICKET_IDLE_MS`] at `now` (a ticket
    /// being seated stays); how many.
    pub fn expire(&mut self, now: i64) -> usize {
        let before = self.by_id.len();
        self.by_id.retain(|_, t| {
            t.state == State::Seating || now - t.polled_ms <= PAIRING_TICKET_IDLE_MS
        });
        before - self.by_id.len()
    }

    /// The waiting players, for [`parchis_ratings::match_groups`], and the blocked pairs.
    pub fn waiting(&self) -> (Vec<Waiting>, HashSet<(Uuid, Uuid)>) {
        let mut blocks = HashSet::new();
        let waiting = self
            .by_id
            .values()
            .filter(|t| t.state == State::Waiting)
            .map(|t| {
                blocks.extend(t.blocks.iter().map(|&b| (t.player, b)));
                Waiting {
                    player: t.player,
                    guest: t.account.is_none(),
                    queue: t.queue.clone(),
                    mu: t.mu,
                    since_ms: t.since_ms,
                }
            })
            .collect();
        (waiting, blocks)
    }

    /// The waiting tickets of `players` in `queue`, in that order, marked
    /// [`State::Seating`]: `(ticket id, ticket)`. `None` (nothing marked) if one of
    /// them is no longer waiting there.
    pub fn seat(&mut self, queue: &Queue, players: &[Uuid]) -> Option<Vec<(String, Ticket)>> {
        let mut found = Vec::new();
        for p in players {
            let (id, t) = self
                .by_id
                .iter()
                .find(|(_, t)| t.player == *p && t.queue == *queue && t.state == State::Waiting)?;
            found.push((id.clone(), t.clone()));
        }
        for (id, _) in &found {
            if let Some(t) = self.by_id.get_mut(id) {
                t.state = State::Seating;
            }
        }
        Some(found)
    }

    /// Ticket `id` (being seated) is paired in `room` as `colour`, or (`None`: the room
    /// could not be opened) waits again.
    pub fn seated(&mut self, id: &str, paired: Option<(String, Colour)>) {
        if let Some(t) = self.by_id.get_mut(id) {
            t.state = match paired {
                Some((room, colour)) => State::Paired { room, colour },
                None => State::Waiting,
            };
        }
    }

    /// Players waiting per queue: every queue with somebody waiting, and always
    /// `online` with 2 and 4 seats, rated and casual.
    pub fn pools(&self) -> PairingPools {
        let mut counts: BTreeMap<(String, u8, bool), u32> = BTreeMap::new();
        if let Ok(online) = Pool::parse("online") {
            for seats in [2, 4] {
                for rated in [false, true] {
                    counts.insert((online.to_string(), seats, rated), 0);
                }
            }
        }
        for t in self.by_id.values() {
            if matches!(t.state, State::Waiting | State::Seating) {
                let key = (t.queue.pool.to_string(), t.queue.seats, t.queue.rated);
                *counts.entry(key).or_default() += 1;
            }
        }
        PairingPools {
            pools: counts
                .into_iter()
                .map(|((preset, seats, rated), waiting)| PairingPool {
                    preset,
                    seats,
                    rated,
                    waiting,
                })
                .collect(),
        }
    }
}

/// `window`, or `None` when unlimited.
pub fn finite(window: f64) -> Option<f64> {
    window.is_finite().then_some(window)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(account: Option<u128>, rated: bool, now: i64) -> Ticket {
        let player = Uuid::from_u128(account.unwrap_or(now as u128 + 1_000));
        Ticket {
            player,
            account: account.map(Uuid::from_u128),
            name: "P".into(),
            queue: Queue {
                pool: Pool::parse("online").expect("pool"),
                seats: 2,
                rated,
            },
            mu: 25.0,
            since_ms: now,
            polled_ms: now,
            blocks: vec![],
            state: State::Waiting,
        }
    }

    #[test]
    fn a_ticket_waits_widens_is_dropped_unpolled_and_an_account_waits_once() {
        let config = MatchConfig::default();
        let mut t = Tickets::default();
        t.enter("a".into(), ticket(Some(1), true, 0)).expect("in");
        assert_eq!(
            t.enter("b".into(), ticket(Some(1), false, 0)),
            Err(Refused::AlreadyWaiting)
        );
        let first = t.poll("a", 0, &config).expect("known");
        assert_eq!(
            first,
            PairingStatus::Waiting {
                waiting_ms: 0,
                window: Some(2.0)
            }
        );
        let later = t.poll("a", 20_000, &config).expect("known");
        assert_eq!(
            later,
            PairingStatus::Waiting {
                waiting_ms: 20_000,
                window: Some(7.0)
            }
        );
        // Polled at 20 s: alive at 50 s, gone after.
        assert_eq!(t.expire(50_000), 0);
        assert_eq!(t.expire(50_001), 1);
        assert_eq!(t.poll("a", 50_001, &config), None);
        let pools = t.pools();
        assert_eq!(pools.pools.len(), 4);
        assert!(pools.pools.iter().all(|p| p.waiting == 0));
    }

    #[test]
    fn seating_takes_waiting_tickets_only_and_a_failed_room_puts_them_back() {
        let mut t = Tickets::default();
        t.enter("a".into(), ticket(Some(1), true, 0)).expect("in");
        t.enter("b".into(), ticket(Some(2), true, 5)).expect("in");
        let queue = t.by_id["a"].queue.clone();
        let players = [Uuid::from_u128(1), Uuid::from_u128(2)];
        let seated = t.seat(&queue, &players).expect("both wait");
        assert_eq!(seated.len(), 2);
        assert!(t.seat(&queue, &players).is_none(), "not twice");
        assert_eq!(t.waiting().0.len(), 0);
        assert_eq!(t.pools().pools.iter().map(|p| p.waiting).sum::<u32>(), 2);
        t.seated("a", Some(("ROOM".into(), Colour::Yellow)));
        t.seated("b", None);
        assert_eq!(t.waiting().0.len(), 1);
        assert_eq!(
            t.poll("a", 10, &MatchConfig::default()),
            Some(PairingStatus::Paired {
                room: "ROOM".into(),
                colour: Colour::Yellow
            })
        );
    }
}
