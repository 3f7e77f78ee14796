//! Games stored before issue 28 (one JSON row per event in `game_events`, no packed log)
//! stay readable (docs/STORAGE.md, "Old games"): a game played now is stored as its packed
//! log; the same game written as old-format rows straight into the store (a new id and
//! room) reads back through the games API (detail, replay, export) exactly as the packed
//! one does, on SQLite and on PostgreSQL; and a running game stored as rows is restored
//! after a restart from its rows and goes on being stored as rows.

mod common;

use std::sync::Arc;

use common::{play_to_end, request_raw};
use parchis_room_core::persist;
use parchis_store::{GameRecord, Store};
use serde_json::{json, Value};
use sqlx::Connection;
use uuid::Uuid;

/// The game id of a room's current game (from the live room view).
async fn game_of(server: &common::Server, code: &str) -> Uuid {
    server.room(code).await["game"]["game_id"]
        .as_str()
        .expect("a game")
        .parse()
        .expect("a uuid")
}

/// Copies game `id` of room `code` into a new room as old-format rows (the JSON rows
/// `game_events` held before issue 28, `persist::records_of` of its unpacked log), with
/// the game's row and seats; the copy's room code and game id.
async fn copy_as_rows(
    store: &Arc<dyn Store>,
    code: &str,
    id: Uuid,
    suffix: &str,
) -> (String, Uuid) {
    let stored = store.get_game_log(id).await.unwrap().expect("game");
    assert!(stored.events.is_empty(), "a new game has no JSON rows");
    assert!(
        stored.log.is_some(),
        "a new game is stored as its packed log"
    );
    let events = persist::game_events(&stored).expect("the packed log unpacks");
    let snap = store.get_room(code).await.unwrap().expect("room");
    let old_code = format!("{code}{suffix}");
    let old_id = Uuid::new_v4();
    let mut room = snap.room.clone();
    room.code = old_code.clone();
    store.create_room(&room).await.unwrap();
    for mut seat in snap.seats {
        seat.room_code = old_code.clone();
        store.upsert_seat(&seat).await.unwrap();
    }
    let game = GameRecord {
        id: old_id,
        room_code: old_code.clone(),
        ..stored.game.clone()
    };
    store.create_game(&game).await.unwrap();
    let mut rows = persist::records_of(&events);
    for r in &mut rows {
        if r.event["type"] == "game_started" {
            r.event["game_id"] = json!(old_id.to_string());
        }
    }
    let n = rows.len();
    store.append_events(old_id, rows).await.unwrap();
    let back = store.get_game_log(old_id).await.unwrap().expect("copy");
    assert_eq!(back.log, None, "the copy has no packed log");
    assert_eq!(back.events.len(), n, "the copy is its rows");
    (old_code, old_id)
}

