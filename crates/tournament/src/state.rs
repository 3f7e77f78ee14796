//! The tournament's state and the one fold that builds it from stored events
//! ([`Tournament::apply`]). Nothing here decides: the fold only records, and refuses an
//! event that does not fit the state (a corrupt or reordered log).
//!
//! Why ~620 lines: the state's types (entrants, matches, rounds, referee actions) and the
//! fold's one arm per event read together; the fold is what the types are for.

use crate::event::{DrawnTable, Entry, Event, How, EVENT_FORMAT};
use crate::ids::{EntrantId, MatchId, Ms, Player};
use crate::seating::Seat;
use crate::settings::{Settings, Shape};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// A tournament's lifecycle, as `GET /api/tournaments/{id}` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Taking registrations.
    Registering,
    /// Drawn; rounds being played.
    Running,
    /// Champion known (or cancelled for want of entrants).
    Finished,
}

/// Where an entrant stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntrantStatus {
    /// A team waiting for the partner's confirmation.
    PendingPartner,
    /// Registered (and, after the close, drawn).
    Registered,
    /// Withdrew before the close.
    Withdrawn,
    /// A team still unconfirmed at the close: not drawn.
    Dropped,
    /// Disqualified by a referee.
    Disqualified,
}

/// An entrant: a team of two accounts (`pairs`), one account, or bots.
#[derive(Clone, Debug, PartialEq)]
pub struct Entrant {
    /// Its id.
    pub id: EntrantId,
    /// Shown name.
    pub name: String,
    /// Its players, the registrant first.
    pub players: Vec<Player>,
    /// Where it stands.
    pub status: EntrantStatus,
    /// Its seed (1 = best), from the close on.
    pub seed: Option<u32>,
}

impl Entrant {
    /// Whether `account` is one of its players.
    pub fn has(&self, account: Uuid) -> bool {
        self.players.iter().any(|p| p.account == Some(account))
    }
}

/// A match's lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchStatus {
    /// Drawn; its round has not started.
    Pending,
    /// Its round started: its room is to be created.
    Ready,
    /// Its room exists; waiting for the entrants to sit (the no-show clock runs).
    Open,
    /// Its game runs (`game_id` set).
    Playing,
    /// Its game was played to the end.
    Finished,
    /// Decided without a full game: too few entrants left (no-shows, disqualifications).
    Forfeited,
    /// Decided by a referee.
    Awarded,
    /// No game: its entrants go through (a knockout table of too few, a swiss bye).
    Bye,
}

impl MatchStatus {
    /// Decided (its places are known).
    pub fn decided(self) -> bool {
        matches!(
            self,
            MatchStatus::Finished
                | MatchStatus::Forfeited
                | MatchStatus::Awarded
                | MatchStatus::Bye
        )
    }
}

/// One match: a table of a round, one game.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    /// Its id.
    pub id: MatchId,
    /// Its round.
    pub round: u32,
    /// Its position in the round (bracket order in a knockout).
    pub table: u32,
    /// Its entrants as drawn.
    pub entrants: Vec<EntrantId>,
    /// The reserved seats.
    pub seats: Vec<Seat>,
    /// Lifecycle.
    pub status: MatchStatus,
    /// 0, then one more per replay ordered (part of the room code).
    pub attempt: u32,
    /// Its room, once opened.
    pub room: Option<String>,
    /// The no-show clock counts from here (room opened, or clock resumed).
    pub noshow_from: Option<Ms>,
    /// Accounts seated in the room.
    pub seated: BTreeSet<Uuid>,
    /// The current game, once started.
    pub game_id: Option<Uuid>,
    /// Entrants out of this match: no-shows and the disqualified.
    pub out: BTreeSet<EntrantId>,
    /// Once decided: the entrants still in it, best first.
    pub places: Vec<EntrantId>,
    /// Once decided: how.
    pub how: Option<How>,
    /// A referee paused its clock.
    pub paused: bool,
    /// Games of earlier attempts (replays ordered).
    pub replaced_games: Vec<Uuid>,
}

impl Match {
    /// Entrants still in the match (drawn, not out), in table order.
    pub fn contenders(&self) -> Vec<EntrantId> {
        self.entrants
            .iter()
            .copied()
            .filter(|e| !self.out.contains(e))
            .collect()
    }

    /// The winner, once decided.
    pub fn winner(&self) -> Option<EntrantId> {
        if self.status.decided() {
            self.places.first().copied()
        } else {
            None
        }
    }
}

/// What a referee did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefereeKind {
    /// Paused a match's clock.
    Pause,
    /// Resumed it.
    Resume,
    /// Awarded a match.
    Award,
    /// Disqualified an entrant.
    Disqualify,
    /// Ordered a match replayed.
    Replay,
}

