//! How the room's operational events leave the pure core: the driver hands the core an
//! [`Observer`] (in [`crate::RoomInit`]) and the core calls it at the point where an event
//! became true (durable, for game events). The server's observer writes the log line and
//! bumps the metric (`parchis-telemetry`); tests use [`Silent`] or record the calls. The
//! core itself never logs and never touches a metric.
//!
//! Calls are per event (a join, an action), not per frame; the dynamic dispatch costs a
//! few nanoseconds against the microseconds of an action.

use crate::types::ConnId;
use parchis_engine::{Action, Colour};
use parchis_protocol::{AbandonReason, BotLevel, ErrorCode};
use std::fmt;
use uuid::Uuid;

/// The severity of a [`Note`], as the log levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Something went wrong and was handled (a write failed, an input was dropped).
    Error,
    /// A degraded path (a step not applied, retried later).
    Warn,
    /// A notable event of the room's life.
    Info,
    /// Detail for debugging.
    Debug,
}

/// A free-form log line of a room: `message` is fixed text (what operators grep for),
/// `details` the values of the moment (`colour=Y error=…`).
pub struct Note<'a> {
    /// Severity.
    pub level: Level,
    /// The room's code.
    pub room: &'a str,
    /// The room's running (or last) game.
    pub game: Option<Uuid>,
    /// The fixed text.
    pub message: &'static str,
    /// The values, formatted lazily.
    pub details: fmt::Arguments<'a>,
}

/// The room's operational events. Every method has an empty default body, so an observer
/// implements only what it reports. Arguments name the room (`room`: its code), the game
/// (`game`), the seat (`seat`: its colour) and the connection (`conn`).
pub trait Observer: Send + Sync {
    /// A player took a seat in a lobby.
    fn player_joined(&self, _room: &str, _seat: Colour, _conn: ConnId, _creator: bool) {}
    /// A connection started watching.
    fn spectator_joined(&self, _room: &str, _game: Option<Uuid>, _conn: ConnId) {}
    /// A seat was given up before the start: `left` or `grace_expired` (R-LEAVE).
    fn seat_freed(&self, _room: &str, _seat: Colour, _conn: Option<ConnId>, _why: &'static str) {}
    /// A player changed colour in the lobby.
    fn colour_changed(&self, _room: &str, _from: Colour, _to: Colour, _conn: ConnId) {}
    /// A game started (its first events are durable); `rules` is the preset name.
    fn game_started(
        &self,
        _room: &str,
        _game: Uuid,
        _rules: &str,
        _seats: &[Colour],
        _first: Colour,
    ) {
    }
    /// A game ended and its result was stored: `reason` is `completed`, `abandoned` or
    /// `closed_by_admin`.
    fn game_finished(
        &self,
        _room: &str,
        _game: Uuid,
        _rules: &str,
        _reason: &'static str,
        _winner: Option<Colour>,
    ) {
    }
    /// An action was applied and its events are durable.
    fn action_applied(&self, _action: &Action) {}
    /// A throw's clock ran out (R-CLOCK); `consecutive` timeouts of this seat in a row.
    fn turn_timed_out(&self, _room: &str, _game: Option<Uuid>, _seat: Colour, _consecutive: u8) {}
    /// A seat abandoned the game (R-LEAVE).
    fn abandoned(&self, _room: &str, _game: Option<Uuid>, _seat: Colour, _reason: AbandonReason) {}
    /// A bot took over an abandoned seat (`on_abandon: bot`).
    fn bot_took_over(
        &self,
        _room: &str,
        _game: Option<Uuid>,
        _seat: Colour,
        _level: BotLevel,
        _reason: AbandonReason,
    ) {
    }
    /// A player came back to its seat with its token; `replay`: the missed events were
    /// sent, otherwise a snapshot.
    fn resumed(
        &self,
        _room: &str,
        _game: Option<Uuid>,
        _seat: Colour,
        _conn: ConnId,
        _last_seq: u64,
        _replay: bool,
    ) {
    }
    /// A seated player's connection went away (the seat waits out its grace period).
    fn player_disconnected(&self, _room: &str, _game: Option<Uuid>, _seat: Colour, _conn: ConnId) {}
    /// A command was refused with `code`.
    fn refused(&self, _code: ErrorCode) {}
    /// Any other log line of the room.
    fn note(&self, _note: Note<'_>) {}
}

/// The observer that reports nothing (tests, tools).
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Observer for Silent {}

/// Writes a [`Note`] of the room `$core` (a `Core`): `note!(self, Warn, "message",
/// "colour={colour}")`.
#[macro_export]
#[doc(hidden)]
macro_rules! note {
    ($core:expr, $level:ident, $message:literal, $($details:tt)*) => {
        $core.obs.note($crate::observer::Note {
            level: $crate::observer::Level::$level,
            room: &$core.code,
            game: $core.game_id,
            message: $message,
            details: format_args!($($details)*),
        })
    };
}
