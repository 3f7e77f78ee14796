//! A `kill -9` right after `start` must not lose the room. Measured before the start was
//! one store transaction: killed 1–6 ms after `start`, a store could hold a playing room
//! with a game row and no events, which no restart could bring back (`unknown_room` for
//! the players' tokens). Now the game row, the room's status, the bot seats and the first
//! events are written together: after the kill every room is either still a lobby or a
//! playing game with its `game_started` stored, and every player's token resumes.

mod binary;
mod common;

use binary::Proc;
use common::{client, http_at, Client};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// Starts the binary (loopback limits raised for one test client) and waits until
/// `/healthz` answers.
async fn spawn(data_dir: &Path, database_url: Option<&str>) -> Proc {
    binary::spawn(
        data_dir,
        database_url,
        &[],
        &[
            ("PARCHIS_ROOM_CREATIONS_PER_MINUTE", "1000"),
            ("PARCHIS_MAX_LOBBIES_PER_ADDRESS", "1000"),
            ("PARCHIS_MAX_BOT_ROOMS_PER_ADDRESS", "1000"),
            ("PARCHIS_MAX_CONNECTIONS_PER_ADDRESS", "1000"),
            ("PARCHIS_LOOKUPS_PER_MINUTE", "100000"),
        ],
    )
    .await
}

/// One room with Ana (the creator) and Bruno seated.
struct Room {
    code: String,
    tokens: [String; 2],
    ana: Client,
}

async fn seated_room(addr: SocketAddr, bots: bool) -> Room {
    let mut settings = json!({"seats": if bots { 4 } else { 2 }});
    if bots {
        settings["bots"] = json!("random");
    }
    let (status, body) = http_at(addr, "POST", "/api/rooms", Some(&settings.to_string())).await;
    assert_eq!(status, 201, "{body}");
    let code = body["code"].as_str().expect("code").to_owned();
    let mut ana = client(addr).await;
    let mut bruno = client(addr).await;
    ana.join(&code, "Ana", None).await;
    bruno.join(&code, "Bruno", None).await;
    ana.until("bruno's join", |v| v["seq"].as_u64() == Some(2))
        .await;
    let tokens = [
        ana.token.clone().expect("token"),
        bruno.token.clone().expect("token"),
    ];
    Room { code, tokens, ana }
}

async fn kill_during_start(database_url: Option<&str>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = spawn(dir.path(), database_url).await;
    let mut rooms = Vec::new();
    for i in 0..16 {
        // Every other room fills its free seats with bots at the start (more to write).
        rooms.push(seated_room(server.addr, i % 2 == 1).await);
    }
    // Every creator starts, a fraction of a millisecond apart, and the server is killed
    // while those starts are being written.
    for r in &mut rooms {
        r.ana.cmd(json!({"type": "start"})).await;
        tokio::time::sleep(Duration::from_micros(400)).await;
    }
    server.kill();
    drop(server);

    let server = spawn(dir.path(), database_url).await;
    let (mut lobbies, mut games) = (0, 0);
    for r in &rooms {
        for token in &r.tokens {
            let mut c = client(server.addr).await;
            let req = c
                .cmd(json!({"type": "resume", "room": r.code, "token": token, "last_seq": 0}))
                .await;
            let w = c.reply(req).await;
            assert_eq!(
                w["type"], "welcome",
                "room {} lost after the kill: {w}",
                r.code
            );
        }
        let (status, view) =
            http_at(server.addr, "GET", &format!("/api/rooms/{}", r.code), None).await;
        assert_eq!(status, 200, "{view}");
        match view["status"].as_str() {
            Some("lobby") => {
                lobbies += 1;
                assert!(view["game"].is_null(), "a lobby has no game: {view}");
            }
            Some("playing") => {
                games += 1;
                let id = view["game"]["game_id"].as_str().expect("game id");
                let (status, game) =
                    http_at(server.addr, "GET", &format!("/api/games/{id}"), None).await;
                assert_eq!(status, 200, "{game}");
                let events = game["events"].as_array().cloned().unwrap_or_default();
                let started = events
                    .iter()
                    .any(|e: &Value| e["event"]["type"] == "game_started");
                assert!(
                    started,
                    "a playing room has its game_started stored: {game}"
                );
                let seats = view["seats"].as_array().map(Vec::len).unwrap_or(0);
                assert!(seats >= 2, "{view}");
            }
            other => panic!("room {} came back {other:?}: {view}", r.code),
        }
    }
    eprintln!("kill during start: {games} rooms came back playing, {lobbies} as lobbies");
    assert_eq!(games + lobbies, rooms.len());
}

#[tokio::test]
async fn sigkill_during_starts_loses_no_room_on_sqlite() {
    kill_during_start(None).await;
}

#[tokio::test]
async fn sigkill_during_starts_loses_no_room_on_postgres() {
    let Some(url) = common::database_url("sigkill_during_starts_loses_no_room_on_postgres") else {
        return;
    };
    kill_during_start(Some(&url)).await;
}
