//! The room as a pure state machine: no tokio, no store, no sockets, no clock, no global
//! logging. Its `Cargo.toml` has none of them, so the compiler keeps it that way.
//!
//! The room is split the way quinn-proto splits QUIC from its driver (the driver, the
//! actor, lives in `parchis-room`):
//!
//! * [`core`] is the room. It takes an [`Input`] (a connection's command, a timer tick, a
//!   bot's choice) and the current time as a value (unix ms), and returns [`Effect`]s:
//!   persist these records, send this frame to that connection, broadcast this frame,
//!   answer this join, run this bot's search, wake me at T. Its parts: [`lobby`] (seats
//!   before the start, the start), [`play`] (commands, actions, clocks, abandonment),
//!   [`bots`] (bot seats and their turns), [`fanout`] (members, history, resume windows,
//!   presence), [`reattach`], [`rematch`] and [`view`] (snapshots and listings).
//! * [`persist`] is the one typed mapping between the room's values and the store's
//!   records (`parchis-records`; stored events carry a format version); [`replay()`] is the
//!   one function that turns a stored log back into a [`parchis_engine::Game`] and the
//!   room's log state.
//! * [`doubt`] decides a write whose commit got no answer against the stored room.
//! * [`dice`] is the room's fair dice (`docs/FAIR_DICE.md`), [`frames`] builds `event`
//!   frames.
//! * [`observer`] is how the room's operational events (logs, metrics) leave it: the
//!   core calls an [`Observer`] its driver hands in, never a global.
//!
//! Module order (each imports only those below it in this list, never one above):
//! `types`, `observer`, `dice`, `frames`, `replay`, `throws` (a game's log packed as its
//! inputs), `seat` (a seat and its bot), `emote_limit`,
//! `reserved` (a director's room: reserved seats and commands), `held` (the spectator
//! delay's rule and buffer), `persist`, `plan`,
//! `effect`, `doubt`, `core`, then the parts of the core (`owed`, `delay`, `fanout`,
//! `view`, `bots`, `lobby`, `play`, `reattach`, `rematch`, `restore`, `referee`, `admin`),
//! which extend [`Core`] with `impl` blocks and import `core`, never the other way round.

#![warn(missing_docs)]

pub mod admin;
pub mod bots;
pub mod core;
pub mod delay;
pub mod dice;
pub mod doubt;
pub mod effect;
pub mod emote_limit;
pub mod fanout;
pub mod frames;
mod held;
pub mod lobby;
pub mod observer;
mod owed;
pub mod persist;
mod plan;
pub mod play;
pub mod rated;
pub mod reattach;
pub mod referee;
pub mod rematch;
pub mod replay;
pub mod reserved;
pub mod restore;
pub mod seat;
pub mod throws;
pub mod types;
pub mod view;

pub use self::core::{Core, Effect, Input, RoomInit, RoomLimits};
pub use self::observer::{Level, Note, Observer, Silent};
pub use self::replay::{replay, resume, LoggedEvent, ReplayError, Replayed, Resumed, Snapshot};
pub use self::restore::Restored;
pub use self::types::*;
