//! Row shapes shared by the SQL backends and their conversion to records.
//!
//! Both backends select the same columns in the same order into plain tuples; only the type
//! of game ids differs (`UUID` on PostgreSQL, text on SQLite), hence the `Id` parameter.

use std::collections::HashMap;

use serde_json::Value;
use uuid::Uuid;

use crate::error::{Result, StoreError};
use parchis_records::{EventRecord, GameRecord, PackedLog, RoomRecord, RoomSnapshot, SeatRecord};

/// `code, settings, status, created_at_ms, started_at_ms, finished_at_ms, updated_at_ms`
pub(crate) type RoomRow = (String, String, String, i64, Option<i64>, Option<i64>, i64);
/// `room_code, colour, display_name, token_hash, is_creator, joined_at_ms, bot, account_id`
/// (the account id as text on both backends)
pub(crate) type SeatRow = (
    String,
    String,
    String,
    String,
    bool,
    i64,
    Option<String>,
    Option<String>,
);
/// `id, room_code, preset, rules, rules_hash, created_at_ms, finished_at_ms, result, reason,
/// deadline_ms, dice`
pub(crate) type GameRow<Id> = (
    Id,
    String,
    String,
    String,
    String,
    i64,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
);
/// `game_id, seq, event, created_at_ms`
pub(crate) type EventRow<Id> = (Id, i64, String, i64);

/// `game_id, seq, bytes`: a game's folded log (`games.log` at `games.log_seq`) or one of
/// its tail rows (`game_log_tail`: one per append on SQLite, one per running game on
/// PostgreSQL), read in `(game_id, seq)` order (the folded part first: its seq is below
/// every tail row's that has bytes; PostgreSQL's tail row just reset by a fold has no
/// bytes and the folded part's seq, so either order of the two reads the same).
pub(crate) type LogRow<Id> = (Id, i64, Vec<u8>);

/// The packed-log parts of the games `g` (joined with `join`) that pass `filter` (the
/// SQL of both backends; `filter` is used twice, so it names its parameters by number),
/// folded part first, in `(game_id, seq)` order: rows for [`packed_logs`].
pub(crate) fn log_sql(join: &str, filter: &str) -> String {
    format!(
        "SELECT g.id, g.log_seq, g.log FROM games g {join} \
         WHERE {filter} AND g.log IS NOT NULL \
         UNION ALL \
         SELECT t.game_id, t.last_seq, t.bytes FROM game_log_tail t \
         JOIN games g ON g.id = t.game_id {join} WHERE {filter} ORDER BY 1, 2"
    )
}

/// Joins each game's packed-log rows (in `(game_id, seq)` order) into its [`PackedLog`].
pub(crate) fn packed_logs<Id: GameId>(rows: Vec<LogRow<Id>>) -> Result<HashMap<Uuid, PackedLog>> {
    let mut logs: HashMap<Uuid, PackedLog> = HashMap::new();
    for (id, seq, bytes) in rows {
        let log = logs.entry(id.into_uuid()?).or_insert(PackedLog {
            bytes: Vec::new(),
            last_seq: seq,
        });
        log.bytes.extend_from_slice(&bytes);
        log.last_seq = seq;
    }
    Ok(logs)
}

/// Column lists matching the row tuples above (`r`, `s`, `g`, `e` are the table aliases).
pub(crate) const ROOM_COLUMNS: &str =
    "r.code, r.settings, r.status, r.created_at_ms, r.started_at_ms, r.finished_at_ms, r.updated_at_ms";
pub(crate) const SEAT_COLUMNS: &str =
    "s.room_code, s.colour, s.display_name, s.token_hash, s.is_creator, s.joined_at_ms, s.bot, \
     CAST(s.account_id AS TEXT)";
/// `GAME_COLUMNS`' deadline is read from its own table (`crate::deadlines`), `NULL` when
/// the game has no row there.
pub(crate) const GAME_COLUMNS: &str = "g.id, g.room_code, g.preset, g.rules, g.rules_hash, \
     g.created_at_ms, g.finished_at_ms, g.result, g.reason, \
     (SELECT d.deadline_ms FROM game_deadlines d WHERE d.game_id = g.id), g.dice";
pub(crate) const EVENT_COLUMNS: &str = "e.game_id, e.seq, e.event, e.created_at_ms";

/// SQL condition keeping only the most recent game of its room (alias `g`).
pub(crate) const LATEST_GAME: &str = "NOT EXISTS (SELECT 1 FROM games g2 \
     WHERE g2.room_code = g.room_code AND (g2.created_at_ms > g.created_at_ms \
     OR (g2.created_at_ms = g.created_at_ms AND g2.id > g.id)))";

