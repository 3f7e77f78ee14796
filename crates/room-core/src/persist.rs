//! The one typed mapping between the room's values and the store's records: room settings,
//! seats, room events (with their format version), games, outcomes and status changes.
//! Nothing else in the server builds or reads a store record's JSON.
//!
//! Size (~610 lines): both stored formats of a game's log are read and written here, the
//! JSON rows (before issue 28) and the packed log's pieces ([`pack`], [`stored_log`]), so
//! the one mapping stays in one file.
//!
//! Stored events are the [`RoomEvent`]'s JSON object (as sent on the WebSocket) with one
//! more key, [`FORMAT_KEY`]`: 1`. A record without it is a game written before the version
//! existed (format 0: the same shape); both read back as today's [`RoomEvent`]. A future
//! wire change bumps [`EVENT_FORMAT`] and adds a reader for the old format here.
//!
//! The last event of a batch whose frame carried the position after it (a batch that
//! moved the game: its start, an action) has one more key, [`POSITION_KEY`]`: true`; on a
//! restore [`replay`](crate::replay()) rebuilds that position, so a frame sent again from
//! the rebuilt history equals the live one. Absent means no position: every event of a log
//! written before the key existed reads so (its frames are sent again without position).
//! The key is optional within format 1 (a reader that does not know it ignores it, as
//! serde does unknown keys), so it needs no format bump.

use crate::replay::LoggedEvent;
use crate::seat::{bot_kind, Seat};
use crate::Ms;
use parchis_engine::{Outcome, RuleSet, WinReason};
use parchis_protocol::{BotLevel, RoomEvent, RoomSettings};
use parchis_records::{
    EventRecord, GameEnd, GameRecord, GameStart, LogPiece, PackedLog, RatedGame, RoomRecord,
    RoomStatus as StoredStatus, RoomStatusUpdate, SeatRecord,
};
use serde_json::{json, Value};
use uuid::Uuid;

/// The format version written into every stored event today.
pub const EVENT_FORMAT: u64 = 1;

/// The key of the format version in a stored event's JSON object (no room event has a
/// field of this name).
pub const FORMAT_KEY: &str = "_v";

/// The key marking, in a stored event's JSON object, the last event of a batch whose
/// frame carried `position` (value `true`; absent: no position). No room event has a field
/// of this name.
pub const POSITION_KEY: &str = "_position";

/// A stored value that does not read back: what it was and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {message}")]
pub struct Unreadable {
    /// Which value (e.g. `event seq 12`).
    pub what: String,
    /// The parse error.
    pub message: String,
}

fn unreadable(what: impl Into<String>, e: impl std::fmt::Display) -> Unreadable {
    Unreadable {
        what: what.into(),
        message: e.to_string(),
    }
}

/// One write the room asks of the store (the payload of
/// [`Effect::Persist`](crate::Effect::Persist) and [`Effect::Store`](crate::Effect::Store)).
/// The actor adds the room code where the store needs it.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    /// Insert or replace a seat.
    UpsertSeat(SeatRecord),
    /// Remove the seat of this colour.
    DeleteSeat {
        /// Stored colour name.
        colour: String,
    },
    /// Append events right after `after_seq` (the store refuses a batch that does not
    /// follow its log).
    Append {
        /// The game.
        game_id: Uuid,
        /// The last seq the room believes stored.
        after_seq: u64,
        /// The events, `after_seq + 1, …`, as JSON rows: only for a game stored as rows
        /// (one restored from rows written before issue 28, with no encoder); empty for
        /// a packed game.
        events: Vec<EventRecord>,
        /// The same events packed as the next piece of the game's packed log
        /// ([`crate::throws`]): what a packed game stores (`events` is then empty); `None`
        /// for a game stored as rows.
        piece: Option<LogPiece>,
    },
    /// Start a game: one transaction.
    Start(Box<GameStart>),
    /// End a game with its final events: one transaction.
    End(Box<GameEnd>),
    /// Set the room's status.
    RoomStatus(RoomStatusUpdate),
    /// The stored copy of the turn deadline (the `game_deadlines` row: a restore's clock).
    SetDeadline {
        /// The game.
        game_id: Uuid,
        /// Unix ms.
        deadline_ms: Option<Ms>,
    },
    /// Several writes in ONE transaction (no batch inside): rows that change together,
    /// such as a seat's old and new colour, or a bot's takeover event and its seat row.
    Batch(Vec<Write>),
}

