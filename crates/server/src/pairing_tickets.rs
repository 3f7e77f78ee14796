//! The quick-pairing tickets of this node ([`Pairing`], kept in [`crate::state`]): who
//! waits in which queue, since when, at what μ, whom they block; and what each paired
//! ticket was given. Plain bookkeeping with the time passed in (unix ms), below the
//! routes and the matcher of [`crate::pairing`], which hold it under one mutex.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use parchis_engine::Colour;
use parchis_protocol::{PairingPool, PairingPools, PairingStatus, PAIRING_TICKET_IDLE_MS};
use parchis_ratings::{MatchConfig, Pool, Queue, Waiting};
use parchis_store::StoredTicket;
use uuid::Uuid;

/// The node's tickets and the matcher's numbers.
#[derive(Debug)]
pub struct Pairing {
    tickets: Mutex<Tickets>,
    /// The window's numbers ([`MatchConfig`]'s defaults).
    pub config: MatchConfig,
    /// How long the players of a paired room have to claim their seats, in ms
    /// (`--pairing-claim-wait-ms`, default [`DEFAULT_CLAIM_WAIT_MS`]).
    pub claim_wait_ms: i64,
}

/// The default claim wait, in ms: 60 s.
pub const DEFAULT_CLAIM_WAIT_MS: i64 = 60_000;

impl Default for Pairing {
    fn default() -> Pairing {
        Pairing::new(DEFAULT_CLAIM_WAIT_MS)
    }
}

impl Pairing {
    /// A pool holding `tickets` (a cluster's pool, loaded for one matcher round).
    pub fn holding(tickets: Tickets, claim_wait_ms: i64) -> Pairing {
        let pairing = Pairing::new(claim_wait_ms);
        *pairing.lock() = tickets;
        pairing
    }

    /// No tickets yet; paired players have `claim_wait_ms` to claim their seats.
    pub fn new(claim_wait_ms: i64) -> Pairing {
        Pairing {
            tickets: Mutex::default(),
            config: MatchConfig::default(),
            claim_wait_ms: claim_wait_ms.max(1),
        }
    }

    /// The tickets (a poisoned lock is taken over: the bookkeeping stays consistent
    /// between calls).
    pub fn lock(&self) -> MutexGuard<'_, Tickets> {
        self.tickets.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Most tickets held at once (waiting or paired); beyond, `POST /api/pairing` is
/// answered 503 `server_full`.
pub const MAX_TICKETS: usize = 10_000;

/// One ticket (stored as JSON in a cluster's `pairing_tickets.body`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// The account's display rating in the pool when they entered, shown on the seat
    /// they claim; `None` for a guest or without a rating in the pool.
    pub rating: Option<i64>,
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
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
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
        /// Until when (unix ms) the room's players may claim their seats; `None` once
        /// the game started (or the room went away): nothing more to check.
        deadline_ms: Option<i64>,
    },
    /// The room's lobby was closed because not every seat was claimed in time
    /// ([`Tickets::settle`]).
    Expired {
        /// The room.
        room: String,
        /// The ticket this player waits with again (they had claimed in time), if any.
        requeued: Option<String>,
    },
}

/// What became of a paired room whose claim wait ran out ([`Tickets::settle`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Settled {
    /// Every seat was claimed and the game started: nothing to do.
    Started,
    /// The lobby was closed; these colours had been claimed (their players wait again).
    Closed(Vec<Colour>),
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
        let waits = |t: &Ticket| matches!(t.state, State::Waiting | State::Seating);
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
        Some(status_of(t, now, config))
    }

    /// The tickets of a cluster's pool as stored ([`parchis_store::PairingStore`]); a
    /// row that does not read as a ticket is left out (logged).
    pub fn from_stored(rows: &[StoredTicket]) -> Tickets {
        let mut by_id = HashMap::new();
        for row in rows {
            match serde_json::from_value::<Ticket>(row.body.clone()) {
                Ok(t) => {
                    by_id.insert(
                        row.id.clone(),
                        Ticket {
                            polled_ms: row.polled_ms,
                            ..t
                        },
                    );
                }
                Err(e) => tracing::warn!(error = %e, "a stored pairing ticket is unreadable"),
            }
        }
        Tickets { by_id }
    }

    /// Every ticket as stored ([`stored`]), by id.
    pub fn to_stored(&self) -> BTreeMap<String, StoredTicket> {
        self.by_id
            .iter()
            .filter_map(|(id, t)| stored(id, t).map(|s| (id.clone(), s)))
            .collect()
    }
}

