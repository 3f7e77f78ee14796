//! Operational events of rooms and connections: each function writes the one log line
//! (INFO, with `room`, `game`, `seat` and `conn` ids as fields) and bumps the matching
//! Prometheus metric ([`crate::names`]). The room actor and the connection tasks call
//! these at the point where the event became true (durable, for game events).
//!
//! Label values are closed sets (rule-set presets, reasons, error and close codes); room
//! codes, game ids and connection ids appear in logs only, never as labels.

use crate::names as m;
use crate::recorder::Cached;
use metrics::{Counter, Histogram};
use parchis_engine::{Action, Colour};
use parchis_protocol::{AbandonReason, BotLevel, ErrorCode};
use tracing::info;
use uuid::Uuid;

/// A connection's id (`parchis_room_core::ConnId`).
type Conn = u64;

/// The preset part of a rule-set name (`classic+murcia-12` → `classic`): a bounded label.
pub fn preset_label(rules: &str) -> String {
    rules.split('+').next().unwrap_or(rules).to_owned()
}

fn abandon_label(reason: AbandonReason) -> &'static str {
    match reason {
        AbandonReason::Left => "left",
        AbandonReason::Disconnected => "disconnected",
        AbandonReason::Timeouts => "timeouts",
        AbandonReason::Disqualified => "disqualified",
    }
}

fn level_label(level: BotLevel) -> &'static str {
    match level {
        BotLevel::Random => "random",
        BotLevel::Greedy => "greedy",
        BotLevel::Expectimax => "expectimax",
    }
}

fn game_field(game: Option<Uuid>) -> String {
    game.map(|g| g.to_string()).unwrap_or_default()
}

/// A player took a seat in a lobby.
pub fn player_joined(room: &str, seat: Colour, conn: Conn, creator: bool) {
    info!(room, seat = %seat, conn, creator, "player joined");
    metrics::counter!(m::JOINS, "role" => "player").increment(1);
    metrics::counter!(m::SNAPSHOTS, "reason" => "join").increment(1);
}

/// A connection started watching.
pub fn spectator_joined(room: &str, game: Option<Uuid>, conn: Conn) {
    info!(room, game = %game_field(game), conn, "spectator joined");
    metrics::counter!(m::JOINS, "role" => "spectator").increment(1);
    metrics::counter!(m::SNAPSHOTS, "reason" => "watch").increment(1);
}

/// A seat was given up before the start: `left` (the player sent `leave`) or
/// `grace_expired` (disconnected past the grace period).
pub fn seat_freed(room: &str, seat: Colour, conn: Option<Conn>, why: &'static str) {
    info!(room, seat = %seat, conn = conn.unwrap_or(0), why, "player left");
    metrics::counter!(m::LEAVES, "why" => why).increment(1);
}

/// A player changed colour in the lobby.
pub fn colour_changed(room: &str, from: Colour, to: Colour, conn: Conn) {
    info!(room, seat = %to, from = %from, conn, "colour changed");
}

/// A game started (its first events are durable).
pub fn game_started(room: &str, game: Uuid, rules: &str, seats: &[Colour], first: Colour) {
    let seats: Vec<String> = seats.iter().map(|c| c.to_string()).collect();
    info!(room, game = %game, rules, seats = ?seats, first = %first, "game started");
    metrics::counter!(m::GAMES_STARTED, "rules" => preset_label(rules)).increment(1);
}

/// A game ended and its result was stored: `reason` is `completed`, `abandoned` or
/// `closed_by_admin`.
pub fn game_finished(
    room: &str,
    game: Uuid,
    rules: &str,
    reason: &'static str,
    winner: Option<Colour>,
) {
    let winner = winner.map(|c| c.to_string()).unwrap_or_default();
    info!(room, game = %game, rules, reason, winner, "game finished");
    metrics::counter!(m::GAMES_FINISHED, "rules" => preset_label(rules), "reason" => reason)
        .increment(1);
}

/// An action was applied and its events are durable.
pub fn action_applied(action: &Action) {
    static ROLL: Cached<Counter> = Cached::new(|| metrics::counter!(m::ACTIONS, "kind" => "roll"));
    static MOVE: Cached<Counter> = Cached::new(|| metrics::counter!(m::ACTIONS, "kind" => "move"));
    static TIMEOUT: Cached<Counter> =
        Cached::new(|| metrics::counter!(m::ACTIONS, "kind" => "timeout"));
    static ABANDON: Cached<Counter> =
        Cached::new(|| metrics::counter!(m::ACTIONS, "kind" => "abandon"));
    let counter = match action {
        Action::Roll { .. } => &ROLL,
        Action::Exit | Action::Move { .. } | Action::Bonus { .. } => &MOVE,
        Action::Timeout => &TIMEOUT,
        Action::Abandon { .. } => &ABANDON,
    };
    counter.get().increment(1);
}

