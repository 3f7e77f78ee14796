//! Prometheus metrics of the routing: their names live with every other metric in
//! `parchis_telemetry::names` (described there); labels are closed sets (kinds, outcomes, causes).
//! The ones recorded per relayed frame or command go through handles registered once
//! ([`Cached`]).

use super::wire::Kind;
use metrics::Counter;
pub use parchis_telemetry::names::{
    COMMANDS_FORWARDED, EDGE_GAPS, EDGE_MESSAGES, FRAMES_PUBLISHED, FRAMES_RELAYED, PUBLISH_FAILED,
    REATTACHES, REMOTE_ATTACHES, ROOM_REQUESTS,
};
use parchis_telemetry::recorder::Cached;

/// What an edge did with a relayed frame: the `verdict` label of [`FRAMES_RELAYED`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relayed {
    /// `delivered`.
    Delivered,
    /// `duplicate`.
    Duplicate,
    /// `stale`.
    Stale,
    /// `unsolicited`.
    Unsolicited,
}

/// Counts one NATS message the owner published to an edge ([`EDGE_MESSAGES`]).
pub fn edge_message() {
    static MESSAGES: Cached<Counter> = Cached::new(|| metrics::counter!(EDGE_MESSAGES));
    MESSAGES.get().increment(1);
}

/// Counts one link message (a line) the owner published to an edge ([`FRAMES_PUBLISHED`]).
pub fn published(kind: Kind) {
    static FRAME: Cached<Counter> =
        Cached::new(|| metrics::counter!(FRAMES_PUBLISHED, "kind" => "frame"));
    static KICK: Cached<Counter> =
        Cached::new(|| metrics::counter!(FRAMES_PUBLISHED, "kind" => "kick"));
    static END: Cached<Counter> =
        Cached::new(|| metrics::counter!(FRAMES_PUBLISHED, "kind" => "end"));
    match kind {
        Kind::Frame => &FRAME,
        Kind::Kick => &KICK,
        Kind::End => &END,
    }
    .get()
    .increment(1);
}

/// Counts one frame an edge judged ([`FRAMES_RELAYED`]).
pub fn relayed(verdict: Relayed) {
    static DELIVERED: Cached<Counter> =
        Cached::new(|| metrics::counter!(FRAMES_RELAYED, "verdict" => "delivered"));
    static DUPLICATE: Cached<Counter> =
        Cached::new(|| metrics::counter!(FRAMES_RELAYED, "verdict" => "duplicate"));
    static STALE: Cached<Counter> =
        Cached::new(|| metrics::counter!(FRAMES_RELAYED, "verdict" => "stale"));
    static UNSOLICITED: Cached<Counter> =
        Cached::new(|| metrics::counter!(FRAMES_RELAYED, "verdict" => "unsolicited"));
    match verdict {
        Relayed::Delivered => &DELIVERED,
        Relayed::Duplicate => &DUPLICATE,
        Relayed::Stale => &STALE,
        Relayed::Unsolicited => &UNSOLICITED,
    }
    .get()
    .increment(1);
}

/// Counts one command request the owner's room service answered ([`ROOM_REQUESTS`],
/// `op` `command`; the other ops are rare and use the macro).
pub fn room_command() {
    static COMMAND: Cached<Counter> =
        Cached::new(|| metrics::counter!(ROOM_REQUESTS, "op" => "command"));
    COMMAND.get().increment(1);
}

/// Counts one command an edge forwarded ([`COMMANDS_FORWARDED`]) with `outcome`: `taken`
/// (every relayed command that goes well) through a kept handle, the others (failures,
/// the edge's own answers) through the macro.
pub fn forwarded(outcome: &'static str) {
    static TAKEN: Cached<Counter> =
        Cached::new(|| metrics::counter!(COMMANDS_FORWARDED, "outcome" => "taken"));
    if outcome == "taken" {
        TAKEN.get().increment(1);
    } else {
        metrics::counter!(COMMANDS_FORWARDED, "outcome" => outcome).increment(1);
    }
}
