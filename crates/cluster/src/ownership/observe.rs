//! Operational events of ownership: each function writes the one log line (with `node`,
//! `room`, `game` and `epoch` as fields) and bumps the matching metric
//! (`parchis_telemetry::names`; labels are closed sets, never room codes or node ids).

use parchis_store::Fence;
use parchis_telemetry::names as m;
use tracing::{info, warn};
use uuid::Uuid;

fn game_field(game: Option<Uuid>) -> String {
    game.map(|g| g.to_string()).unwrap_or_default()
}

/// One renewal statement kept `n` leases.
pub fn renewed(n: usize) {
    metrics::counter!(m::LEASES_RENEWED).increment(n as u64);
}

/// One renewal statement ended (answered, failed or given up) after `took`.
pub fn renewal_took(took: std::time::Duration) {
    metrics::histogram!(m::RENEWAL_DURATION).record(took.as_secs_f64());
}

/// A renewal scheduled for `tick` started at `now`: the renewer's scheduling delay.
/// Logged (WARN) when beyond `warn_after`.
pub fn renewal_started(
    node: &str,
    tick: tokio::time::Instant,
    now: tokio::time::Instant,
    warn_after: std::time::Duration,
) {
    let late = now.saturating_duration_since(tick);
    metrics::histogram!(m::RENEWAL_DELAY).record(late.as_secs_f64());
    if late > warn_after {
        warn!(
            node,
            late_ms = late.as_millis() as u64,
            "lease renewal started late"
        );
    }
}

/// A lease was lost: `why` is `lease lost` (missing from a renewal's answer) or no
/// renewal for a whole TTL.
pub fn lease_lost(fence: &Fence, why: &'static str) {
    warn!(node = %fence.node, room = %fence.room_code, epoch = fence.epoch, why, "lease lost: stopping the room");
    let label = match why {
        "lease lost" => "renewal",
        "nats_lost" => "nats_lost",
        _ => "expired",
    };
    metrics::counter!(m::LEASES_LOST, "why" => label).increment(1);
}

/// A room stopped here without writing: its lease is lost or a write was fenced.
pub fn room_stopped(fence: &Fence, why: &'static str, conns: usize) {
    info!(node = %fence.node, room = %fence.room_code, epoch = fence.epoch, why, conns, "room stopped on this node: connections move to the new owner");
}

/// A write of the room was refused by its fence: another node owns it now.
pub fn write_fenced(
    node: &str,
    room: &str,
    game: Option<Uuid>,
    epoch: i64,
    kind: &str,
    current: &Option<(String, i64)>,
) {
    warn!(
        node,
        room,
        game = %game_field(game),
        epoch,
        write = kind,
        owner = ?current,
        "write refused by the room's fence: stopping the room"
    );
    metrics::counter!(m::FENCED_WRITES).increment(1);
}

/// A lease was released (drain, shutdown); `matched`: it was still this node's.
pub fn released(fence: &Fence, matched: bool) {
    info!(node = %fence.node, room = %fence.room_code, epoch = fence.epoch, matched, "lease released");
}

/// A lease was retired (finished or disposed room); `matched`: it was still this node's.
pub fn retired(fence: &Fence, matched: bool) {
    info!(node = %fence.node, room = %fence.room_code, epoch = fence.epoch, matched, "lease retired");
}

/// How this node came to own a room it did not create.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// The sweeper claimed it (its lease expired or it had none).
    Claimed,
    /// A draining node handed it over.
    Adopted,
}

impl How {
    fn label(self) -> &'static str {
        match self {
            How::Claimed => "claimed",
            How::Adopted => "adopted",
        }
    }
}

/// A claimed or adopted room runs here now.
pub fn took_over(fence: &Fence, game: Option<Uuid>, how: How) {
    info!(node = %fence.node, room = %fence.room_code, game = %game_field(game), epoch = fence.epoch, how = how.label(), "room taken over");
    match how {
        How::Claimed => metrics::counter!(m::TAKEOVERS).increment(1),
        How::Adopted => metrics::counter!(m::ADOPTIONS).increment(1),
    }
}

/// A claimed or adopted room did not come up; `why` is a closed label, `lease` says
/// what became of its lease.
pub fn takeover_failed(
    fence: &Fence,
    game: Option<Uuid>,
    how: How,
    why: &'static str,
    lease: &'static str,
    error: &dyn std::fmt::Display,
) {
    tracing::error!(
        node = %fence.node,
        room = %fence.room_code,
        game = %game_field(game),
        epoch = fence.epoch,
        how = how.label(),
        lease,
        error = %error,
        "room not taken over"
    );
    metrics::counter!(m::TAKEOVER_FAILURES, "why" => why).increment(1);
}

/// The drain ended: `handed` rooms handed off, `adopted` of them taken by another node
/// at once, after `secs`.
pub fn drained(node: &str, handed: usize, adopted: usize, left: usize, secs: f64) {
    info!(node, handed, adopted, left, secs, "drain done");
    metrics::histogram!(m::DRAIN_DURATION).record(secs);
}
