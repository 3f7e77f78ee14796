//! `parchis verify` against real games: played through the real server by real WebSocket
//! clients (the server tests' harness), fetched from the games API and the export, then
//! checked by the `parchis` binary — and tampered with, one die, the seed or the order.

#[path = "../../server/tests/common/mod.rs"]
mod common;

use common::{start, Client, Server};
use parchis_server::ServerConfig;
use serde_json::{json, Value};
use std::process::{Command, Output};

fn config() -> ServerConfig {
    // Fair dice: the server seed comes from the OS, as in production.
    ServerConfig {
        dice_seed: None,
        ..common::test_config()
    }
}

fn verify(text: &str) -> (i32, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("game");
    std::fs::write(&path, text).expect("write");
    let o: Output = Command::new(env!("CARGO_BIN_EXE_parchis"))
        .arg("verify")
        .arg(&path)
        .output()
        .expect("run parchis");
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    (o.status.code().unwrap_or(-1), out)
}

/// The stored game of `code`: its games-API JSON and its export.
async fn stored_game(server: &Server, code: &str) -> (Value, String) {
    let (status, list) = server
        .http("GET", &format!("/api/games?room={code}"), None)
        .await;
    assert_eq!(status, 200, "{list}");
    let id = list["games"][0]["id"].as_str().expect("game id").to_owned();
    let (status, game) = server.http("GET", &format!("/api/games/{id}"), None).await;
    assert_eq!(status, 200, "{game}");
    let (status, export) = server
        .http("GET", &format!("/api/games/{id}/export"), None)
        .await;
    assert_eq!(status, 200, "{export}");
    (game, export.as_str().expect("export text").to_owned())
}

/// Positions in `events` of the `dice_rolled` events.
fn rolls(game: &Value) -> Vec<usize> {
    game["events"]
        .as_array()
        .expect("events")
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e["event"]["type"] == "game" && e["event"]["event"]["type"] == "dice_rolled"
        })
        .map(|(i, _)| i)
        .collect()
}

/// `verify` fails (exit 1) on `text`, naming `want`.
fn assert_fails(text: &str, want: &str) {
    let (c, out) = verify(text);
    assert_eq!(c, 1, "{out}");
    assert!(out.contains(want), "{out}");
}

/// `game` with one die of its `k`-th throw after the opening changed.
fn with_die_changed(game: &Value, k: usize) -> Value {
    let at = rolls(game)[k];
    let mut tampered = game.clone();
    let die = &mut tampered["events"][at]["event"]["event"]["dice"][0];
    *die = json!(die.as_u64().unwrap() % 6 + 1);
    tampered
}

/// `game` claiming another server seed, in its dice and its `dice_revealed` event.
fn with_server_seed(game: &Value, seed: &str) -> Value {
    let mut tampered = game.clone();
    tampered["dice"]["server_seed"] = json!(seed);
    for e in tampered["events"].as_array_mut().unwrap() {
        if e["event"]["type"] == "dice_revealed" {
            e["event"]["server_seed"] = json!(seed);
        }
    }
    tampered
}

/// `game` with its `a`-th and `b`-th throws swapped in the log.
fn with_throws_swapped(game: &Value, a: usize, b: usize) -> Value {
    let (a, b) = (rolls(game)[a], rolls(game)[b]);
    let mut tampered = game.clone();
    let events = tampered["events"].as_array_mut().unwrap();
    events.swap(a, b);
    tampered
}

/// `export` with the dice of its `k`-th `roll` line (from 0) changed.
fn export_with_roll_changed(export: &str, k: usize) -> String {
    let mut seen = 0;
    let tampered: Vec<String> = export
        .lines()
        .map(|l| {
            let mut words: Vec<String> = l.split(' ').map(str::to_owned).collect();
            if words.get(1).map(String::as_str) == Some("roll") {
                if seen == k {
                    let dice: Vec<u8> = words[2]
                        .trim_end_matches(';')
                        .split(',')
                        .map(|d| d.parse::<u8>().unwrap() % 6 + 1)
                        .collect();
                    let tail = if words[2].ends_with(';') { ";" } else { "" };
                    let dice: Vec<String> = dice.iter().map(u8::to_string).collect();
                    words[2] = dice.join(",") + tail;
                }
                seen += 1;
            }
            words.join(" ")
        })
        .collect();
    tampered.join("\n")
}

