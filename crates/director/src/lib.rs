//! The tournament director at run time (issue 27, `docs/TOURNAMENTS.md`): one thin tokio
//! actor per tournament around the pure core, `parchis_tournament::Tournament`.
//!
//! * [`Directors`] ([`registry`]) is the process's registry: it creates tournaments,
//!   restores every stored one at start, hands inputs (HTTP commands) to their actors and
//!   their published views to readers and subscribers.
//! * [`actor`] is one tournament's task. For every input (a command, a timer wake at the
//!   core's `next_wake`, a room's report) it asks the core for the events, **stores them
//!   before acting** ([`log`]), folds them in and performs the effects ([`effects`]).
//! * [`effects`] performs the core's effects on the rooms (`parchis_room`'s director
//!   rooms, here or, in a cluster, on the node running each): each is idempotent, so a retried effect never makes
//!   a second room (room codes come from `room_code(tournament, match, attempt)`).
//! * [`reports`] turns what happened in the rooms into the core's inputs: seats taken,
//!   games started (their `game_id`), games finished with their places from the engine's
//!   standings (D-40), read back from the rooms and the store, so a director restarted
//!   after a kill -9 learns again what it missed.
//!
//! * [`lease`] is cluster mode's tournament lease: the director runs where its lease is
//!   held and fences every append with it; a drained node releases it
//!   ([`Directors::drain`]).
//! * [`relay`] is cluster mode's way out for published views ([`ViewRelay`]): every node
//!   serves the live subscription.
//!
//! Module order (each imports only those before it): `error`, `log`, `lease`, `relay`,
//! `effects`, `reports`, `actor`, `registry`.

#![warn(missing_docs)]

pub mod actor;
pub mod effects;
pub mod error;
pub mod lease;
pub mod log;
pub mod registry;
pub mod relay;
pub mod reports;

pub use error::DirectorError;
pub use lease::Leasing;
pub use registry::Directors;
pub use relay::ViewRelay;