impl From<Write> for parchis_records::RoomWrite {
    /// The store's shape of the same write (`Store::write_room`, fenced in cluster mode).
    fn from(write: Write) -> Self {
        use parchis_records::RoomWrite as W;
        match write {
            Write::UpsertSeat(record) => W::UpsertSeat(record),
            Write::DeleteSeat { colour } => W::DeleteSeat { colour },
            // The room builds no JSON row for a packed game (`Core::log_write`).
            Write::Append {
                game_id,
                after_seq,
                piece: Some(piece),
                events,
            } => {
                debug_assert!(events.is_empty(), "JSON rows beside a packed piece");
                W::AppendLog {
                    game_id,
                    after_seq: after_seq as i64,
                    piece,
                }
            }
            Write::Append {
                game_id,
                after_seq,
                events,
                piece: None,
            } => W::Append {
                game_id,
                after_seq: after_seq as i64,
                events,
            },
            // A packed game's start and end carry their piece only (the store refuses
            // a piece beside JSON rows: `InvalidWrite`).
            Write::Start(start) => W::Start(start),
            Write::End(end) => W::End(end),
            Write::RoomStatus(update) => W::RoomStatus(update),
            Write::SetDeadline {
                game_id,
                deadline_ms,
            } => W::SetDeadline {
                game_id,
                deadline_ms,
            },
            Write::Batch(writes) => W::Batch(writes.into_iter().map(W::from).collect()),
        }
    }
}

/// The stored form of room settings.
pub fn settings_value(settings: &RoomSettings) -> Value {
    serde_json::to_value(settings).unwrap_or_default()
}

/// The key of a director's reservations in the stored settings object.
pub const DIRECTOR_KEY: &str = "director";

/// The stored form of a director's room settings: the settings object with the
/// reservations under [`DIRECTOR_KEY`] (no migration: the store keeps settings opaque).
pub fn director_value(settings: &RoomSettings, director: &crate::reserved::DirectorRoom) -> Value {
    let mut value = settings_value(settings);
    if let (Some(map), Ok(d)) = (value.as_object_mut(), serde_json::to_value(director)) {
        map.insert(DIRECTOR_KEY.to_owned(), d);
    }
    value
}

/// A stored room's reservations, if a director runs it.
///
/// # Errors
/// [`Unreadable`] if the reservations are there but do not read.
pub fn director_from(value: &Value) -> Result<Option<crate::reserved::DirectorRoom>, Unreadable> {
    match value.get(DIRECTOR_KEY) {
        None => Ok(None),
        Some(d) => serde_json::from_value(d.clone())
            .map(Some)
            .map_err(|e| unreadable("room reservations", e)),
    }
}

/// A new room's record.
pub fn room_record(code: &str, settings: &RoomSettings, created_at_ms: Ms) -> RoomRecord {
    RoomRecord {
        code: code.to_owned(),
        settings: settings_value(settings),
        status: StoredStatus::Open,
        created_at_ms,
        started_at_ms: None,
        finished_at_ms: None,
        updated_at_ms: created_at_ms,
    }
}

/// Room settings and their rule set, read back.
///
/// # Errors
/// [`Unreadable`] if the JSON is not settings or names no rule set.
pub fn settings_from(value: &Value) -> Result<(RoomSettings, RuleSet), Unreadable> {
    let mut value = value.clone();
    // A director's reservations are stored beside the settings (`director_value`).
    if let Some(map) = value.as_object_mut() {
        map.remove(DIRECTOR_KEY);
    }
    let settings: RoomSettings =
        serde_json::from_value(value).map_err(|e| unreadable("room settings", e))?;
    // Stored settings: a room created before D-33 (a variant on another preset than
    // classic) still reads.
    let rules = settings
        .stored_rules()
        .map_err(|e| unreadable("room rule set", e))?;
    Ok((settings, rules))
}

/// A wire level from its stored name (`seats.bot`).
pub fn parse_level(name: &str) -> Option<BotLevel> {
    [BotLevel::Random, BotLevel::Greedy, BotLevel::Expectimax]
        .into_iter()
        .find(|l| bot_kind(*l).name() == name)
}