/// One stored referee action, shown on the tournament page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefereeAction {
    /// When (unix ms).
    pub at: Ms,
    /// The referee's account.
    pub by: Uuid,
    /// What.
    pub kind: RefereeKind,
    /// The match concerned.
    pub match_id: Option<MatchId>,
    /// The entrant concerned.
    pub entrant: Option<EntrantId>,
    /// The reason given.
    pub reason: Option<String>,
}

/// A drawn round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    /// 1-based.
    pub number: u32,
    /// Its matches in table order.
    pub tables: Vec<MatchId>,
    /// Started (its rooms are created).
    pub started: bool,
}

/// A stored log that does not fold: wrong format, out of order, or naming what does not
/// exist.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FoldError {
    /// The log is empty or does not start with `created`.
    #[error("the log must start with a created event")]
    NotCreated,
    /// An event of another format version.
    #[error("event format {0} is not {EVENT_FORMAT}")]
    Format(u16),
    /// The event does not fit the state.
    #[error("event does not fit the state: {0}")]
    Misfit(String),
}

fn misfit(what: impl Into<String>) -> FoldError {
    FoldError::Misfit(what.into())
}

/// A tournament: the fold of its events.
#[derive(Clone, Debug, PartialEq)]
pub struct Tournament {
    pub(crate) id: Uuid,
    pub(crate) organiser: Uuid,
    pub(crate) settings: Settings,
    pub(crate) shape: Shape,
    pub(crate) seed: [u8; 32],
    pub(crate) created_at: Ms,
    pub(crate) referees: BTreeSet<Uuid>,
    /// The officials' usernames (organiser and referees), where stored.
    pub(crate) official_names: BTreeMap<Uuid, String>,
    pub(crate) phase: Phase,
    pub(crate) entrants: BTreeMap<EntrantId, Entrant>,
    pub(crate) seeds: Vec<EntrantId>,
    pub(crate) total_rounds: u32,
    pub(crate) rounds: Vec<Round>,
    pub(crate) matches: BTreeMap<MatchId, Match>,
    pub(crate) champion: Option<EntrantId>,
    pub(crate) cancelled: Option<String>,
    pub(crate) referee_log: Vec<RefereeAction>,
    pub(crate) stale_rooms: BTreeSet<String>,
}

impl Tournament {
    /// The state after `entries` (the first must be `created`).
    pub fn from_entries(entries: &[Entry]) -> Result<Tournament, FoldError> {
        let (first, rest) = entries.split_first().ok_or(FoldError::NotCreated)?;
        if first.v != EVENT_FORMAT {
            return Err(FoldError::Format(first.v));
        }
        let Event::Created {
            id,
            organiser,
            organiser_name,
            settings,
            seed,
        } = &first.event
        else {
            return Err(FoldError::NotCreated);
        };
        let shape = settings
            .shape()
            .map_err(|e| misfit(format!("stored settings: {e}")))?;
        let mut t = Tournament {
            id: *id,
            organiser: *organiser,
            settings: settings.clone(),
            shape,
            seed: *seed,
            created_at: first.at,
            referees: BTreeSet::new(),
            official_names: BTreeMap::from([(*organiser, organiser_name.clone())]),
            phase: Phase::Registering,
            entrants: BTreeMap::new(),
            seeds: Vec::new(),
            total_rounds: 0,
            rounds: Vec::new(),
            matches: BTreeMap::new(),
            champion: None,
            cancelled: None,
            referee_log: Vec::new(),
            stale_rooms: BTreeSet::new(),
        };
        for e in rest {
            t.apply(e)?;
        }
        Ok(t)
    }

