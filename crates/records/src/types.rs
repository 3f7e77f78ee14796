//! Plain records stored and returned by every `parchis_store::Store` backend.
//!
//! The store knows nothing about game rules: room settings, game rules, results and event
//! payloads are opaque [`serde_json::Value`]s, and colours are strings chosen by the caller.
//! All times are `i64` unix milliseconds (UTC), identical on every backend.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// Lifecycle state of a room, stored as `'open'`, `'playing'` or `'finished'`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoomStatus {
    /// Players may join; no game is running.
    Open,
    /// A game is in progress.
    Playing,
    /// The room is closed for good. `parchis_store::Store::load_unfinished`
    /// skips such rooms.
    Finished,
}

impl RoomStatus {
    /// The text stored in the `rooms.status` column.
    pub fn as_str(self) -> &'static str {
        match self {
            RoomStatus::Open => "open",
            RoomStatus::Playing => "playing",
            RoomStatus::Finished => "finished",
        }
    }
}

impl fmt::Display for RoomStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error returned when parsing a [`RoomStatus`] from text that is not one of its three names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown room status {0:?}")]
pub struct UnknownRoomStatus(pub String);

impl FromStr for RoomStatus {
    type Err = UnknownRoomStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "open" => Ok(RoomStatus::Open),
            "playing" => Ok(RoomStatus::Playing),
            "finished" => Ok(RoomStatus::Finished),
            other => Err(UnknownRoomStatus(other.to_owned())),
        }
    }
}

/// One row of `rooms`: a table that players join by its short code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoomRecord {
    /// Primary key: the code players type to join (case-sensitive, stored as given).
    pub code: String,
    /// Room settings chosen by the creator; opaque to the store.
    pub settings: Value,
    /// Current lifecycle state.
    pub status: RoomStatus,
    /// When the room was created (unix ms).
    pub created_at_ms: i64,
    /// When the room last moved to [`RoomStatus::Playing`] (unix ms), if ever.
    pub started_at_ms: Option<i64>,
    /// When the room moved to [`RoomStatus::Finished`] (unix ms), if it did.
    pub finished_at_ms: Option<i64>,
    /// Time of the last status change, or of creation (unix ms).
    pub updated_at_ms: i64,
}

/// The new status and timestamps written by
/// `parchis_store::Store::update_room_status`.
///
/// Every field is written exactly as given (a `None` clears the column), so the caller, which
/// owns the room's state, decides what each timestamp holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoomStatusUpdate {
    /// The new status.
    pub status: RoomStatus,
    /// New value of `started_at_ms` (unix ms).
    pub started_at_ms: Option<i64>,
    /// New value of `finished_at_ms` (unix ms).
    pub finished_at_ms: Option<i64>,
    /// New value of `updated_at_ms`: normally the time of this change (unix ms).
    pub updated_at_ms: i64,
}

/// One row of `seats`: the player holding one colour in one room.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatRecord {
    /// The room this seat belongs to (must exist).
    pub room_code: String,
    /// The colour held; with `room_code` the primary key. Opaque to the store.
    pub colour: String,
    /// Name shown to other players.
    pub display_name: String,
    /// Lowercase hex SHA-256 of the seat's session token (see [`hash_token`]). Raw tokens are
    /// never stored.
    pub token_hash: String,
    /// Whether this player created the room.
    pub is_creator: bool,
    /// When the player took the seat (unix ms).
    pub joined_at_ms: i64,
    /// The level of the bot playing this seat (e.g. `"greedy"`), `None` for a person.
    /// Opaque to the store.
    #[serde(default)]
    pub bot: Option<String>,
    /// The account of the logged-in player holding the seat (a UUID v7 of
    /// `accounts.id`), `None` for a guest or a bot. Its `display_name` is then the
    /// account's username.
    #[serde(default)]
    pub account_id: Option<Uuid>,
}

/// One row of `games`: one game played in a room.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Primary key (`UUID` on PostgreSQL, hyphenated lowercase text on SQLite).
    pub id: Uuid,
    /// The room the game is played in (must exist).
    pub room_code: String,
    /// Name of the rules preset the game started from.
    pub preset: String,
    /// The full rules in force; opaque to the store.
    pub rules: Value,
    /// A hash of `rules` computed by the caller, to tell rule sets apart cheaply.
    pub rules_hash: String,
    /// When the game was created (unix ms).
    pub created_at_ms: i64,
    /// When the game finished (unix ms); `None` while it is running.
    pub finished_at_ms: Option<i64>,
    /// Final result (standings etc.); opaque to the store. Set by
    /// `parchis_store::Store::finish_game`.
    pub result: Option<Value>,
    /// Why the game ended (e.g. `"completed"`, `"abandoned"`); opaque to the store.
    pub reason: Option<String>,
    /// Absolute deadline of the running turn clock (unix ms), `None` when no clock runs.
    pub deadline_ms: Option<i64>,
    /// The game's fair-dice record (`docs/FAIR_DICE.md`): scheme, mode, server seed and
    /// client seeds. It holds the secret server seed: never show it before the game is
    /// over. Opaque to the store; `None` for games stored before fair dice.
    pub dice: Option<Value>,
}

