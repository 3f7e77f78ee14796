//! The memory store's tables: rooms, seats, games, events, leases, node heartbeats,
//! ratings and tournaments, as
//! plain maps behind the store's one mutex.

use parchis_records::{EventRecord, GameRecord, NodeRecord, RoomRecord, SeatRecord};
use parchis_records::{RatingHistoryRecord, RatingRecord};
use std::collections::{BTreeMap, HashMap};

use crate::accounts::AccountRecord;
use uuid::Uuid;

#[derive(Clone, Default)]
pub(super) struct Inner {
    pub(super) closed: bool,
    pub(super) rooms: HashMap<String, RoomRecord>,
    /// Keyed by `(room_code, colour)`.
    pub(super) seats: BTreeMap<(String, String), SeatRecord>,
    pub(super) games: HashMap<Uuid, GameRecord>,
    /// Per game, keyed by `seq` (games stored before issue 28's packed log).
    pub(super) events: HashMap<Uuid, BTreeMap<i64, EventRecord>>,
    /// Per game, its packed log (`games.log`, `games.log_seq` and `game_log_tail`).
    pub(super) logs: HashMap<Uuid, MemLog>,
    /// While a batch runs, what its writes replaced (put back by `super::writes`).
    pub(super) undo: Option<Vec<Undo>>,
    pub(super) leases: BTreeMap<String, MemLease>,
    pub(super) nodes: HashMap<String, MemNode>,
    /// Current ratings, keyed by `(account, pool)` (issue 26).
    pub(super) ratings: BTreeMap<(Uuid, String), RatingRecord>,
    /// Rating history rows, in the order written.
    pub(super) rating_history: Vec<RatingHistoryRecord>,
    /// Accounts and what hangs on them ([`super::accounts`]).
    pub(super) accounts: AccountTables,
    /// Tournaments' event logs (issue 27, [`super::tournaments`]).
    pub(super) tournaments: HashMap<Uuid, MemTournament>,
}

/// One game's packed log: the folded part and its last seq, and the tail pieces by last
/// seq.
#[derive(Clone, Debug, Default)]
pub(crate) struct MemLog {
    pub(super) folded: Vec<u8>,
    pub(super) log_seq: Option<i64>,
    pub(super) tail: BTreeMap<i64, Vec<u8>>,
}

/// One room's lease; times in ms of the store's clock.
#[derive(Clone)]
pub(super) struct MemLease {
    pub(super) owner: String,
    pub(super) epoch: i64,
    pub(super) expires_at: i64,
    pub(super) retired: bool,
}

/// One node's heartbeat; `seen_at` in ms of the store's clock.
#[derive(Clone)]
pub(super) struct MemNode {
    pub(super) record: NodeRecord,
    pub(super) seen_at: i64,
}

/// The accounts' tables.
#[derive(Clone, Default)]
pub(super) struct AccountTables {
    pub(super) accounts: HashMap<Uuid, Account>,
    /// Username key → until (unix ms).
    pub(super) reservations: HashMap<String, i64>,
    /// Token hash → its row.
    pub(super) tokens: HashMap<String, Token>,
    /// `(account, blocked)` → created at (unix ms).
    pub(super) blocks: BTreeMap<(Uuid, Uuid), i64>,
}

#[derive(Clone)]
pub(super) struct Account {
    pub(super) record: AccountRecord,
    pub(super) key: String,
    /// Code hash → used at (unix ms).
    pub(super) codes: HashMap<String, Option<i64>>,
}

#[derive(Clone)]
pub(super) struct Token {
    pub(super) account: Uuid,
    pub(super) used_at_ms: i64,
}

/// One stored tournament: its creation time and its log, entry `i` being seq `i + 1`.
#[derive(Clone)]
pub(super) struct MemTournament {
    pub(super) created_at_ms: i64,
    pub(super) entries: Vec<serde_json::Value>,
    /// The director's lease (`tournament_leases`): owner, epoch, expiry (store clock, ms).
    pub(super) lease: Option<(String, i64, i64)>,
    /// When it was marked finished (`tournaments.finished_at_ms`).
    pub(super) finished_at_ms: Option<i64>,
}

/// What one change of a batch replaced, to put back if a later write of the batch fails.
#[derive(Clone, Debug)]
pub(crate) enum Undo {
    /// A room's record before its status changed.
    Room(String, RoomRecord),
    /// A seat before it was inserted, replaced or removed (`None`: there was none).
    Seat((String, String), Option<SeatRecord>),
    /// A game's record before it was inserted or changed (`None`: there was none).
    Game(Uuid, Option<GameRecord>),
    /// Event rows inserted into a game's log (their seqs).
    Events(Uuid, Vec<i64>),
    /// A game's packed log before it was created or folded (`None`: there was none).
    Log(Uuid, Option<MemLog>),
    /// A tail piece inserted (its last seq).
    Tail(Uuid, i64),
    /// Ratings before a rated game's end changed them, and the history's length.
    Ratings(Vec<((Uuid, String), Option<RatingRecord>)>, usize),
}