/// A player's command went from the socket read to durable events and queued frames in
/// `seconds`.
pub fn action_latency(seconds: f64) {
    static LATENCY: Cached<Histogram> = Cached::new(|| metrics::histogram!(m::ACTION_LATENCY));
    LATENCY.get().record(seconds);
}

/// A throw's clock ran out (R-CLOCK); `consecutive` timeouts of this seat in a row.
pub fn turn_timed_out(room: &str, game: Option<Uuid>, seat: Colour, consecutive: u8) {
    info!(room, game = %game_field(game), seat = %seat, consecutive, "turn timed out");
    metrics::counter!(m::TIMEOUTS).increment(1);
}

/// A seat abandoned the game (R-LEAVE): its pieces leave the board.
pub fn abandoned(room: &str, game: Option<Uuid>, seat: Colour, reason: AbandonReason) {
    let why = abandon_label(reason);
    info!(room, game = %game_field(game), seat = %seat, reason = why, "player abandoned");
    metrics::counter!(m::ABANDONMENTS, "reason" => why).increment(1);
}

/// A bot took over an abandoned seat (`on_abandon: bot`).
pub fn bot_took_over(
    room: &str,
    game: Option<Uuid>,
    seat: Colour,
    level: BotLevel,
    reason: AbandonReason,
) {
    let why = abandon_label(reason);
    let level = level_label(level);
    info!(room, game = %game_field(game), seat = %seat, level, reason = why, "bot took over");
    metrics::counter!(m::BOT_TAKEOVERS, "reason" => why).increment(1);
}

/// A player came back to its seat with its token; `replay`: the missed events were sent,
/// otherwise a snapshot.
pub fn resumed(
    room: &str,
    game: Option<Uuid>,
    seat: Colour,
    conn: Conn,
    last_seq: u64,
    replay: bool,
) {
    let catch_up = if replay { "events" } else { "snapshot" };
    info!(room, game = %game_field(game), seat = %seat, conn, last_seq, catch_up, "player resumed");
    metrics::counter!(m::RESUMES, "catch_up" => catch_up).increment(1);
    if !replay {
        metrics::counter!(m::SNAPSHOTS, "reason" => "resume").increment(1);
    }
}

/// A seated player's connection went away (the seat waits out its grace period).
pub fn player_disconnected(room: &str, game: Option<Uuid>, seat: Colour, conn: Conn) {
    info!(room, game = %game_field(game), seat = %seat, conn, "player disconnected");
}

/// The server closed a connection with close `code` (policy, session replaced, slow
/// consumer, admin); `room` is the room it had joined, if any.
pub fn kicked(conn: Conn, room: Option<&str>, code: u16, reason: &str) {
    info!(
        conn,
        room = room.unwrap_or(""),
        code,
        reason,
        "connection kicked"
    );
    metrics::counter!(m::KICKS, "code" => code.to_string()).increment(1);
    if code == parchis_protocol::close_code::SLOW_CONSUMER {
        metrics::counter!(m::SLOW_CONSUMERS).increment(1);
    }
}

/// A command was refused with `code`.
pub fn refused(code: ErrorCode) {
    metrics::counter!(m::REFUSED, "code" => code.as_str()).increment(1);
}

/// A WebSocket connection opened (`+1`) or closed (`-1`).
pub fn socket_opened(conn: Conn) {
    tracing::debug!(conn, "connected");
    metrics::gauge!(m::SOCKETS).increment(1.0);
}

/// See [`socket_opened`].
pub fn socket_closed(conn: Conn) {
    tracing::debug!(conn, "disconnected");
    metrics::gauge!(m::SOCKETS).decrement(1.0);
}

/// Frames waiting in a connection's outbound queue when its writer woke up.
pub fn outbound_depth(frames: usize) {
    static DEPTH: Cached<Histogram> = Cached::new(|| metrics::histogram!(m::OUTBOUND_DEPTH));
    DEPTH.get().record(frames as f64);
}
