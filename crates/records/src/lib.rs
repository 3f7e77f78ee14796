//! The records the store keeps and the room needs, with nothing of the store itself: a leaf
//! crate shared by `parchis-store` (which re-exports all of it) and the pure room core
//! (`parchis-room-core`), so the core can name stored rows without depending on sqlx or
//! tokio.
//!
//! * [`types`]: rooms, seats, games, events and snapshots as stored.
//! * [`cluster`]: leases, fences, node heartbeats and the fenced [`RoomWrite`].
//! * [`ratings`]: a rated game's result, stored ratings and their history.
//! * [`write_failure`]: what a failed write means for its caller.

#![warn(missing_docs)]

pub mod cluster;
pub mod ratings;
pub mod types;
pub mod write_failure;

pub use cluster::{Fence, Lease, NodeInfo, NodeRecord, RoomWrite};
pub use ratings::{RatedGame, RatedPlayer, RatingHistoryRecord, RatingRecord};
pub use types::{
    hash_token, room_is_public, EventRecord, GameEnd, GameQuery, GameRecord, GameStart, LogPiece,
    PackedLog, RoomRecord, RoomSnapshot, RoomStatus, RoomStatusUpdate, SeatRecord, StoredGame,
    UnknownRoomStatus,
};
pub use write_failure::WriteFailure;