impl GameRecord {
    /// Whether `parchis_store::Store::finish_game` was called for this game.
    pub fn is_finished(&self) -> bool {
        self.finished_at_ms.is_some()
    }
}

/// Which games `parchis_store::Store::find_games` returns. Every filter is
/// optional and they combine with AND; the page is the newest `limit` games strictly older
/// than `before`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameQuery {
    /// Only the games of this room.
    pub room_code: Option<String>,
    /// Only games whose `preset` is exactly this.
    pub preset: Option<String>,
    /// `Some(true)`: finished games only; `Some(false)`: running games only.
    pub finished: Option<bool>,
    /// Only finished games with exactly this `reason`.
    pub reason: Option<String>,
    /// Only games created at or after this time (unix ms).
    pub since_ms: Option<i64>,
    /// The page starts strictly after this `(created_at_ms, id)` in newest-first order:
    /// the key of the previous page's last game.
    pub before: Option<(i64, Uuid)>,
    /// Most games returned.
    pub limit: u32,
    /// Only games of public rooms: rooms whose settings say `"public": true` or do not
    /// say (the protocol's default), see [`room_is_public`]. A private room's games are
    /// then found by its code (`room_code`) or by their ids, never by listing: the code
    /// is the invitation.
    pub public_only: bool,
}

/// Whether a room's stored `settings` make it public: `"public"` is not `false` (absent
/// means public, the protocol's default). The SQL backends read the JSON the same way.
pub fn room_is_public(settings: &Value) -> bool {
    settings.get("public").and_then(Value::as_bool) != Some(false)
}

impl GameQuery {
    /// Whether `game` passes the filters and the page start (the memory backend's
    /// reading of the query, identical to the SQL one), but for [`GameQuery::public_only`],
    /// which needs the game's room (the memory backend checks it beside).
    pub fn admits(&self, game: &GameRecord) -> bool {
        self.room_code.as_ref().is_none_or(|r| *r == game.room_code)
            && self.preset.as_ref().is_none_or(|p| *p == game.preset)
            && self.finished.is_none_or(|f| f == game.is_finished())
            && self
                .reason
                .as_ref()
                .is_none_or(|r| game.reason.as_deref() == Some(r.as_str()))
            && self.since_ms.is_none_or(|s| game.created_at_ms >= s)
            && self
                .before
                .is_none_or(|key| (game.created_at_ms, game.id) < key)
    }
}

/// One row of `game_events`: one event of a game's append-only log.
///
/// The game it belongs to is given separately (see
/// `parchis_store::Store::append_events`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Position in the game's log; unique per game. The store enforces uniqueness only, so
    /// callers choose the numbering (normally 1, 2, 3, …).
    pub seq: i64,
    /// The event payload; opaque to the store.
    pub event: Value,
    /// When the event happened (unix ms).
    pub created_at_ms: i64,
}

/// The start of a game, written by `parchis_store::Store::start_game` in ONE
/// transaction: the game row, the room's new status, the seats taken at the start (bots
/// filling free colours) and the game's first events. After a crash either all of it is
/// stored or none of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameStart {
    /// The new game (its `room_code` names the room whose status is updated).
    pub game: GameRecord,
    /// The room's new status and timestamps (normally `playing`).
    pub room: RoomStatusUpdate,
    /// Seats inserted or replaced with the game (may be empty).
    pub seats: Vec<SeatRecord>,
    /// The game's first events, with consecutive `seq`s (at least one), as JSON rows
    /// (`game_events`, the format before issue 28). Empty when `log` is given.
    pub events: Vec<EventRecord>,
    /// The game's first piece of its packed log (issue 28, `docs/STORAGE.md`): stored
    /// instead of `events` (the start of its tail, `game_log_tail`). `None`: `events` are
    /// stored.
    #[serde(default)]
    pub log: Option<LogPiece>,
}