    /// Folds one more event in.
    // Long (~150 lines): one short arm per event; split, the fold would no longer read as
    // one table of what each event does.
    pub fn apply(&mut self, entry: &Entry) -> Result<(), FoldError> {
        if entry.v != EVENT_FORMAT {
            return Err(FoldError::Format(entry.v));
        }
        let at = entry.at;
        match &entry.event {
            Event::Created { .. } => return Err(misfit("a second created")),
            Event::RefereeNamed { account, name } => {
                self.referees.insert(*account);
                self.official_names.insert(*account, name.clone());
            }
            Event::Registered {
                entrant,
                name,
                players,
                confirmed,
            } => {
                self.expect_phase(Phase::Registering)?;
                if self.entrants.contains_key(entrant) {
                    return Err(misfit(format!("entrant {entrant} registered twice")));
                }
                let status = if *confirmed {
                    EntrantStatus::Registered
                } else {
                    EntrantStatus::PendingPartner
                };
                self.entrants.insert(
                    *entrant,
                    Entrant {
                        id: *entrant,
                        name: name.clone(),
                        players: players.clone(),
                        status,
                        seed: None,
                    },
                );
            }
            Event::PartnerConfirmed { entrant } => {
                self.entrant_mut(*entrant)?.status = EntrantStatus::Registered;
            }
            Event::Withdrawn { entrant } => {
                self.entrant_mut(*entrant)?.status = EntrantStatus::Withdrawn;
            }
            Event::Closed {
                dropped,
                bots,
                seeds,
                rounds,
                ..
            } => self.fold_closed(dropped, bots, seeds, *rounds)?,
            Event::Cancelled { reason } => {
                self.phase = Phase::Finished;
                self.cancelled = Some(reason.clone());
            }
            Event::RoundDrawn { round, tables } => self.fold_round(*round, tables)?,
            Event::RoundStarted { round } => {
                let r = self
                    .rounds
                    .iter_mut()
                    .find(|r| r.number == *round)
                    .ok_or_else(|| misfit(format!("round {round} not drawn")))?;
                r.started = true;
                for id in r.tables.clone() {
                    let m = self.match_mut(id)?;
                    if m.status == MatchStatus::Pending {
                        m.status = MatchStatus::Ready;
                    }
                }
            }
            Event::RoomOpened { id, room } => {
                let m = self.match_mut(*id)?;
                if m.status != MatchStatus::Ready {
                    return Err(misfit(format!("room of match {id} opened when not ready")));
                }
                m.status = MatchStatus::Open;
                m.room = Some(room.clone());
                m.noshow_from = Some(at);
            }
            Event::RoomUnwanted { room } => {
                self.stale_rooms.insert(room.clone());
            }
            Event::RoomClosed { room } => {
                self.stale_rooms.remove(room);
            }
            Event::Seated { id, account } => {
                self.match_mut(*id)?.seated.insert(*account);
            }
            Event::NoShow { id, absent } => {
                self.match_mut(*id)?.out.extend(absent.iter().copied());
            }
            Event::GameStarted { id, game_id } => {
                let m = self.match_mut(*id)?;
                m.status = MatchStatus::Playing;
                m.game_id = Some(*game_id);
            }
            Event::Decided { id, places, how } => self.fold_decided(*id, places, how, at)?,
            Event::Paused { id, by } => {
                self.match_mut(*id)?.paused = true;
                self.log(at, *by, RefereeKind::Pause, Some(*id), None, None);
            }
            Event::Resumed { id, by } => {
                let m = self.match_mut(*id)?;
                m.paused = false;
                if m.status == MatchStatus::Open {
                    m.noshow_from = Some(at);
                }
                self.log(at, *by, RefereeKind::Resume, Some(*id), None, None);
            }
            Event::Disqualified {
                entrant,
                by,
                reason,
            } => {
                self.entrant_mut(*entrant)?.status = EntrantStatus::Disqualified;
                if let Some(m) = self.current_match_of_mut(*entrant) {
                    m.out.insert(*entrant);
                }
                let r = Some(reason.clone());
                self.log(at, *by, RefereeKind::Disqualify, None, Some(*entrant), r);
            }
            Event::ReplayOrdered { id, by, reason } => {
                self.fold_replay(*id)?;
                let r = Some(reason.clone());
                self.log(at, *by, RefereeKind::Replay, Some(*id), None, r);
            }
            Event::Finished { champion } => {
                self.phase = Phase::Finished;
                self.champion = *champion;
            }
        }
        Ok(())
    }

    fn fold_closed(
        &mut self,
        dropped: &[EntrantId],
        bots: &[(EntrantId, String, Vec<Player>)],
        seeds: &[EntrantId],
        rounds: u32,
    ) -> Result<(), FoldError> {
        self.expect_phase(Phase::Registering)?;
        for e in dropped {
            self.entrant_mut(*e)?.status = EntrantStatus::Dropped;
        }
        for (id, name, players) in bots {
            self.entrants.insert(
                *id,
                Entrant {
                    id: *id,
                    name: name.clone(),
                    players: players.clone(),
                    status: EntrantStatus::Registered,
                    seed: None,
                },
            );
        }
        for (i, e) in seeds.iter().enumerate() {
            self.entrant_mut(*e)?.seed = Some(i as u32 + 1);
        }
        self.seeds = seeds.to_vec();
        self.total_rounds = rounds;
        self.phase = Phase::Running;
        Ok(())
    }