/// A seat's record.
pub fn seat_record(code: &str, seat: &Seat) -> SeatRecord {
    SeatRecord {
        room_code: code.to_owned(),
        colour: seat.colour.to_string(),
        display_name: seat.name.clone(),
        token_hash: seat.token_hash.clone(),
        is_creator: seat.creator,
        joined_at_ms: seat.joined_at_ms,
        bot: seat
            .bot
            .as_ref()
            .map(|b| bot_kind(b.level).name().to_owned()),
        account_id: seat.account,
    }
}

/// A stored seat, read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSeat {
    /// Its colour.
    pub colour: parchis_engine::Colour,
    /// Display name.
    pub name: String,
    /// Token hash: empty for a bot seat, or the hash of the person a bot took the seat
    /// over from (it reads the game's end, never resumes the seat).
    pub token_hash: String,
    /// Created the room.
    pub creator: bool,
    /// Unix ms.
    pub joined_at_ms: Ms,
    /// The bot playing it.
    pub bot: Option<BotLevel>,
    /// The logged-in player's account.
    pub account: Option<uuid::Uuid>,
}

/// Reads a seat record.
///
/// # Errors
/// [`Unreadable`] for an unknown colour or bot level.
pub fn seat_from(record: &SeatRecord) -> Result<StoredSeat, Unreadable> {
    let colour = record
        .colour
        .parse()
        .map_err(|e| unreadable("seat colour", e))?;
    let bot = match record.bot.as_deref() {
        None => None,
        Some(name) => Some(parse_level(name).ok_or_else(|| unreadable("seat bot level", name))?),
    };
    Ok(StoredSeat {
        colour,
        name: record.display_name.clone(),
        token_hash: record.token_hash.clone(),
        creator: record.is_creator,
        joined_at_ms: record.joined_at_ms,
        bot,
        account: record.account_id,
    })
}

/// An event's record: the event's JSON object with [`FORMAT_KEY`]` = `[`EVENT_FORMAT`].
pub fn event_record(seq: u64, at_ms: Ms, event: &RoomEvent) -> EventRecord {
    let mut value = serde_json::to_value(event).unwrap_or_default();
    if let Value::Object(map) = &mut value {
        map.insert(FORMAT_KEY.to_owned(), json!(EVENT_FORMAT));
    }
    EventRecord {
        seq: seq as i64,
        event: value,
        created_at_ms: at_ms,
    }
}

/// The records of one batch of `events`, seqs `first_seq, first_seq + 1, …`, all at
/// `at_ms`; with `positioned` (its frames carry the game after it on the last event: the
/// live room's `broadcast_events` with a game) the last record gets [`POSITION_KEY`].
pub fn event_records(
    first_seq: u64,
    at_ms: Ms,
    events: &[RoomEvent],
    positioned: bool,
) -> Vec<EventRecord> {
    let mut records: Vec<EventRecord> = events
        .iter()
        .enumerate()
        .map(|(n, e)| event_record(first_seq + n as u64, at_ms, e))
        .collect();
    if positioned {
        if let Some(Value::Object(map)) = records.last_mut().map(|r| &mut r.event) {
            map.insert(POSITION_KEY.to_owned(), Value::Bool(true));
        }
    }
    records
}

/// Reads an event record of any known format.
///
/// # Errors
/// [`Unreadable`] for a negative seq, an unknown format or JSON that is no room event.
pub fn event_from(record: &EventRecord) -> Result<LoggedEvent, Unreadable> {
    let what = || format!("event seq {}", record.seq);
    let seq = u64::try_from(record.seq).map_err(|e| unreadable(what(), e))?;
    let mut payload = record.event.clone();
    if let Value::Object(map) = &mut payload {
        match map.remove(FORMAT_KEY) {
            // Format 0 (before versions) and format 1 have the same shape.
            None => {}
            Some(v) if v.as_u64() == Some(EVENT_FORMAT) => {}
            Some(v) => return Err(unreadable(what(), format!("unknown event format {v}"))),
        }
    }
    let positioned = match &mut payload {
        Value::Object(map) => match map.remove(POSITION_KEY) {
            None => false,
            Some(Value::Bool(b)) => b,
            Some(v) => return Err(unreadable(what(), format!("{POSITION_KEY} is {v}"))),
        },
        _ => false,
    };
    let event: RoomEvent = serde_json::from_value(payload).map_err(|e| unreadable(what(), e))?;
    Ok(LoggedEvent {
        seq,
        at_ms: record.created_at_ms,
        event,
        positioned,
    })
}