/// The end of a game, written by `parchis_store::Store::end_game` in ONE
/// transaction: the events that end it, the result on the game row, the room's new
/// status and, for a rated game, its players' new ratings with their history rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameEnd {
    /// The game that ends.
    pub game_id: Uuid,
    /// Its room, whose status is updated.
    pub room_code: String,
    /// The `seq` of the last event already stored for the game; `events` must follow it
    /// (checked as by `parchis_store::Store::append_after`). Ignored when
    /// `events` is empty.
    pub after_seq: i64,
    /// The final events (the last action's events) as JSON rows; may be empty. Empty
    /// when `log` is given.
    pub events: Vec<EventRecord>,
    /// The final piece of the game's packed log (issue 28), stored instead of `events`
    /// (checked as by `parchis_store::Store::append_after`), then the whole log folded
    /// into `games.log` in the same transaction. `None`: `events` (if any) are stored, and
    /// a packed log, if the game has one, is still folded.
    #[serde(default)]
    pub log: Option<LogPiece>,
    /// Final result; opaque to the store.
    pub result: Value,
    /// Why the game ended (e.g. `"completed"`, `"abandoned"`).
    pub reason: String,
    /// When it finished (unix ms).
    pub finished_at_ms: i64,
    /// The room's new status and timestamps (normally `finished`).
    pub room: RoomStatusUpdate,
    /// A rated game's result: its players' ratings in the pool are updated and one
    /// history row per player written, in the same transaction (issue 26). `None` for a
    /// casual game.
    #[serde(default)]
    pub rated: Option<crate::ratings::RatedGame>,
}

/// Everything needed to bring one room back after a restart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoomSnapshot {
    /// The room itself.
    pub room: RoomRecord,
    /// Its seats, ordered by `joined_at_ms` then `colour`.
    pub seats: Vec<SeatRecord>,
    /// The room's most recent game (greatest `created_at_ms`, then greatest `id`), finished
    /// or not; `None` if no game was ever created in the room.
    pub game: Option<GameRecord>,
    /// All events of `game` stored as JSON rows (`game_events`, games stored before
    /// issue 28), in ascending `seq` order; empty when `game` is `None` or its log is
    /// packed (`log`).
    pub events: Vec<EventRecord>,
    /// `game`'s packed log (issue 28), when it has one: then `events` is empty.
    #[serde(default)]
    pub log: Option<PackedLog>,
}

/// One piece of a game's packed log (issue 28, `docs/STORAGE.md`; the bytes are
/// `parchis_room_core::throws`' format, opaque to the store): the ops of the events
/// `first_seq ..= last_seq`, packed as a continuation of the pieces before it. One
/// group commit stores at most one append per game to its tail (`game_log_tail`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogPiece {
    /// The seq of the first event it packs (the one after the log's last seq; 1 or more).
    pub first_seq: i64,
    /// The seq of the last event it packs (at least `first_seq`).
    pub last_seq: i64,
    /// The packed bytes (the first piece of a game starts with the format byte).
    pub bytes: Vec<u8>,
}

/// A game's packed log as stored: the folded log (`games.log`) followed by its tail's
/// pieces (`game_log_tail`) in `last_seq` order, one byte string that unpacks as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackedLog {
    /// The packed bytes.
    pub bytes: Vec<u8>,
    /// The seq of the last event they pack.
    pub last_seq: i64,
}

/// One game as stored, read by `parchis_store::Store::get_game_log`: its row and its log
/// in whichever format it was stored (a game with a packed log has no JSON rows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredGame {
    /// The game's row.
    pub game: GameRecord,
    /// Its events stored as JSON rows (`game_events`, before issue 28), by `seq`; empty
    /// when `log` is given.
    pub events: Vec<EventRecord>,
    /// Its packed log, if it has one.
    pub log: Option<PackedLog>,
}

impl StoredGame {
    /// The last seq stored for the game (0 for none), in either format.
    pub fn last_seq(&self) -> i64 {
        match &self.log {
            Some(log) => log.last_seq,
            None => self.events.last().map_or(0, |e| e.seq),
        }
    }
}

impl RoomSnapshot {
    /// The last seq stored for the room's game (0 for none), in either format.
    pub fn last_seq(&self) -> i64 {
        match &self.log {
            Some(log) => log.last_seq,
            None => self.events.last().map_or(0, |e| e.seq),
        }
    }
}

/// Hashes a session token the way `seats.token_hash` expects: lowercase hex SHA-256 of the
/// token's UTF-8 bytes (64 characters).
///
/// ```
/// assert_eq!(
///     parchis_records::hash_token("abc"),
///     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// );
/// ```
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_status_round_trips_through_text() {
        for status in [RoomStatus::Open, RoomStatus::Playing, RoomStatus::Finished] {
            assert_eq!(status.as_str().parse::<RoomStatus>(), Ok(status));
            assert_eq!(
                serde_json::to_value(status).ok(),
                Some(Value::String(status.as_str().to_owned()))
            );
        }
        assert_eq!(
            "closed".parse::<RoomStatus>(),
            Err(UnknownRoomStatus("closed".into()))
        );
    }

    #[test]
    fn token_hash_is_lowercase_hex_sha256() {
        let h = hash_token("");
        assert_eq!(
            h,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(hash_token("token").len(), 64);
    }
}
