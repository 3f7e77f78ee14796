//! What the director asks of its driver ([`Effect`]): rooms to create, start, pause,
//! resume or close, seats to expel, the bracket to publish. [`Tournament::commit`] folds
//! durable events in and returns the effects they call for; [`Tournament::outstanding`]
//! returns every effect still owed by the state alone, for a driver that restarts. Every
//! effect is idempotent at its receiver (a room is named by a deterministic code), so
//! doing one twice is harmless and a crash between storing and acting loses nothing.

use crate::event::{Entry, Event};
use crate::ids::{room_code, BotSpec, EntrantId, MatchId, Ms};
use crate::state::{FoldError, Match, MatchStatus, Phase, Tournament};
use parchis_engine::Colour;
use std::collections::BTreeSet;
use uuid::Uuid;

/// A seat reserved for one player of a match.
#[derive(Clone, Debug, PartialEq)]
pub struct ReservedSeat {
    /// The colour.
    pub colour: Colour,
    /// The entrant it belongs to.
    pub entrant: EntrantId,
    /// The only account that may take it; `None` for a bot.
    pub account: Option<Uuid>,
    /// Shown name.
    pub name: String,
    /// The bot playing it, for a bot seat.
    pub bot: Option<BotSpec>,
}

/// A match's room to create (if no room has that code yet).
#[derive(Clone, Debug, PartialEq)]
pub struct RoomSpec {
    /// The tournament.
    pub tournament: Uuid,
    /// The match.
    pub id: MatchId,
    /// Its round.
    pub round: u32,
    /// The room code: [`room_code`] of the match's attempt.
    pub room: String,
    /// The rule set name of every game.
    pub preset: String,
    /// The turn clock in seconds.
    pub turn_clock_secs: u32,
    /// Spectators see the game this many throws behind.
    pub spectator_delay_throws: u32,
    /// The reserved seats.
    pub seats: Vec<ReservedSeat>,
}

/// Something the driver must do, after the events that called for it are durable.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Create a match's room with its seats reserved; answer with
    /// [`crate::Input::RoomOpened`].
    CreateRoom(RoomSpec),
    /// Start the room's game now, without the `absent` colours (whose entrants forfeited
    /// or were disqualified); answer with [`crate::Input::GameStarted`].
    StartRoom {
        /// The match.
        id: MatchId,
        /// The room code.
        room: String,
        /// Seats left empty.
        absent: Vec<Colour>,
    },
    /// Stop the running game's turn clock.
    PauseClock {
        /// The match.
        id: MatchId,
        /// The room code.
        room: String,
    },
    /// Run it again (a fresh clock for the player to act).
    ResumeClock {
        /// The match.
        id: MatchId,
        /// The room code.
        room: String,
    },
    /// Close a superseded room (its match was replayed, awarded or forfeited) without a
    /// result; answer with [`crate::Input::RoomClosed`].
    CloseRoom {
        /// The room code.
        room: String,
    },
    /// The disqualified entrant's seats abandon the running game (R-LEAVE), which goes
    /// on without them.
    Expel {
        /// The match.
        id: MatchId,
        /// The room code.
        room: String,
        /// Its colours.
        colours: Vec<Colour>,
    },
    /// The bracket or standings changed: publish [`Tournament::view`] to subscribers.
    Publish,
}

impl Tournament {
    /// Folds in `entries` (from [`Tournament::handle`], now durable) and returns the
    /// effects they call for, in order, ending with one [`Effect::Publish`].
    pub fn commit(&mut self, entries: &[Entry]) -> Result<Vec<Effect>, FoldError> {
        let mut out = Vec::new();
        for entry in entries {
            let stale_before = self.stale_rooms.clone();
            let dq_match = match &entry.event {
                Event::Disqualified { entrant, .. } => self.current_match_of(*entrant),
                _ => None,
            };
            self.apply(entry)?;
            for room in self.stale_rooms.difference(&stale_before) {
                out.push(Effect::CloseRoom { room: room.clone() });
            }
            match &entry.event {
                Event::RoundStarted { round } => {
                    for m in self.matches.values().filter(|m| m.round == *round) {
                        out.extend(self.create_room(m));
                    }
                }
                Event::ReplayOrdered { id, .. } => {
                    out.extend(self.matches.get(id).and_then(|m| self.create_room(m)));
                }
                Event::RoomOpened { id, .. }
                | Event::Seated { id, .. }
                | Event::NoShow { id, .. } => {
                    out.extend(self.matches.get(id).and_then(|m| self.start_room(m)));
                }
                Event::Resumed { id, .. } => {
                    out.extend(self.matches.get(id).and_then(|m| self.resume_room(m)));
                }
                Event::Paused { id, .. } => {
                    out.extend(self.matches.get(id).and_then(|m| self.pause_room(m)));
                }
                Event::Disqualified { .. } => {
                    if let Some(m) = dq_match.and_then(|id| self.matches.get(&id)) {
                        out.extend(self.expel(m));
                        out.extend(self.start_room(m));
                    }
                }
                _ => {}
            }
        }
        if !entries.is_empty() {
            out.push(Effect::Publish);
        }
        Ok(out)
    }