/// A game id as a backend returns it.
pub(crate) trait GameId {
    fn into_uuid(self) -> Result<Uuid>;
}

impl GameId for Uuid {
    fn into_uuid(self) -> Result<Uuid> {
        Ok(self)
    }
}

impl GameId for String {
    fn into_uuid(self) -> Result<Uuid> {
        Uuid::parse_str(&self).map_err(|e| StoreError::Corrupt(format!("game id {self:?}: {e}")))
    }
}

fn json(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

pub(crate) fn room(row: RoomRow) -> Result<RoomRecord> {
    let (code, settings, status, created_at_ms, started_at_ms, finished_at_ms, updated_at_ms) = row;
    let settings = json(&settings, &format!("settings of room {code:?}"))?;
    let status = status
        .parse()
        .map_err(|e| StoreError::Corrupt(format!("status of room {code:?}: {e}")))?;
    Ok(RoomRecord {
        code,
        settings,
        status,
        created_at_ms,
        started_at_ms,
        finished_at_ms,
        updated_at_ms,
    })
}

pub(crate) fn seat(row: SeatRow) -> SeatRecord {
    let (room_code, colour, display_name, token_hash, is_creator, joined_at_ms, bot, account) = row;
    // An id that does not parse is dropped (the seat is shown as a guest) rather than
    // making the whole room unreadable: the column is only ever written from a `Uuid`.
    let account_id = account.and_then(|text| Uuid::parse_str(&text).ok());
    SeatRecord {
        room_code,
        colour,
        display_name,
        token_hash,
        is_creator,
        joined_at_ms,
        bot,
        account_id,
    }
}

pub(crate) fn game<Id: GameId>(row: GameRow<Id>) -> Result<GameRecord> {
    let (
        id,
        room_code,
        preset,
        rules,
        rules_hash,
        created_at_ms,
        finished_at_ms,
        result,
        reason,
        deadline_ms,
        dice,
    ) = row;
    let id = id.into_uuid()?;
    let rules = json(&rules, &format!("rules of game {id}"))?;
    let result = result
        .map(|r| json(&r, &format!("result of game {id}")))
        .transpose()?;
    let dice = dice
        .map(|d| json(&d, &format!("dice of game {id}")))
        .transpose()?;
    Ok(GameRecord {
        id,
        room_code,
        preset,
        rules,
        rules_hash,
        created_at_ms,
        finished_at_ms,
        result,
        reason,
        deadline_ms,
        dice,
    })
}

pub(crate) fn event<Id: GameId>(row: EventRow<Id>) -> Result<(Uuid, EventRecord)> {
    let (game_id, seq, event, created_at_ms) = row;
    let game_id = game_id.into_uuid()?;
    let event = json(&event, &format!("event {seq} of game {game_id}"))?;
    Ok((
        game_id,
        EventRecord {
            seq,
            event,
            created_at_ms,
        },
    ))
}

/// Builds snapshots from rooms (already in output order), their seats, their latest games
/// and those games' events (seats and events already in output order within each group).
pub(crate) fn assemble(
    rooms: Vec<RoomRecord>,
    seats: Vec<SeatRecord>,
    games: Vec<GameRecord>,
    events: Vec<(Uuid, EventRecord)>,
    mut logs: HashMap<Uuid, PackedLog>,
) -> Vec<RoomSnapshot> {
    let mut seats_by_room: HashMap<String, Vec<SeatRecord>> = HashMap::new();
    for s in seats {
        seats_by_room
            .entry(s.room_code.clone())
            .or_default()
            .push(s);
    }
    let mut events_by_game: HashMap<Uuid, Vec<EventRecord>> = HashMap::new();
    for (game_id, e) in events {
        events_by_game.entry(game_id).or_default().push(e);
    }
    let mut game_by_room: HashMap<String, GameRecord> = HashMap::new();
    for g in games {
        game_by_room.insert(g.room_code.clone(), g);
    }
    rooms
        .into_iter()
        .map(|room| {
            let seats = seats_by_room.remove(&room.code).unwrap_or_default();
            let game = game_by_room.remove(&room.code);
            let log = game.as_ref().and_then(|g| logs.remove(&g.id));
            // A game with a packed log is read from it alone (both formats are never
            // written for one game).
            let events = match (&game, &log) {
                (Some(g), None) => events_by_game.remove(&g.id).unwrap_or_default(),
                _ => Vec::new(),
            };
            RoomSnapshot {
                room,
                seats,
                game,
                events,
                log,
            }
        })
        .collect()
}
