//! Registration: entrants (a team of two accounts whose partner confirms, or one
//! account), withdrawals before the close, referees, and the organiser's early close.

use crate::command::{CommandError, MAX_TEAM_NAME_CHARS};
use crate::event::Event;
use crate::ids::{Account, EntrantId, Player};
use crate::settings::MAX_ENTRANTS;
use crate::state::{EntrantStatus, Phase};
use crate::step::Step;
use uuid::Uuid;

impl Step {
    fn registering(&self) -> Result<(), CommandError> {
        if self.next.phase() == Phase::Registering
            && self.now < self.next.settings().registration_deadline_ms
        {
            Ok(())
        } else {
            Err(CommandError::RegistrationClosed)
        }
    }

    /// The organiser names a referee.
    pub(crate) fn name_referee(
        &mut self,
        by: Uuid,
        account: Uuid,
        name: String,
    ) -> Result<(), CommandError> {
        if by != self.next.organiser() {
            return Err(CommandError::NotOrganiser);
        }
        if self.next.referees().contains(&account) {
            return Ok(());
        }
        self.emit(Event::RefereeNamed { account, name })
    }

    /// Registers `account` (with `partner` for teams).
    pub(crate) fn register(
        &mut self,
        account: Account,
        partner: Option<Account>,
        team_name: Option<String>,
    ) -> Result<(), CommandError> {
        self.registering()?;
        let t = &self.next;
        let teams = t.shape().teams;
        let players: Vec<&Account> = match (&partner, teams) {
            (None, true) => return Err(CommandError::PartnerRequired),
            (Some(_), false) => return Err(CommandError::NoPartnerAllowed),
            (Some(p), true) if p.id == account.id => return Err(CommandError::OwnPartner),
            (Some(p), true) => vec![&account, p],
            (None, false) => vec![&account],
        };
        for p in &players {
            if t.entrant_of(p.id).is_some() {
                return Err(CommandError::AlreadyRegistered(p.id));
            }
            if let Some(min) = t.settings().min_rating {
                if p.rating.is_none_or(|r| r < min) {
                    return Err(CommandError::BelowMinRating {
                        name: p.name.clone(),
                        rating: p.rating,
                        min,
                    });
                }
            }
        }
        let live = t
            .entrants()
            .filter(|e| {
                matches!(
                    e.status,
                    EntrantStatus::Registered | EntrantStatus::PendingPartner
                )
            })
            .count();
        // Withdrawn entrants stay in the log: all registrations ever are bounded too, so
        // registering and withdrawing in a loop cannot grow the state without end.
        if live as u32 >= MAX_ENTRANTS || t.entrants().count() as u32 >= 4 * MAX_ENTRANTS {
            return Err(CommandError::Full);
        }
        let name = match (team_name, teams) {
            (Some(n), true) => {
                let n = n.trim().to_owned();
                if n.is_empty()
                    || n.chars().count() > MAX_TEAM_NAME_CHARS
                    || n.chars().any(char::is_control)
                {
                    return Err(CommandError::TeamName);
                }
                n
            }
            (_, true) => format!("{} & {}", players[0].name, players[1].name),
            (_, false) => account.name.clone(),
        };
        let entrant = EntrantId(t.entrants().map(|e| e.id.0).max().unwrap_or(0) + 1);
        let players: Vec<Player> = players.into_iter().map(Player::of).collect();
        self.emit(Event::Registered {
            entrant,
            name,
            players,
            confirmed: !teams,
        })
    }

    /// The partner of a pending team confirms.
    pub(crate) fn confirm(&mut self, account: Uuid) -> Result<(), CommandError> {
        self.registering()?;
        let e = self
            .next
            .entrant_of(account)
            .filter(|e| {
                e.status == EntrantStatus::PendingPartner
                    && e.players.get(1).is_some_and(|p| p.account == Some(account))
            })
            .ok_or(CommandError::NothingToConfirm)?;
        let entrant = e.id;
        self.emit(Event::PartnerConfirmed { entrant })
    }

    /// `account` withdraws its entrant (a team with both partners).
    pub(crate) fn unregister(&mut self, account: Uuid) -> Result<(), CommandError> {
        self.registering()?;
        let e = self
            .next
            .entrant_of(account)
            .ok_or(CommandError::NotRegistered)?;
        if e.status == EntrantStatus::Disqualified {
            return Err(CommandError::AlreadyOut(e.id));
        }
        let entrant = e.id;
        self.emit(Event::Withdrawn { entrant })
    }

    /// The organiser closes registration now.
    pub(crate) fn close_early(&mut self, by: Uuid) -> Result<(), CommandError> {
        let t = &self.next;
        if by != t.organiser() {
            return Err(CommandError::NotOrganiser);
        }
        if t.phase() != Phase::Registering {
            return Err(CommandError::RegistrationClosed);
        }
        let confirmed = t
            .entrants()
            .filter(|e| e.status == EntrantStatus::Registered)
            .count();
        let with_bots = t
            .settings()
            .bot_fill
            .map_or(confirmed, |f| confirmed.max(f.up_to as usize));
        if with_bots < 2 {
            return Err(CommandError::TooFewEntrants(confirmed));
        }
        self.close(Some(by))
    }
}