/// `GET path`'s body as JSON (or as a string for a text body), with `from` replaced by
/// `to` wherever it appears.
async fn body(server: &common::Server, path: &str, ids: [(&str, &str); 2]) -> Value {
    let (status, text) = request_raw(server.addr, "GET", path, &[], "").await;
    assert_eq!(status, 200, "{path}: {text}");
    let mut text = text;
    for (from, to) in ids {
        text = text.replace(from, to);
    }
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

/// The store at `url` (`None`: SQLite in `dir`), opened again (a server closes its
/// store when it stops).
async fn open(url: Option<&str>, dir: &std::path::Path) -> Arc<dyn Store> {
    parchis_store::open_store(url, dir).await.expect("store")
}

async fn old_rows_read_as_the_packed_log(url: Option<&str>, dir: &std::path::Path) {
    let store = open(url, dir).await;
    let server = common::start_on(common::test_config(), store.clone()).await;
    let (code, players) =
        common::seated_game(&server, json!({"seats": 2}), &["yellow", "red"]).await;
    let id = game_of(&server, &code).await;
    play_to_end(players).await;
    let (old_code, old_id) = copy_as_rows(&store, &code, id, "OLD").await;
    let (id_s, old_s) = (id.to_string(), old_id.to_string());
    for path in ["", "/replay", "/export"] {
        let packed = body(
            &server,
            &format!("/api/games/{id}{path}"),
            [(&id_s, "ID"), (&code, "ROOM")],
        )
        .await;
        let rows = body(
            &server,
            &format!("/api/games/{old_id}{path}"),
            [(&old_s, "ID"), (&old_code, "ROOM")],
        )
        .await;
        assert_eq!(
            rows, packed,
            "/api/games/…{path}: old rows read as the packed log"
        );
    }
    let detail = body(
        &server,
        &format!("/api/games/{old_id}"),
        [("", ""), ("", "")],
    )
    .await;
    assert!(
        detail["events"].as_array().is_some_and(|e| e.len() > 20),
        "the old game's events are shown: {detail}"
    );
    // The list shows both.
    let list = body(&server, "/api/games", [("", ""), ("", "")]).await;
    let listed: Vec<&str> = list["games"]
        .as_array()
        .expect("games")
        .iter()
        .filter_map(|g| g["id"].as_str())
        .collect();
    assert!(
        listed.contains(&old_s.as_str()) && listed.contains(&id_s.as_str()),
        "{list}"
    );
    server.shutdown.cancel();
    let _ = server.task.await;
}

/// A running game stored as rows (written before issue 28) is restored from its rows and
/// goes on as rows: its next action is stored as rows after them.
async fn a_running_game_of_rows_is_restored_and_goes_on_as_rows(
    url: Option<&str>,
    dir: &std::path::Path,
) {
    let store = open(url, dir).await;
    let server = common::start_on(common::test_config(), store.clone()).await;
    let (code, mut players) =
        common::seated_game(&server, json!({"seats": 2}), &["yellow", "red"]).await;
    let id = game_of(&server, &code).await;
    let seats: Vec<(String, String)> = players
        .iter()
        .map(|c| {
            (
                c.colour.clone().expect("seated"),
                c.token.clone().expect("a token"),
            )
        })
        .collect();
    // The running game's rows in a new room (its seats keep the players' tokens).
    let (old_code, old_id) = copy_as_rows(&store, &code, id, "RUN").await;
    let rows_before = store
        .get_game_log(old_id)
        .await
        .unwrap()
        .unwrap()
        .events
        .len();
    server.shutdown.cancel();
    let _ = server.task.await;
    drop(players.drain(..));
    let store = open(url, dir).await;
    let (server, restored) = common::start_recovered(common::test_config(), store.clone()).await;
    assert!(restored >= 2, "both rooms restored, got {restored}");
    let view = server.room(&old_code).await;
    assert_eq!(view["game"]["game_id"], json!(old_id.to_string()), "{view}");
    // Both players come back; the one to act acts.
    let mut clients = Vec::new();
    for (_, token) in &seats {
        let mut c = server.client().await;
        c.resume(&old_code, token, 0).await;
        clients.push(c);
    }
    let turn = view["game"]["position"]["turn"]
        .as_str()
        .expect("turn")
        .to_owned();
    let actor = seats
        .iter()
        .position(|(colour, _)| *colour == turn)
        .expect("the player to act");
    clients[actor].ok(json!({"type": "roll"})).await;
    let after = store.get_game_log(old_id).await.unwrap().unwrap();
    assert_eq!(
        after.log, None,
        "an old game is not switched to a packed log"
    );
    assert!(
        after.events.len() > rows_before,
        "the roll is stored as rows after the old rows ({} → {})",
        rows_before,
        after.events.len()
    );
    let events = persist::game_events(&after).expect("rows read");
    parchis_room_core::replay(&events).expect("the old game with its new rows replays");
    server.shutdown.cancel();
    let _ = server.task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_format_games_stay_readable_on_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    old_rows_read_as_the_packed_log(None, dir.path()).await;
    a_running_game_of_rows_is_restored_and_goes_on_as_rows(None, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_format_games_stay_readable_on_postgres() {
    let Some(url) = common::database_url("old_format_games_stay_readable_on_postgres") else {
        return;
    };
    // A schema of its own: exact reads, nothing of other tests.
    let schema = format!("t_{}", Uuid::new_v4().simple());
    let mut admin = sqlx::PgConnection::connect(&url).await.expect("connect");
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&mut admin)
        .await
        .expect("schema");
    let sep = if url.contains('?') { '&' } else { '?' };
    let url = format!("{url}{sep}options[search_path]={schema}");
    let dir = std::path::Path::new("unused");
    old_rows_read_as_the_packed_log(Some(&url), dir).await;
    a_running_game_of_rows_is_restored_and_goes_on_as_rows(Some(&url), dir).await;
    sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
        .execute(&mut admin)
        .await
        .expect("drop schema");
}