/// Reads until the game's last event, `dice_revealed`.
async fn until_revealed(c: &mut Client) -> Value {
    c.until("dice_revealed", |v| {
        v["type"] == "event" && v["event"]["type"] == "dice_revealed"
    })
    .await
}

/// Ana (client seed chosen in `join`) against three greedy bots, played to the goal.
/// Returns the room code, the commitment shown in the lobby and the `dice_revealed`
/// event Ana received at the end.
async fn ana_against_three_bots(server: &Server) -> (String, Value, Value) {
    let code = server
        .create_room(json!({"bots": "greedy", "bot_think_ms": 1, "turn_clock_secs": 600}))
        .await;
    let mut ana = server.client().await;
    let req = ana
        .cmd(
            json!({"type": "join", "room": code, "name": "Ana", "colour": "yellow",
                    "client_seed": "ana-chose-this-seed"}),
        )
        .await;
    let welcome = ana.reply(req).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    let lobby_commitment = welcome["snapshot"]["dice"]["commitment"].clone();
    assert_eq!(
        lobby_commitment.as_str().map(str::len),
        Some(64),
        "{welcome}"
    );
    ana.ok(json!({"type": "start"})).await;
    let (won, clients) = common::play_to_end(vec![ana]).await;
    assert_eq!(won["reason"], "goal", "{won}");
    let ana = clients.into_iter().next().expect("client");
    let revealed = ana
        .events
        .iter()
        .find(|v| v["event"]["type"] == "dice_revealed")
        .cloned()
        .expect("the server seed revealed at the end");
    (code, lobby_commitment, revealed)
}

/// One person (client seed chosen in `join`) against three greedy bots, played to the
/// goal; the game's JSON and export verify, and every kind of tampering is caught at the
/// right throw.
#[tokio::test]
async fn a_real_game_verifies_and_tampering_is_caught() {
    let server = start(config()).await;
    let (code, lobby_commitment, revealed) = ana_against_three_bots(&server).await;

    let (game, export) = stored_game(&server, &code).await;
    let dice = &game["dice"];
    assert_eq!(dice["mode"], "fair");
    assert_eq!(
        dice["commitment"], lobby_commitment,
        "committed in the lobby already"
    );
    assert_eq!(dice["server_seed"], revealed["event"]["server_seed"]);
    assert_eq!(
        dice["client_seeds"],
        json!([{"colour": "yellow", "seed": "ana-chose-this-seed"},
               {"colour": "blue", "seed": "blue"},
               {"colour": "red", "seed": "red"},
               {"colour": "green", "seed": "green"}])
    );
    let n = rolls(&game).len();
    assert!(n > 20, "a whole game has many throws: {n}");
    let started = game["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event"]["type"] == "game_started")
        .expect("game_started");
    assert_eq!(started["event"]["dice"]["commitment"], lobby_commitment);
    assert!(started["event"]["dice"].get("server_seed").is_none());

    let (code_json, out) = verify(&game.to_string());
    assert_eq!(code_json, 0, "{out}");
    assert!(out.contains(&format!("dice verified: {n} throws")), "{out}");
    let (code_text, out) = verify(&export);
    assert_eq!(code_text, 0, "{out}\n{export}");
    assert!(out.contains(&format!("dice verified: {n} throws")), "{out}");

    // One die changed: throw 5 fails.
    assert_fails(&with_die_changed(&game, 5).to_string(), "throw 5 (");
    // Another server seed: the commitment does not match.
    assert_fails(
        &with_server_seed(&game, &"11".repeat(32)).to_string(),
        "does not match the commitment",
    );
    // Throws 3 and 4 swapped in the log: the log's throw at position 3 is numbered 4.
    assert_fails(
        &with_throws_swapped(&game, 3, 4).to_string(),
        "throw 3 is missing",
    );
    // The export with the dice of its 8th roll line changed: throw 7 fails.
    assert_fails(&export_with_roll_changed(&export, 7), "throw 7 (");
}

