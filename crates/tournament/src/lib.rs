//! The championship director as a pure core (issue 27): no tokio, no store, no clock, no
//! randomness of its own. Like `parchis-room-core`, it decides and its driver acts: an
//! [`Input`] and the time as a value go in, stored events ([`Entry`]) come out, and once
//! they are durable [`Tournament::commit`] folds them in and returns [`Effect`]s (create
//! a match's room with its seats reserved, start it, pause it, publish the bracket).
//!
//! The state is a pure fold of its events ([`Tournament::from_entries`]): a director that
//! restarts replays its log, asks [`Tournament::outstanding`] for the effects still owed,
//! and carries on; rooms are named by a deterministic code ([`room_code`]), so an effect
//! done twice creates one game. `docs/TOURNAMENTS.md` describes the formats, the seeding,
//! byes, the swiss pairing rule, no-shows, referee actions and the decisions taken.
//!
//! Module order (each imports only those before it, never one after): `ids`, `settings`,
//! `seeding`, `seating`, `knockout`, `swiss`, `event`, `state` (the fold), `query`
//! (reading the state), `command` (inputs and refusals), `step` (one decision in
//! progress), `draw` (close, rounds, progress), `registration`, `running`, `referee`,
//! `handle` (the entry points), `effect`, `view`.

#![warn(missing_docs)]

pub mod command;
mod draw;
pub mod effect;
pub mod event;
mod handle;
pub mod ids;
pub mod knockout;
mod query;
mod referee;
mod registration;
mod running;
pub mod seating;
pub mod seeding;
pub mod settings;
pub mod state;
mod step;
pub mod swiss;
pub mod view;

pub use command::{CommandError, Input};
pub use effect::{Effect, ReservedSeat, RoomSpec};
pub use event::{DrawnTable, Entry, Event, How, EVENT_FORMAT};
pub use ids::{room_code, Account, BotSpec, EntrantId, MatchId, Ms, Official, Player};
pub use settings::{BotFill, Format, Settings, SettingsError, Shape};
pub use state::{
    Entrant, EntrantStatus, FoldError, Match, MatchStatus, Phase, RefereeAction, RefereeKind,
    Round, Tournament,
};
pub use view::TournamentView;