/// Reads a whole stored log.
///
/// # Errors
/// The first record that does not read.
pub fn events_from(records: &[EventRecord]) -> Result<Vec<LoggedEvent>, Unreadable> {
    records.iter().map(event_from).collect()
}

/// A game's stored log read back, in either format: its packed log when it has one
/// (decoded by the engine's replay, [`crate::throws::decode`]), else its JSON rows. With
/// the events, the encoder that packs what follows them (`None` for a game stored as
/// rows: it goes on being stored as rows).
///
/// # Errors
/// [`Unreadable`]: a packed log that does not decode, or a row that does not read.
pub fn stored_log(
    events: &[EventRecord],
    log: Option<&PackedLog>,
) -> Result<(Vec<LoggedEvent>, Option<crate::throws::Encoder>), Unreadable> {
    match log {
        Some(log) => {
            let decoded =
                crate::throws::decode(&log.bytes).map_err(|e| unreadable("packed game log", e))?;
            Ok((decoded.events, Some(decoded.encoder)))
        }
        None => Ok((events_from(events)?, None)),
    }
}

/// The JSON rows of `events` as [`event_records`] writes them (the format before issue
/// 28, with the position mark): what a reader of rows, or a test, compares with.
pub fn records_of(events: &[LoggedEvent]) -> Vec<EventRecord> {
    events
        .iter()
        .map(|e| {
            let mut record = event_record(e.seq, e.at_ms, &e.event);
            if e.positioned {
                if let Value::Object(map) = &mut record.event {
                    map.insert(POSITION_KEY.to_owned(), Value::Bool(true));
                }
            }
            record
        })
        .collect()
}

/// A stored game's events, in either format ([`stored_log`] without the encoder).
///
/// # Errors
/// As [`stored_log`].
pub fn game_events(game: &parchis_records::StoredGame) -> Result<Vec<LoggedEvent>, Unreadable> {
    stored_log(&game.events, game.log.as_ref()).map(|(events, _)| events)
}

/// Packs `events` (seqs `first_seq, …`, all at `at_ms`; the last one `positioned`) as
/// the next piece of a game's log with `encoder` (advanced past them).
pub fn pack(
    encoder: &mut crate::throws::Encoder,
    first_seq: u64,
    at_ms: Ms,
    events: &[RoomEvent],
    positioned: bool,
) -> Option<LogPiece> {
    if events.is_empty() {
        return None;
    }
    let n = events.len();
    let logged: Vec<LoggedEvent> = events
        .iter()
        .enumerate()
        .map(|(k, e)| LoggedEvent {
            seq: first_seq + k as u64,
            at_ms,
            event: e.clone(),
            positioned: positioned && k + 1 == n,
        })
        .collect();
    let mut bytes = Vec::new();
    encoder.push(&logged, &mut bytes);
    Some(LogPiece {
        first_seq: first_seq as i64,
        last_seq: (first_seq + n as u64 - 1) as i64,
        bytes,
    })
}

/// Hex SHA-256 of the stored rules JSON (the games table's `rules_hash`).
fn rules_hash(rules_json: &Value) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(rules_json.to_string().as_bytes()))
}

/// A game's record at its start.
pub fn game_record(
    id: Uuid,
    code: &str,
    rules: &RuleSet,
    at: Ms,
    deadline: Option<Ms>,
    dice: Option<Value>,
) -> GameRecord {
    let rules_json = serde_json::to_value(rules).unwrap_or_default();
    GameRecord {
        id,
        room_code: code.to_owned(),
        preset: rules.name(),
        rules_hash: rules_hash(&rules_json),
        rules: rules_json,
        created_at_ms: at,
        finished_at_ms: None,
        result: None,
        reason: None,
        deadline_ms: deadline,
        dice,
    }
}

/// The room's status once its game started.
pub fn status_playing(at: Ms) -> RoomStatusUpdate {
    RoomStatusUpdate {
        status: StoredStatus::Playing,
        started_at_ms: Some(at),
        finished_at_ms: None,
        updated_at_ms: at,
    }
}

/// The stored `reason` of an outcome.
pub fn reason_text(outcome: &Outcome) -> &'static str {
    match outcome.reason {
        WinReason::Goal => "completed",
        WinReason::Forfeit => "abandoned",
    }
}

