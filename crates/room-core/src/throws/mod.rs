//! A game's log packed as its inputs (issue 28, `docs/STORAGE.md`): the actions chosen,
//! the clock, abandonment, bot-takeover and referee inputs with their times, and the
//! start (rules, seats, fair-dice commitment and client seeds). The engine events those
//! actions caused, the positions and the frames are not stored: [`decode`] replays the
//! actions through the engine and gives back the very [`LoggedEvent`]s the room logged,
//! seqs, times and position marks included.
//!
//! Layout: one format byte ([`FORMAT`]), the first seq and the first time (varints),
//! then ops. An op is one byte — its kind (low 5 bits, [`state::kind`]), a
//! "positioned" bit and a "time changed" bit — then, if the time changed, the change in
//! ms (zigzag varint), then the kind's payload. An action op stands for every engine
//! event the action produced; any event without a compact op is stored as its JSON, so
//! packing is lossless for any log (the encoder checks each compact op against the
//! event it replaces before writing it). A log is packed in pieces
//! ([`Encoder::push`], one per group commit) that concatenate into one stream.
//!
//! Every [`state::SNAPSHOT_EVERY`] throws (format 2) a `SNAPSHOT` op carries that state,
//! checked against the replay by [`decode`]; a restore reads from the last one
//! ([`decode_tail`]), replaying only the throws after it.
//!
//! Module order: `wire` (bytes), `state` (what both sides track, the op kinds),
//! `snapshot`, `encode`, `decode`.

mod decode;
mod encode;
mod snapshot;
pub mod state;
mod wire;

pub use decode::{decode, decode_tail, Decoded, Tail};
pub use encode::Encoder;

use crate::replay::LoggedEvent;

/// The format byte a new packed log starts with. A new layout gets a new number and a
/// reader beside this one. Format 2 is format 1 with `SNAPSHOT` ops (a reader of format
/// 1 refuses them as an unknown op kind); both are read.
pub const FORMAT: u8 = 2;

/// The first format, without snapshots: still read, and still appended to (without
/// snapshots) when a game stored in it is restored.
pub const FORMAT_1: u8 = 1;

/// Why packed bytes do not unpack.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The format byte is not one this server reads.
    #[error("unknown packed log format {0}")]
    Format(u8),
    /// The bytes end inside an op.
    #[error("packed log ends at byte {offset} inside {what}")]
    Truncated {
        /// Where the bytes ended.
        offset: usize,
        /// What was being read.
        what: &'static str,
    },
    /// An op that does not read or does not replay.
    #[error("packed log byte {offset}: {message}")]
    Bad {
        /// Where (just after the bad value).
        offset: usize,
        /// What is wrong.
        message: String,
    },
}

/// Packs a whole log in one piece (as [`Encoder::push`] once).
pub fn encode(events: &[LoggedEvent]) -> Vec<u8> {
    let mut out = Vec::new();
    Encoder::new().push(events, &mut out);
    out
}

#[cfg(test)]
mod tests;