/// Ticket `t` as stored in a cluster's pool; `None` if it cannot be written as JSON.
pub fn stored(id: &str, t: &Ticket) -> Option<StoredTicket> {
    Some(StoredTicket {
        id: id.to_owned(),
        account: t.account,
        waiting: matches!(t.state, State::Waiting | State::Seating),
        polled_ms: t.polled_ms,
        body: serde_json::to_value(t).ok()?,
    })
}

/// The answer of `GET /api/pairing/{ticket}` for `t` at `now`.
pub fn status_of(t: &Ticket, now: i64, config: &MatchConfig) -> PairingStatus {
    {
        match &t.state {
            State::Waiting | State::Seating => PairingStatus::Waiting {
                waiting_ms: (now - t.since_ms).max(0),
                window: finite(config.window(t.since_ms, now)),
            },
            State::Paired { room, colour, .. } => PairingStatus::Paired {
                room: room.clone(),
                colour: *colour,
            },
            State::Expired { room, requeued } => PairingStatus::Expired {
                room: room.clone(),
                ticket: requeued.clone(),
            },
        }
    }
}

impl Tickets {
    /// Drops ticket `id`; whether it was held.
    pub fn leave(&mut self, id: &str) -> bool {
        self.by_id.remove(id).is_some()
    }

    /// Drops the tickets not polled for [`PAIRING_TICKET_IDLE_MS`] at `now` (a ticket
    /// being seated stays, and so does a paired one whose room's claim wait runs: the
    /// client stops polling once paired); how many.
    pub fn expire(&mut self, now: i64) -> usize {
        let before = self.by_id.len();
        self.by_id.retain(|_, t| {
            let pending = match &t.state {
                State::Seating => true,
                State::Paired { deadline_ms, .. } => deadline_ms.is_some(),
                _ => false,
            };
            pending || now - t.polled_ms <= PAIRING_TICKET_IDLE_MS
        });
        before - self.by_id.len()
    }

    /// The rooms whose claim wait ran out at `now` and whose outcome is not known yet
    /// (sorted, each once).
    pub fn overdue(&self, now: i64) -> Vec<String> {
        let mut rooms: Vec<String> = self
            .by_id
            .values()
            .filter_map(|t| match &t.state {
                State::Paired {
                    room,
                    deadline_ms: Some(d),
                    ..
                } if *d <= now => Some(room.clone()),
                _ => None,
            })
            .collect();
        rooms.sort();
        rooms.dedup();
        rooms
    }