    fn fold_round(&mut self, round: u32, tables: &[DrawnTable]) -> Result<(), FoldError> {
        self.expect_phase(Phase::Running)?;
        if round as usize != self.rounds.len() + 1 {
            return Err(misfit(format!("round {round} drawn out of order")));
        }
        for t in tables {
            if self.matches.contains_key(&t.id) {
                return Err(misfit(format!("match {} drawn twice", t.id)));
            }
            let status = if t.bye {
                MatchStatus::Bye
            } else {
                MatchStatus::Pending
            };
            let places = if t.bye {
                t.entrants.clone()
            } else {
                Vec::new()
            };
            self.matches.insert(
                t.id,
                Match {
                    id: t.id,
                    round,
                    table: t.table,
                    entrants: t.entrants.clone(),
                    seats: t.seats.clone(),
                    status,
                    attempt: 0,
                    room: None,
                    noshow_from: None,
                    seated: BTreeSet::new(),
                    game_id: None,
                    out: BTreeSet::new(),
                    places,
                    how: None,
                    paused: false,
                    replaced_games: Vec::new(),
                },
            );
        }
        self.rounds.push(Round {
            number: round,
            tables: tables.iter().map(|t| t.id).collect(),
            started: false,
        });
        Ok(())
    }

    fn fold_decided(
        &mut self,
        id: MatchId,
        places: &[EntrantId],
        how: &How,
        at: Ms,
    ) -> Result<(), FoldError> {
        let m = self.match_mut(id)?;
        let room_active = matches!(m.status, MatchStatus::Open | MatchStatus::Playing);
        let room = m.room.clone();
        m.status = match how {
            How::Played { .. } => MatchStatus::Finished,
            How::Forfeit => MatchStatus::Forfeited,
            How::Awarded { .. } => MatchStatus::Awarded,
        };
        m.places = places.to_vec();
        m.how = Some(how.clone());
        m.paused = false;
        let played = matches!(how, How::Played { .. });
        if let (true, false, Some(room)) = (room_active, played, room) {
            self.stale_rooms.insert(room);
        }
        if let How::Awarded { by, reason } = how {
            let r = Some(reason.clone());
            self.log(at, *by, RefereeKind::Award, Some(id), None, r);
        }
        Ok(())
    }

    fn fold_replay(&mut self, id: MatchId) -> Result<(), FoldError> {
        let disqualified: BTreeSet<EntrantId> = self
            .entrants
            .values()
            .filter(|e| e.status == EntrantStatus::Disqualified)
            .map(|e| e.id)
            .collect();
        let m = self.match_mut(id)?;
        let room_active = matches!(m.status, MatchStatus::Open | MatchStatus::Playing);
        let room = m.room.take();
        if let Some(g) = m.game_id.take() {
            m.replaced_games.push(g);
        }
        m.attempt += 1;
        m.status = MatchStatus::Ready;
        m.noshow_from = None;
        m.seated.clear();
        m.out = m
            .entrants
            .iter()
            .copied()
            .filter(|e| disqualified.contains(e))
            .collect();
        m.places.clear();
        m.how = None;
        m.paused = false;
        if let (true, Some(room)) = (room_active, room) {
            self.stale_rooms.insert(room);
        }
        Ok(())
    }

    fn log(
        &mut self,
        at: Ms,
        by: Uuid,
        kind: RefereeKind,
        match_id: Option<MatchId>,
        entrant: Option<EntrantId>,
        reason: Option<String>,
    ) {
        self.referee_log.push(RefereeAction {
            at,
            by,
            kind,
            match_id,
            entrant,
            reason,
        });
    }

    fn expect_phase(&self, phase: Phase) -> Result<(), FoldError> {
        if self.phase == phase {
            Ok(())
        } else {
            Err(misfit(format!("expected {phase:?}, is {:?}", self.phase)))
        }
    }

    fn entrant_mut(&mut self, id: EntrantId) -> Result<&mut Entrant, FoldError> {
        self.entrants
            .get_mut(&id)
            .ok_or_else(|| misfit(format!("no entrant {id}")))
    }

    fn match_mut(&mut self, id: MatchId) -> Result<&mut Match, FoldError> {
        self.matches
            .get_mut(&id)
            .ok_or_else(|| misfit(format!("no match {id}")))
    }

    /// The undecided match of the current round that `entrant` is drawn in.
    pub fn current_match_of(&self, entrant: EntrantId) -> Option<MatchId> {
        let round = self.rounds.last()?;
        round.tables.iter().copied().find(|id| {
            self.matches
                .get(id)
                .is_some_and(|m| !m.status.decided() && m.entrants.contains(&entrant))
        })
    }

    fn current_match_of_mut(&mut self, entrant: EntrantId) -> Option<&mut Match> {
        let id = self.current_match_of(entrant)?;
        self.matches.get_mut(&id)
    }
}