/// The end of game `game_id` in room `code` with its final events after `after_seq`:
/// `events` as JSON rows for a game stored as rows, or `log`, the piece of a packed game
/// (one of the two); `rated`: the rated result of a rated room's game ([`crate::rated::rated_game`]), whose
/// ratings the store updates in the same transaction.
#[allow(clippy::too_many_arguments)]
pub fn game_end(
    game_id: Uuid,
    code: &str,
    after_seq: u64,
    events: Vec<EventRecord>,
    log: Option<LogPiece>,
    outcome: &Outcome,
    at: Ms,
    rated: Option<RatedGame>,
) -> GameEnd {
    GameEnd {
        game_id,
        room_code: code.to_owned(),
        after_seq: after_seq as i64,
        events,
        log,
        result: serde_json::to_value(outcome).unwrap_or_default(),
        reason: reason_text(outcome).to_owned(),
        finished_at_ms: at,
        room: status_finished(at),
        rated,
    }
}

/// The room's status once it is closed for good at `at`.
pub fn status_finished(at: Ms) -> RoomStatusUpdate {
    RoomStatusUpdate {
        status: StoredStatus::Finished,
        started_at_ms: None,
        finished_at_ms: Some(at),
        updated_at_ms: at,
    }
}

/// The end of a running game closed by an administrator: no winner, reason
/// `closed_by_admin`, room finished. Never rated, even in a rated room: nobody won or
/// lost it (docs/ACCOUNTS.md).
/// Its final events (the server seed revealed) after `after_seq` are `events` as JSON
/// rows for a game stored as rows, or `log`, the piece of a packed game (one of the two).
pub fn game_closed(
    game_id: Uuid,
    code: &str,
    after_seq: u64,
    events: Vec<EventRecord>,
    log: Option<LogPiece>,
    at: Ms,
) -> GameEnd {
    GameEnd {
        game_id,
        room_code: code.to_owned(),
        after_seq: after_seq as i64,
        events,
        log,
        result: json!({ "reason": "closed_by_admin" }),
        reason: "closed_by_admin".to_owned(),
        finished_at_ms: at,
        room: status_finished(at),
        rated: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parchis_engine::Colour;

    fn turn(deadline_ms: Ms) -> RoomEvent {
        RoomEvent::Turn {
            colour: Colour::Red,
            deadline_ms,
        }
    }

    #[test]
    fn a_positioned_batch_marks_its_last_record_only_and_the_mark_reads_back() {
        let events = [turn(1), turn(2), turn(3)];
        let records = event_records(7, 100, &events, true);
        let marks: Vec<Option<&Value>> =
            records.iter().map(|r| r.event.get(POSITION_KEY)).collect();
        assert_eq!(marks, [None, None, Some(&Value::Bool(true))]);
        let seqs: Vec<i64> = records.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, [7, 8, 9]);
        let read = events_from(&records).expect("reads");
        let positioned: Vec<bool> = read.iter().map(|e| e.positioned).collect();
        assert_eq!(positioned, [false, false, true]);
        assert_eq!(read[2].event, turn(3));
        assert_eq!(read[2].at_ms, 100);
        // Unpositioned: no mark at all.
        let plain = event_records(1, 100, &events, false);
        assert!(plain.iter().all(|r| r.event.get(POSITION_KEY).is_none()));
        assert!(event_records(1, 100, &[], true).is_empty());
    }

    #[test]
    fn a_reader_that_does_not_know_the_mark_still_reads_the_event() {
        // As a node of the previous version does (serde ignores the unknown key).
        let records = event_records(1, 5, &[turn(9)], true);
        let mut value = records[0].event.clone();
        if let Value::Object(map) = &mut value {
            map.remove(FORMAT_KEY);
        }
        let event: RoomEvent = serde_json::from_value(value).expect("still a room event");
        assert_eq!(event, turn(9));
    }

    #[test]
    fn an_old_record_has_no_position_and_a_bad_mark_is_unreadable() {
        let mut record = event_record(3, 5, &turn(9));
        if let Value::Object(map) = &mut record.event {
            map.remove(FORMAT_KEY);
        }
        assert!(!event_from(&record).expect("format 0 reads").positioned);
        if let Value::Object(map) = &mut record.event {
            map.insert(POSITION_KEY.to_owned(), json!("yes"));
        }
        let err = event_from(&record).expect_err("a mark that is no bool");
        assert_eq!(err.what, "event seq 3");
    }
}