    /// Room `room`'s claim wait ran out and the room answered `outcome` at `now`:
    /// started, every ticket stays paired and is no longer watched; closed, every ticket
    /// of the room is [`State::Expired`] (kept [`PAIRING_TICKET_IDLE_MS`] from now for
    /// its client to read), and each player whose colour is in the closed lobby's
    /// claimed ones waits again under a new ticket (id from `new_id`) with their
    /// original `since_ms`. Returns the new tickets' ids.
    pub fn settle(
        &mut self,
        room: &str,
        outcome: &Settled,
        now: i64,
        mut new_id: impl FnMut() -> String,
    ) -> Vec<String> {
        let mut back = Vec::new();
        for t in self.by_id.values_mut() {
            let State::Paired {
                room: r,
                colour,
                deadline_ms,
            } = &mut t.state
            else {
                continue;
            };
            if r != room {
                continue;
            }
            match outcome {
                Settled::Started => *deadline_ms = None,
                Settled::Closed(claimed) => {
                    let requeued = claimed.contains(colour).then(&mut new_id);
                    if let Some(id) = &requeued {
                        let again = Ticket {
                            polled_ms: now,
                            state: State::Waiting,
                            ..t.clone()
                        };
                        back.push((id.clone(), again));
                    }
                    t.state = State::Expired {
                        room: room.to_owned(),
                        requeued,
                    };
                    t.polled_ms = now;
                }
            }
        }
        let ids = back.iter().map(|(id, _)| id.clone()).collect();
        self.by_id.extend(back);
        ids
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

    /// Ticket `id` (being seated) is paired in `room` as `colour` with a claim wait
    /// until `deadline_ms`, or (`None`: the room could not be opened) waits again.
    pub fn seated(&mut self, id: &str, paired: Option<(String, Colour, i64)>) {
        if let Some(t) = self.by_id.get_mut(id) {
            t.state = match paired {
                Some((room, colour, deadline_ms)) => State::Paired {
                    room,
                    colour,
                    deadline_ms: Some(deadline_ms),
                },
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
            rating: None,
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
        t.seated("a", Some(("ROOM".into(), Colour::Yellow, 60_000)));
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

    /// A paired ticket outlives the idle limit while its claim wait runs; the wait runs
    /// out: a started room keeps its tickets paired, a closed one expires them all and
    /// puts the players who had claimed back with their original wait.
    #[test]
    fn a_claim_wait_that_runs_out_expires_the_room_and_requeues_who_claimed() {
        let config = MatchConfig::default();
        let mut t = Tickets::default();
        for (id, account, since) in [("a", 1, 0), ("b", 2, 5), ("c", 3, 7), ("d", 4, 9)] {
            t.enter(id.into(), ticket(Some(account), false, since))
                .expect("in");
        }
        let queue = t.by_id["a"].queue.clone();
        let two = |x, y| [Uuid::from_u128(x), Uuid::from_u128(y)];
        t.seat(&queue, &two(1, 2)).expect("a, b");
        t.seat(&queue, &two(3, 4)).expect("c, d");
        t.seated("a", Some(("R1".into(), Colour::Yellow, 60_000)));
        t.seated("b", Some(("R1".into(), Colour::Red, 60_000)));
        t.seated("c", Some(("R2".into(), Colour::Yellow, 61_000)));
        t.seated("d", Some(("R2".into(), Colour::Red, 61_000)));
        // Unpolled for 40 s (beyond the idle limit) but waiting for claims: kept.
        assert_eq!(t.expire(40_000), 0);
        assert!(t.overdue(59_999).is_empty());
        assert_eq!(t.overdue(61_000), ["R1", "R2"]);
        assert!(t
            .settle("R1", &Settled::Started, 61_000, || unreachable!())
            .is_empty());
        let mut n = 0;
        let new = t.settle("R2", &Settled::Closed(vec![Colour::Red]), 61_000, || {
            n += 1;
            format!("new{n}")
        });
        assert_eq!(new, ["new1"]);
        assert!(t.overdue(100_000).is_empty());
        assert_eq!(
            t.poll("c", 61_000, &config),
            Some(PairingStatus::Expired {
                room: "R2".into(),
                ticket: None
            })
        );
        assert_eq!(
            t.poll("d", 61_000, &config),
            Some(PairingStatus::Expired {
                room: "R2".into(),
                ticket: Some("new1".into())
            })
        );
        // D waits again with its original wait (since 9 ms).
        assert_eq!(
            t.poll("new1", 61_000, &config),
            Some(PairingStatus::Waiting {
                waiting_ms: 60_991,
                window: None
            })
        );
        let (waiting, _) = t.waiting();
        assert_eq!(waiting.len(), 1);
        assert_eq!(waiting[0].player, Uuid::from_u128(4));
        // C (expired, not requeued) may enter again; D already waits.
        assert_eq!(
            t.enter("d2".into(), ticket(Some(4), false, 61_000)),
            Err(Refused::AlreadyWaiting)
        );
        t.enter("c2".into(), ticket(Some(3), false, 61_000))
            .expect("c enters again");
        // The started room's tickets are no longer kept once unpolled.
        assert_eq!(t.expire(70_000), 2);
        assert!(t.poll("a", 70_000, &config).is_none());
        assert!(t.poll("c", 70_000, &config).is_some());
    }
}
