//! The director core's entry points: create a tournament, and decide what an input
//! means ([`Tournament::handle`]) as events to store before anything is acted on.

use crate::command::{CommandError, Input};
use crate::event::{Entry, Event};
use crate::ids::{Ms, Official};
use crate::settings::{Settings, SettingsError};
use crate::state::Tournament;
use crate::step::Step;
use uuid::Uuid;

impl Tournament {
    /// The first event of a new tournament by `organiser`, once `settings` are valid at
    /// `now`. `seed`
    /// is the tournament's randomness (the seeding's tie-breaks), drawn by the caller
    /// from the OS CSPRNG (or fixed in tests). Fold it with [`Tournament::from_entries`].
    pub fn create(
        id: Uuid,
        organiser: Official,
        settings: Settings,
        seed: [u8; 32],
        now: Ms,
    ) -> Result<Entry, SettingsError> {
        settings.validate(now)?;
        let mut settings = settings;
        settings.name = settings.name.trim().to_owned();
        Ok(Entry::new(
            now,
            Event::Created {
                id,
                organiser: organiser.account,
                organiser_name: organiser.name,
                settings,
                seed,
            },
        ))
    }

    /// Decides what `input` at `now` means: the events to store, in order (none when it
    /// changes nothing, e.g. a retried report). Pure: the state changes only when the
    /// driver, once they are durable, hands them to [`Tournament::commit`]. A refusal
    /// stores nothing.
    pub fn handle(&self, input: Input, now: Ms) -> Result<Vec<Entry>, CommandError> {
        let mut step = Step::new(self, now);
        match input {
            Input::NameReferee { by, account, name } => step.name_referee(by, account, name)?,
            Input::Register {
                account,
                partner,
                team_name,
            } => step.register(account, partner, team_name)?,
            Input::ConfirmPartner { account } => step.confirm(account)?,
            Input::Unregister { account } => step.unregister(account)?,
            Input::Close { by } => step.close_early(by)?,
            Input::Tick => step.tick()?,
            Input::RoomOpened { id, room } => step.room_opened(id, room)?,
            Input::RoomClosed { room } => step.room_closed(room)?,
            Input::Seated { id, account } => step.seated(id, account)?,
            Input::GameStarted { id, game_id } => step.game_started(id, game_id)?,
            Input::GameFinished {
                id,
                game_id,
                places,
            } => step.game_finished(id, game_id, &places)?,
            Input::Pause { by, id } => step.pause(by, id)?,
            Input::Resume { by, id } => step.resume(by, id)?,
            Input::Award {
                by,
                id,
                places,
                reason,
            } => step.award(by, id, &places, &reason)?,
            Input::Disqualify {
                by,
                entrant,
                reason,
            } => step.disqualify(by, entrant, &reason)?,
            Input::Replay { by, id, reason } => step.replay(by, id, &reason)?,
        }
        Ok(step.out)
    }
}
