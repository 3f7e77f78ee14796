//! The referee's actions (the organiser and the referees it named; seed 004: "en caso de
//! duda o disputa prevalecerá la decisión del juez árbitro del campeonato"): pause and
//! resume a match's clock, award a match, disqualify an entrant, order a match
//! replayed. Each is stored as an event and shown on the tournament page.

use crate::command::{check_reason, CommandError};
use crate::event::{Event, How};
use crate::ids::{EntrantId, MatchId};
use crate::state::{EntrantStatus, Match, MatchStatus, Phase};
use crate::step::Step;
use uuid::Uuid;

impl Step {
    fn referee_match(&self, by: Uuid, id: MatchId) -> Result<&Match, CommandError> {
        let t = &self.next;
        if !t.is_referee(by) {
            return Err(CommandError::NotReferee);
        }
        if t.phase() != Phase::Running {
            return Err(CommandError::NotRunning);
        }
        t.match_(id).ok_or(CommandError::UnknownMatch(id))
    }

    /// A match may be judged again (awarded or replayed) while it is undecided, or
    /// decided in the round being played (no later round drawn from its result).
    fn judgeable(&self, m: &Match) -> Result<(), CommandError> {
        let current = self.next.current_round().map(|r| r.number);
        match m.status {
            MatchStatus::Bye | MatchStatus::Pending => Err(CommandError::MatchState {
                id: m.id,
                status: m.status,
            }),
            s if s.decided() && current != Some(m.round) => Err(CommandError::RoundOver(m.id)),
            _ => Ok(()),
        }
    }

    /// Pauses match `id`'s clock (its game's turn clock, or the no-show clock of an open
    /// room).
    pub(crate) fn pause(&mut self, by: Uuid, id: MatchId) -> Result<(), CommandError> {
        let m = self.referee_match(by, id)?;
        if !matches!(m.status, MatchStatus::Open | MatchStatus::Playing) {
            return Err(CommandError::MatchState {
                id,
                status: m.status,
            });
        }
        if m.paused {
            return Ok(());
        }
        self.emit(Event::Paused { id, by })
    }

    /// Resumes match `id`'s clock; an open room's no-show time counts again from now.
    pub(crate) fn resume(&mut self, by: Uuid, id: MatchId) -> Result<(), CommandError> {
        let m = self.referee_match(by, id)?;
        if !m.paused {
            return Ok(());
        }
        self.emit(Event::Resumed { id, by })
    }

    /// Awards match `id`: `places` best first (the first wins), the other entrants still
    /// in it after them in table order.
    pub(crate) fn award(
        &mut self,
        by: Uuid,
        id: MatchId,
        places: &[EntrantId],
        reason: &str,
    ) -> Result<(), CommandError> {
        let reason = check_reason(reason)?;
        let m = self.referee_match(by, id)?;
        self.judgeable(m)?;
        let contenders = m.contenders();
        if places.is_empty() {
            return Err(CommandError::BadPlaces("name at least the winner".into()));
        }
        let mut ranked: Vec<EntrantId> = Vec::new();
        for e in places {
            if !contenders.contains(e) {
                return Err(CommandError::BadPlaces(format!(
                    "entrant {e} is not in the match"
                )));
            }
            if ranked.contains(e) {
                return Err(CommandError::BadPlaces(format!("entrant {e} listed twice")));
            }
            ranked.push(*e);
        }
        ranked.extend(contenders.into_iter().filter(|e| !places.contains(e)));
        self.emit(Event::Decided {
            id,
            places: ranked,
            how: How::Awarded { by, reason },
        })?;
        self.progress()
    }

    /// Disqualifies `entrant`: it leaves its current match (whose other entrants go
    /// through when too few are left to play) and is drawn no more.
    pub(crate) fn disqualify(
        &mut self,
        by: Uuid,
        entrant: EntrantId,
        reason: &str,
    ) -> Result<(), CommandError> {
        let reason = check_reason(reason)?;
        let t = &self.next;
        if !t.is_referee(by) {
            return Err(CommandError::NotReferee);
        }
        if t.phase() == Phase::Finished {
            return Err(CommandError::NotRunning);
        }
        let e = t
            .entrant(entrant)
            .ok_or(CommandError::UnknownEntrant(entrant))?;
        if !matches!(
            e.status,
            EntrantStatus::Registered | EntrantStatus::PendingPartner
        ) {
            return Err(CommandError::AlreadyOut(entrant));
        }
        let current = t.current_match_of(entrant);
        self.emit(Event::Disqualified {
            entrant,
            by,
            reason,
        })?;
        if let Some(id) = current {
            self.settle(id)?;
        }
        self.progress()
    }

    /// Orders match `id` replayed: its room and game are dropped, a new room (the next
    /// attempt's code) is created, no-shows get another chance.
    pub(crate) fn replay(
        &mut self,
        by: Uuid,
        id: MatchId,
        reason: &str,
    ) -> Result<(), CommandError> {
        let reason = check_reason(reason)?;
        let m = self.referee_match(by, id)?;
        self.judgeable(m)?;
        if m.status == MatchStatus::Ready {
            return Err(CommandError::MatchState {
                id,
                status: m.status,
            });
        }
        self.emit(Event::ReplayOrdered { id, by, reason })?;
        self.settle(id)?;
        self.progress()
    }
}
