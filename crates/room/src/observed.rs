//! The rooms' observer of the server: each observation of a room's core becomes the log
//! line and the metric of `parchis-telemetry`'s `observe` (notes: a log line at their
//! level, with `room` and `game` as fields).

use parchis_engine::{Action, Colour};
use parchis_protocol::{AbandonReason, BotLevel, ErrorCode};
use parchis_room_core::{ConnId, Level, Note, Observer};
use parchis_telemetry::observe;
use uuid::Uuid;

/// Logs and metrics of the rooms' operational events.
#[derive(Clone, Copy, Debug, Default)]
pub struct Telemetry;

impl Observer for Telemetry {
    fn player_joined(&self, room: &str, seat: Colour, conn: ConnId, creator: bool) {
        observe::player_joined(room, seat, conn, creator);
    }
    fn spectator_joined(&self, room: &str, game: Option<Uuid>, conn: ConnId) {
        observe::spectator_joined(room, game, conn);
    }
    fn seat_freed(&self, room: &str, seat: Colour, conn: Option<ConnId>, why: &'static str) {
        observe::seat_freed(room, seat, conn, why);
    }
    fn colour_changed(&self, room: &str, from: Colour, to: Colour, conn: ConnId) {
        observe::colour_changed(room, from, to, conn);
    }
    fn game_started(&self, room: &str, game: Uuid, rules: &str, seats: &[Colour], first: Colour) {
        observe::game_started(room, game, rules, seats, first);
    }
    fn game_finished(
        &self,
        room: &str,
        game: Uuid,
        rules: &str,
        reason: &'static str,
        winner: Option<Colour>,
    ) {
        observe::game_finished(room, game, rules, reason, winner);
    }
    fn action_applied(&self, action: &Action) {
        observe::action_applied(action);
    }
    fn turn_timed_out(&self, room: &str, game: Option<Uuid>, seat: Colour, consecutive: u8) {
        observe::turn_timed_out(room, game, seat, consecutive);
    }
    fn abandoned(&self, room: &str, game: Option<Uuid>, seat: Colour, reason: AbandonReason) {
        observe::abandoned(room, game, seat, reason);
    }
    fn bot_took_over(
        &self,
        room: &str,
        game: Option<Uuid>,
        seat: Colour,
        level: BotLevel,
        reason: AbandonReason,
    ) {
        observe::bot_took_over(room, game, seat, level, reason);
    }
    fn resumed(
        &self,
        room: &str,
        game: Option<Uuid>,
        seat: Colour,
        conn: ConnId,
        last_seq: u64,
        replay: bool,
    ) {
        observe::resumed(room, game, seat, conn, last_seq, replay);
    }
    fn player_disconnected(&self, room: &str, game: Option<Uuid>, seat: Colour, conn: ConnId) {
        observe::player_disconnected(room, game, seat, conn);
    }
    fn refused(&self, code: ErrorCode) {
        observe::refused(code);
    }
    fn note(&self, note: Note<'_>) {
        let Note {
            level,
            room,
            game,
            message,
            details,
        } = note;
        let game = game.map(|g| g.to_string()).unwrap_or_default();
        match level {
            Level::Error => tracing::error!(room, game, details = %details, "{message}"),
            Level::Warn => tracing::warn!(room, game, details = %details, "{message}"),
            Level::Info => tracing::info!(room, game, details = %details, "{message}"),
            Level::Debug => tracing::debug!(room, game, details = %details, "{message}"),
        }
    }
}