/// Classic rules: the opening roll's throws come first (0, 1, …); red leaves, so the
/// game ends by forfeit, and it verifies, opening throws included.
#[tokio::test]
async fn a_forfeited_game_with_an_opening_roll_verifies() {
    let server = start(config()).await;
    let code = server
        .create_room(json!({"preset": "classic", "seats": 2, "turn_clock_secs": 600}))
        .await;
    let mut clients = common::yellow_and_red(&server, &code).await;
    // A seed set by command after the welcome, having seen the commitment.
    clients[1]
        .ok(json!({"type": "client_seed", "seed": "0123456789abcdef0123456789abcdef"}))
        .await;
    clients[0].ok(json!({"type": "start"})).await;
    // A few throws by whoever is to act.
    for _ in 0..6 {
        common::act_once(&server, &code, &mut clients).await;
    }
    let mut red = clients.pop().unwrap();
    red.ok(json!({"type": "leave"})).await;
    let mut yellow = clients.pop().unwrap();
    until_revealed(&mut yellow).await;
    let (game, export) = stored_game(&server, &code).await;
    assert_eq!(game["reason"], "abandoned", "{game}");
    assert_eq!(
        game["dice"]["client_seeds"][1]["seed"],
        "0123456789abcdef0123456789abcdef"
    );
    let opening: Vec<u64> = game["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"]["type"] == "opening_roll")
        .flat_map(|e| e["event"]["rolls"].as_array().unwrap().clone())
        .map(|r| r["throw"].as_u64().unwrap())
        .collect();
    assert!(opening.len() >= 2);
    assert_eq!(opening, (0..opening.len() as u64).collect::<Vec<_>>());
    let first_roll = &game["events"][rolls(&game)[0]]["event"]["throw"];
    assert_eq!(first_roll.as_u64(), Some(opening.len() as u64));
    assert!(export.contains("[OpeningThrows \"0 Y "), "{export}");
    for text in [game.to_string(), export] {
        let (c, out) = verify(&text);
        assert_eq!(c, 0, "{out}");
        assert!(out.contains("dice verified"), "{out}");
    }
    // An opening throw tampered with fails as throw 0 or 1.
    let mut tampered = game.clone();
    for e in tampered["events"].as_array_mut().unwrap() {
        if e["event"]["type"] == "opening_roll" {
            let d = &mut e["event"]["rolls"][1]["dice"][0];
            *d = json!(d.as_u64().unwrap() % 6 + 1);
            break;
        }
    }
    assert_fails(&tampered.to_string(), "throw 1 (");
}

/// A game made with the test configuration (fixed dice) never claims to be verified.
#[tokio::test]
async fn a_test_dice_game_is_not_verifiable() {
    let server = start(common::test_config()).await;
    let code = server.create_room(json!({"seats": 2})).await;
    let mut clients = common::yellow_and_red(&server, &code).await;
    clients[0].ok(json!({"type": "start"})).await;
    clients[0].ok(json!({"type": "roll"})).await;
    clients[1].ok(json!({"type": "leave"})).await;
    until_revealed(&mut clients[0]).await;
    let (game, export) = stored_game(&server, &code).await;
    assert_eq!(game["dice"]["mode"], "test");
    assert!(export.contains("[DiceMode \"test\"]"), "{export}");
    for text in [game.to_string(), export] {
        let (c, out) = verify(&text);
        assert_eq!(c, 2, "{out}");
        assert!(out.contains("not verifiable"), "{out}");
    }
}
