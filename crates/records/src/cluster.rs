//! Records of cluster mode (docs/CLUSTER.md): room leases with their fencing epoch, node
//! heartbeats, and [`RoomWrite`], the one shape of a room's write.
//!
//! A node owns a room while it holds the room's lease; the lease's `epoch` grows by one at
//! every change of owner and is the fencing token: every write of the room checks it in
//! the write's own transaction (`parchis_store::Store::write_room`).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::types::{EventRecord, GameEnd, GameStart, LogPiece, RoomStatusUpdate, SeatRecord};

/// Proof that `node` acquired `room_code`'s lease at `epoch`: the fencing token a room's
/// writes carry. A write with a fence is refused
/// (`parchis_store::StoreError::Fenced`) once the lease has another owner
/// or another epoch (docs/CLUSTER.md, "Fencing").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fence {
    /// The room.
    pub room_code: String,
    /// The node holding the lease (`--node-id`).
    pub node: String,
    /// The lease's epoch when `node` acquired it (1 for a room's first lease).
    pub epoch: i64,
}

/// One room's lease as stored (`room_leases`), read by `parchis_store::Store::lease`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The room.
    pub room_code: String,
    /// The node that acquired it last.
    pub owner: String,
    /// Its epoch (grows by one at every acquire).
    pub epoch: i64,
    /// Milliseconds until it expires, by the database's clock (the memory store's own
    /// monotonic clock); negative once expired.
    pub expires_in_ms: i64,
    /// The room is finished or disposed: the lease is never acquired or claimed again.
    pub retired: bool,
}

/// What a node reports of itself at every heartbeat
/// (`parchis_store::Store::heartbeat_node`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRecord {
    /// The node's id (`--node-id`).
    pub node_id: String,
    /// How many rooms it owns now.
    pub rooms: u32,
    /// Whether it is draining (takes no new rooms, claims none; it is leaving).
    pub draining: bool,
    /// Whether it sheds load (takes no new rooms; claims rooms of dead nodes only when
    /// every live node sheds). Independent of `draining`.
    #[serde(default)]
    pub shedding: bool,
}

/// A live node, as listed by `parchis_store::Store::live_nodes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeInfo {
    /// The node's id.
    pub node_id: String,
    /// Rooms it owned at its last heartbeat.
    pub rooms: u32,
    /// Whether it was draining at its last heartbeat.
    pub draining: bool,
    /// Whether it shed load at its last heartbeat (`false` for a row written without it).
    #[serde(default)]
    pub shedding: bool,
    /// Milliseconds since its last heartbeat, by the database's clock (≥ 0).
    pub seen_ms_ago: i64,
}

/// One write of a room's rows, given to `parchis_store::Store::write_room`
/// with the room's code (and, in cluster mode, the owner's [`Fence`]). Each variant is
/// what one of the separate write methods does, and is atomic on its own.
#[derive(Debug, Clone, PartialEq)]
pub enum RoomWrite {
    /// Insert or replace a seat, as `parchis_store::Store::upsert_seat`. Its
    /// `room_code` must be the room written.
    UpsertSeat(SeatRecord),
    /// Remove the seat of this colour (no error when there is none), as
    /// `parchis_store::Store::delete_seat`.
    DeleteSeat {
        /// Stored colour name.
        colour: String,
    },
    /// Append events right after `after_seq`, as
    /// `parchis_store::Store::append_after`. Empty `events`: a no-op.
    Append {
        /// The game (of the room written).
        game_id: Uuid,
        /// The last `seq` the room believes stored.
        after_seq: i64,
        /// The events, `after_seq + 1, …`.
        events: Vec<EventRecord>,
    },
    /// Append a piece of the game's packed log right after `after_seq` (issue 28): the
    /// piece must start at `after_seq + 1` and the game's last stored seq (in either
    /// format) must be `after_seq`, checked as `parchis_store::Store::append_after`
    /// checks events. Appended to the game's tail (`game_log_tail`), which is folded into
    /// `games.log` once it has 32 pieces (48 on PostgreSQL) and at the game's end.
    AppendLog {
        /// The game (of the room written).
        game_id: Uuid,
        /// The last `seq` the room believes stored.
        after_seq: i64,
        /// The piece, `after_seq + 1 ..= piece.last_seq`.
        piece: LogPiece,
    },
    /// Start a game, as `parchis_store::Store::start_game`. Its game's and
    /// seats' `room_code` must be the room written.
    Start(Box<GameStart>),
    /// End a game, as `parchis_store::Store::end_game`. Its `room_code` must be
    /// the room written.
    End(Box<GameEnd>),
    /// Set or clear the game's turn deadline, as
    /// `parchis_store::Store::set_deadline`.
    SetDeadline {
        /// The game (of the room written).
        game_id: Uuid,
        /// Absolute deadline, unix ms.
        deadline_ms: Option<i64>,
    },
    /// Set the room's status, as
    /// `parchis_store::Store::update_room_status`.
    RoomStatus(RoomStatusUpdate),
    /// Several of the writes above, in order, in ONE transaction (all or nothing, behind
    /// one fence check): a step whose rows change together, such as a seat moving to
    /// another colour (delete the old row, insert the new one) or a bot taking over a
    /// seat (its event and its seat row). No batch inside a batch.
    Batch(Vec<RoomWrite>),
}

impl RoomWrite {
    /// A short name of the variant, for logs.
    pub fn kind(&self) -> &'static str {
        match self {
            RoomWrite::UpsertSeat(_) => "upsert_seat",
            RoomWrite::DeleteSeat { .. } => "delete_seat",
            RoomWrite::Append { .. } => "append",
            RoomWrite::AppendLog { .. } => "append_log",
            RoomWrite::Start(_) => "start",
            RoomWrite::End(_) => "end",
            RoomWrite::SetDeadline { .. } => "set_deadline",
            RoomWrite::RoomStatus(_) => "room_status",
            RoomWrite::Batch(_) => "batch",
        }
    }

    /// Refuses a write whose records, or whose fence, name another room than
    /// `room_code` (it would escape the room's fence).
    ///
    /// # Errors
    /// The text of the mismatch (the store answers it as `StoreError::InvalidWrite`).
    pub fn check_room(&self, room_code: &str, fence: Option<&Fence>) -> Result<(), String> {
        if let Some(fence) = fence.filter(|f| f.room_code != room_code) {
            return Err(format!(
                "a write for room {room_code:?} carries the fence of room {:?}",
                fence.room_code
            ));
        }
        if let RoomWrite::Batch(writes) = self {
            for write in writes {
                if matches!(write, RoomWrite::Batch(_)) {
                    return Err(format!("a batch for room {room_code:?} holds a batch"));
                }
                write.check_room(room_code, fence)?;
            }
            return Ok(());
        }
        let named: Vec<&str> = match self {
            RoomWrite::UpsertSeat(s) => vec![&s.room_code],
            RoomWrite::Start(start) => std::iter::once(start.game.room_code.as_str())
                .chain(start.seats.iter().map(|s| s.room_code.as_str()))
                .collect(),
            RoomWrite::End(end) => vec![&end.room_code],
            _ => Vec::new(),
        };
        match named.into_iter().find(|c| *c != room_code) {
            None => Ok(()),
            Some(other) => Err(format!(
                "a {} write for room {room_code:?} names room {other:?}",
                self.kind()
            )),
        }
    }
}