    /// Every effect the state still owes (after a restart, or on a periodic sweep):
    /// rooms of started rounds not yet opened, rooms whose entrants are all seated,
    /// pauses, expulsions, superseded rooms to close, and a publish.
    pub fn outstanding(&self) -> Vec<Effect> {
        let mut out: Vec<Effect> = Vec::new();
        for m in self.matches.values() {
            out.extend(self.create_room(m));
            out.extend(self.start_room(m));
            out.extend(self.pause_room(m));
            out.extend(self.expel(m));
        }
        out.extend(
            self.stale_rooms
                .iter()
                .map(|room| Effect::CloseRoom { room: room.clone() }),
        );
        out.push(Effect::Publish);
        out
    }

    /// When the director must next be woken with [`crate::Input::Tick`] (unix ms): the
    /// registration deadline, round 1's start time, the earliest no-show time of an open
    /// match with someone absent. `None`: nothing is due by time.
    pub fn next_wake(&self) -> Option<Ms> {
        match self.phase {
            Phase::Registering => Some(self.settings.registration_deadline_ms),
            Phase::Finished => None,
            Phase::Running => {
                let start = self
                    .rounds
                    .last()
                    .filter(|r| !r.started)
                    .and(self.settings.start_time_ms);
                let no_show = self
                    .matches
                    .values()
                    .filter(|m| m.contenders().iter().any(|&e| !self.is_present(m, e)))
                    .filter_map(|m| self.no_show_deadline(m))
                    .min();
                start.into_iter().chain(no_show).min()
            }
        }
    }

    fn create_room(&self, m: &Match) -> Option<Effect> {
        let started = self.rounds.iter().any(|r| r.number == m.round && r.started);
        if m.status != MatchStatus::Ready || !started {
            return None;
        }
        let seats = m
            .seats
            .iter()
            .filter_map(|s| {
                let p = self
                    .entrants
                    .get(&s.entrant)?
                    .players
                    .get(s.player as usize)?;
                Some(ReservedSeat {
                    colour: s.colour,
                    entrant: s.entrant,
                    account: p.account,
                    name: p.name.clone(),
                    bot: p.bot,
                })
            })
            .collect();
        Some(Effect::CreateRoom(RoomSpec {
            tournament: self.id,
            id: m.id,
            round: m.round,
            room: room_code(self.id, m.id, m.attempt),
            preset: self.shape.rules.name(),
            turn_clock_secs: self.settings.turn_clock_secs,
            spectator_delay_throws: self.settings.spectator_delay_throws,
            seats,
        }))
    }

    /// Start the room once every entrant still in it is seated (never while paused).
    fn start_room(&self, m: &Match) -> Option<Effect> {
        let contenders = m.contenders();
        let ready = m.status == MatchStatus::Open
            && !m.paused
            && contenders.len() >= 2
            && contenders.iter().all(|&e| self.is_present(m, e));
        ready.then(|| Effect::StartRoom {
            id: m.id,
            room: m.room.clone().unwrap_or_default(),
            absent: self.colours_of(m, &m.out),
        })
    }

    fn pause_room(&self, m: &Match) -> Option<Effect> {
        (m.status == MatchStatus::Playing && m.paused).then(|| Effect::PauseClock {
            id: m.id,
            room: m.room.clone().unwrap_or_default(),
        })
    }

    fn resume_room(&self, m: &Match) -> Option<Effect> {
        match m.status {
            MatchStatus::Playing => Some(Effect::ResumeClock {
                id: m.id,
                room: m.room.clone().unwrap_or_default(),
            }),
            _ => self.start_room(m),
        }
    }

    /// The disqualified entrants' seats in a running game.
    fn expel(&self, m: &Match) -> Option<Effect> {
        let dq: BTreeSet<EntrantId> = m
            .out
            .iter()
            .copied()
            .filter(|&e| self.is_disqualified(e))
            .collect();
        let colours = self.colours_of(m, &dq);
        (m.status == MatchStatus::Playing && !colours.is_empty()).then(|| Effect::Expel {
            id: m.id,
            room: m.room.clone().unwrap_or_default(),
            colours,
        })
    }

    fn colours_of(&self, m: &Match, entrants: &BTreeSet<EntrantId>) -> Vec<Colour> {
        m.seats
            .iter()
            .filter(|s| entrants.contains(&s.entrant))
            .map(|s| s.colour)
            .collect()
    }
}
