//! Running the matches: the deadline and round starts on time, rooms opened, players
//! seated, no-shows, games started and finished.

use crate::command::CommandError;
use crate::event::{Event, How};
use crate::ids::{EntrantId, MatchId};
use crate::state::{Match, MatchStatus, Phase};
use crate::step::Step;
use parchis_engine::Colour;
use uuid::Uuid;

impl Step {
    fn running_match(&self, id: MatchId) -> Result<&Match, CommandError> {
        if self.next.phase() != Phase::Running {
            return Err(CommandError::NotRunning);
        }
        self.next.match_(id).ok_or(CommandError::UnknownMatch(id))
    }

    /// Time passed: the deadline closes registration, a round whose time has come
    /// starts, and in open matches whose no-show time ran out the absent forfeit.
    pub(crate) fn tick(&mut self) -> Result<(), CommandError> {
        let t = &self.next;
        if t.phase() == Phase::Registering && self.now >= t.settings().registration_deadline_ms {
            return self.close(None);
        }
        self.progress()?;
        let due: Vec<(MatchId, Vec<EntrantId>)> = self
            .next
            .matches()
            .filter(|m| self.next.no_show_deadline(m).is_some_and(|d| d <= self.now))
            .map(|m| {
                let absent = m
                    .contenders()
                    .into_iter()
                    .filter(|&e| !self.next.is_present(m, e))
                    .collect();
                (m.id, absent)
            })
            .filter(|(_, absent): &(MatchId, Vec<EntrantId>)| !absent.is_empty())
            .collect();
        for (id, absent) in due {
            self.emit(Event::NoShow { id, absent })?;
            self.settle(id)?;
        }
        self.progress()
    }

    /// The driver created match `id`'s room `room`.
    pub(crate) fn room_opened(&mut self, id: MatchId, room: String) -> Result<(), CommandError> {
        let m = self.running_match(id)?;
        let tournament = self.next.id();
        let current = crate::ids::room_code(tournament, id, m.attempt);
        if room != current {
            // A room of an earlier attempt, created after the replay was ordered.
            if (0..m.attempt).any(|a| crate::ids::room_code(tournament, id, a) == room)
                && !self.next.stale_rooms().contains(&room)
            {
                return self.emit(Event::RoomUnwanted { room });
            }
            return Err(CommandError::WrongRoom(room));
        }
        match m.status {
            MatchStatus::Ready => self.emit(Event::RoomOpened { id, room }),
            // Told twice (a retried effect): nothing new.
            _ if m.room.as_deref() == Some(room.as_str()) => Ok(()),
            // Decided while its room was being created: that room is not wanted.
            _ if m.room.is_none() && !self.next.stale_rooms().contains(&room) => {
                self.emit(Event::RoomUnwanted { room })
            }
            status => Err(CommandError::MatchState { id, status }),
        }
    }

    /// The driver closed a superseded room.
    pub(crate) fn room_closed(&mut self, room: String) -> Result<(), CommandError> {
        if self.next.stale_rooms().contains(&room) {
            self.emit(Event::RoomClosed { room })?;
        }
        Ok(())
    }

    /// `account` took its seat in match `id`'s room.
    pub(crate) fn seated(&mut self, id: MatchId, account: Uuid) -> Result<(), CommandError> {
        let m = self.running_match(id)?;
        let Some(entrant) = self.next.entrant_of(account).map(|e| e.id) else {
            return Err(CommandError::NotInMatch(id));
        };
        if !m.contenders().contains(&entrant) {
            return Err(CommandError::NotInMatch(id));
        }
        if m.status != MatchStatus::Open {
            return Err(CommandError::MatchState {
                id,
                status: m.status,
            });
        }
        if m.seated.contains(&account) {
            return Ok(());
        }
        self.emit(Event::Seated { id, account })
    }

    /// Match `id`'s game `game_id` started.
    pub(crate) fn game_started(&mut self, id: MatchId, game_id: Uuid) -> Result<(), CommandError> {
        let m = self.running_match(id)?;
        match (m.status, m.game_id) {
            (MatchStatus::Open, _) => self.emit(Event::GameStarted { id, game_id }),
            (_, Some(g)) if g == game_id => Ok(()),
            (status, _) => Err(CommandError::MatchState { id, status }),
        }
    }

    /// Match `id`'s game `game_id` ended with `places` (colours, best first).
    pub(crate) fn game_finished(
        &mut self,
        id: MatchId,
        game_id: Uuid,
        places: &[Colour],
    ) -> Result<(), CommandError> {
        let m = self.running_match(id)?;
        if m.game_id != Some(game_id) {
            return Err(CommandError::StaleGame(game_id));
        }
        if m.status.decided() {
            // Told twice (a retried report): the result stands.
            return Ok(());
        }
        let mut ranked: Vec<EntrantId> = Vec::new();
        for c in places {
            let seat =
                m.seats.iter().find(|s| s.colour == *c).ok_or_else(|| {
                    CommandError::BadPlaces(format!("{c} has no seat in the match"))
                })?;
            if !ranked.contains(&seat.entrant) {
                ranked.push(seat.entrant);
            }
        }
        // Contenders the standings left out rank last, in table order; entrants out of
        // the match (no-shows, disqualified) take no place.
        for e in m.contenders() {
            if !ranked.contains(&e) {
                ranked.push(e);
            }
        }
        ranked.retain(|e| !m.out.contains(e));
        self.emit(Event::Decided {
            id,
            places: ranked,
            how: How::Played { game_id },
        })?;
        self.progress()
    }
}
