//! Reading a tournament: its parts, and what follows from them (the knockout layout,
//! each match's qualifiers, the swiss tally).

use crate::ids::{EntrantId, MatchId, Ms};
use crate::knockout::Layout;
use crate::settings::{Format, Settings, Shape};
use crate::state::{Entrant, EntrantStatus, Match, Phase, RefereeAction, Round, Tournament};
use crate::swiss::Tally;
use std::collections::BTreeSet;
use uuid::Uuid;

impl Tournament {
    /// Its id.
    pub fn id(&self) -> Uuid {
        self.id
    }
    /// The organiser's account.
    pub fn organiser(&self) -> Uuid {
        self.organiser
    }
    /// Its settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
    /// What the settings make of the tables.
    pub fn shape(&self) -> Shape {
        self.shape
    }
    /// When it was created (unix ms).
    pub fn created_at(&self) -> Ms {
        self.created_at
    }
    /// Its lifecycle.
    pub fn phase(&self) -> Phase {
        self.phase
    }
    /// The named referees (the organiser is a referee too, see [`Self::is_referee`]).
    pub fn referees(&self) -> &BTreeSet<Uuid> {
        &self.referees
    }
    /// The stored username of an official (the organiser or a referee); empty if the
    /// tournament was stored before names were kept.
    pub fn official_name(&self, account: Uuid) -> &str {
        self.official_names.get(&account).map_or("", String::as_str)
    }
    /// Whether `account` may act as a referee: the organiser or a named referee.
    pub fn is_referee(&self, account: Uuid) -> bool {
        account == self.organiser || self.referees.contains(&account)
    }
    /// One entrant.
    pub fn entrant(&self, id: EntrantId) -> Option<&Entrant> {
        self.entrants.get(&id)
    }
    /// Every entrant ever registered, by id.
    pub fn entrants(&self) -> impl Iterator<Item = &Entrant> {
        self.entrants.values()
    }
    /// The entrant `account` plays for, unless it withdrew or was dropped.
    pub fn entrant_of(&self, account: Uuid) -> Option<&Entrant> {
        self.entrants.values().find(|e| {
            e.has(account) && !matches!(e.status, EntrantStatus::Withdrawn | EntrantStatus::Dropped)
        })
    }
    /// The drawn entrants, best seed first.
    pub fn seeds(&self) -> &[EntrantId] {
        &self.seeds
    }
    /// Rounds to play (known from the close).
    pub fn total_rounds(&self) -> u32 {
        self.total_rounds
    }
    /// The drawn rounds.
    pub fn rounds(&self) -> &[Round] {
        &self.rounds
    }
    /// One match.
    pub fn match_(&self, id: MatchId) -> Option<&Match> {
        self.matches.get(&id)
    }
    /// Every match, by id.
    pub fn matches(&self) -> impl Iterator<Item = &Match> {
        self.matches.values()
    }
    /// The champion, once finished.
    pub fn champion(&self) -> Option<EntrantId> {
        self.champion
    }
    /// Why nothing was played, for a cancelled tournament.
    pub fn cancelled(&self) -> Option<&str> {
        self.cancelled.as_deref()
    }
    /// Every referee action, oldest first.
    pub fn referee_log(&self) -> &[RefereeAction] {
        &self.referee_log
    }
    /// Rooms of superseded attempts still to close.
    pub fn stale_rooms(&self) -> &BTreeSet<String> {
        &self.stale_rooms
    }
    /// The round being played (the last drawn).
    pub fn current_round(&self) -> Option<&Round> {
        self.rounds.last()
    }

    /// The knockout's layout for the drawn entrants (`None` for swiss or before the
    /// close).
    pub fn layout(&self) -> Option<Layout> {
        (self.settings.format == Format::Knockout && !self.seeds.is_empty()).then(|| {
            Layout::new(
                self.seeds.len() as u32,
                self.shape.table,
                self.shape.advance,
            )
        })
    }

    /// How many of match `m` go through: 1 in swiss and in a knockout's final.
    pub fn advance_of(&self, m: &Match) -> u32 {
        self.layout().map_or(1, |l| l.advance_in(m.round))
    }

    /// A decided match's qualifiers: its first places not disqualified since, as many as
    /// go through (so when a winner is disqualified before the next round is drawn, the
    /// next place goes through instead: "its opponents advance").
    pub fn qualifiers(&self, m: &Match) -> Vec<EntrantId> {
        if !m.status.decided() {
            return Vec::new();
        }
        m.places
            .iter()
            .copied()
            .filter(|&e| !self.is_disqualified(e))
            .take(self.advance_of(m) as usize)
            .collect()
    }

    /// Whether `e` was disqualified.
    pub fn is_disqualified(&self, e: EntrantId) -> bool {
        self.entrants
            .get(&e)
            .is_some_and(|x| x.status == EntrantStatus::Disqualified)
    }

    /// The swiss record: a point per win and per bye, opponents met.
    pub fn tally(&self) -> Tally {
        let mut t = Tally::default();
        for m in self.matches.values().filter(|m| m.status.decided()) {
            match (m.status, m.entrants.as_slice()) {
                (crate::state::MatchStatus::Bye, [e]) => t.add_bye(*e),
                (_, [a, b]) => t.add_match(*a, *b, m.places.first().copied()),
                _ => {}
            }
        }
        t
    }

    /// The no-show deadline of an open match (unix ms), `None` when no clock runs.
    pub fn no_show_deadline(&self, m: &Match) -> Option<Ms> {
        if m.paused || m.status != crate::state::MatchStatus::Open {
            return None;
        }
        let minutes = Ms::from(self.settings.no_show_minutes);
        m.noshow_from.map(|t| t + minutes * 60_000)
    }

    /// Whether every player of `entrant` sits in match `m` (bots always do).
    pub fn is_present(&self, m: &Match, entrant: EntrantId) -> bool {
        self.entrants.get(&entrant).is_some_and(|e| {
            e.players
                .iter()
                .all(|p| p.account.is_none_or(|a| m.seated.contains(&a)))
        })
    }

    /// Whether the tournament is still taking part in play (not finished).
    pub fn is_live(&self) -> bool {
        self.phase != Phase::Finished
    }
}
