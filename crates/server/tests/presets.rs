//! End-to-end tests of the rule presets other than `online`: real tokio-tungstenite
//! clients against the real server on port 0, seeded dice.

mod common;

use common::{play_to_end, play_to_end_by, room_events, seated_game, start, test_config, Client};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};

fn settings(preset: &str, seats: u8) -> Value {
    json!({
        "preset": preset,
        "seats": seats,
        "turn_clock_secs": 600,
        "disconnect_grace_secs": 600,
    })
}

/// The engine events of kind `kind` a client saw.
fn game_events(c: &Client, kind: &str) -> Vec<Value> {
    c.events
        .iter()
        .filter(|e| Client::is_game_event(e, kind))
        .map(|e| e["event"]["event"].clone())
        .collect()
}

/// Checks the opening rolls: every round but the last is a tie for the best value among
/// the colours that rolled, the last names `first` as the unique best. Returns `first`.
fn check_opening(c: &Client, lowest: bool, max_value: u64) -> String {
    let rounds = room_events(c, "opening_roll");
    assert!(!rounds.is_empty(), "no opening roll");
    let mut first = String::new();
    for (i, round) in rounds.iter().enumerate() {
        let rolls = round["rolls"].as_array().cloned().unwrap_or_default();
        assert!(rolls.len() >= 2, "{round}");
        let values: Vec<u64> = rolls.iter().filter_map(|r| r["value"].as_u64()).collect();
        assert_eq!(values.len(), rolls.len());
        assert!(
            values.iter().all(|v| (1..=max_value).contains(v)),
            "{round}"
        );
        let best = if lowest {
            values.iter().min()
        } else {
            values.iter().max()
        }
        .copied()
        .unwrap_or_default();
        let best_colours: Vec<&Value> = rolls
            .iter()
            .filter(|r| r["value"].as_u64() == Some(best))
            .map(|r| &r["colour"])
            .collect();
        if i + 1 < rounds.len() {
            assert!(round["first"].is_null(), "{round}");
            assert!(best_colours.len() >= 2, "a round without a tie repeated");
            // The next round is rolled by exactly the tied colours.
            let next: Vec<&Value> = rounds[i + 1]["rolls"]
                .as_array()
                .map(|a| a.iter().map(|r| &r["colour"]).collect())
                .unwrap_or_default();
            assert_eq!(next, best_colours);
        } else {
            assert_eq!(best_colours.len(), 1, "{round}");
            assert_eq!(&round["first"], best_colours[0]);
            first = round["first"].as_str().unwrap_or_default().to_owned();
        }
    }
    let started = room_events(c, "game_started");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["first"], first.as_str());
    // The first throw of the game (when the client has seen it) is `first`'s.
    if let Some(r) = game_events(c, "dice_rolled").first() {
        assert_eq!(r["colour"], first.as_str());
    }
    first
}

/// Every throw had `n` dice.
fn assert_dice_per_throw(c: &Client, n: usize) {
    let rolled = game_events(c, "dice_rolled");
    assert!(rolled.len() > 10);
    for r in rolled {
        let dice = r["dice"].as_array().cloned().unwrap_or_default();
        assert_eq!(dice.len(), n, "{r}");
        assert!(dice
            .iter()
            .all(|d| (1..=6).contains(&d.as_u64().unwrap_or(0))));
    }
}

#[tokio::test]
async fn classic_two_player_game_with_one_die_and_an_opening_roll() {
    let server = start(test_config()).await;
    let (code, clients) = seated_game(&server, settings("classic", 2), &["yellow", "red"]).await;
    let (won, clients) = play_to_end(clients).await;
    assert_eq!(won["reason"], "goal");
    let first = check_opening(&clients[1], false, 6);
    assert_eq!(check_opening(&clients[0], false, 6), first);
    assert_dice_per_throw(&clients[0], 1);
    // Every throw is one die: nothing is ever thrown as a pair.
    let room = server.room(&code).await;
    assert_eq!(room["status"], "finished");
    assert_eq!(room["settings"]["preset"], "classic");
    assert_eq!(room["rules"]["dice"], 1);
    assert_eq!(room["rules"]["first_player"], "highest_roll");
    assert_eq!(room["game"]["position"]["rules"]["preset"], "classic");
    // The whole rule set is stored with the game, and the opening roll is in its log.
    let game_id = room["game"]["game_id"].as_str().unwrap_or_default();
    let (record, events) = server.stored_game(game_id).await;
    assert_eq!(record.preset, "classic");
    assert_eq!(record.rules["dice"], 1);
    assert_eq!(record.rules["roll_again_on"], "six");
    assert_eq!(events[0].event["type"], "opening_roll");
    let started = events
        .iter()
        .find(|e| e.event["type"] == "game_started")
        .expect("game_started stored");
    assert_eq!(started.event["first"], first.as_str());
}

#[tokio::test]
async fn classic_variants_reach_the_game() {
    let server = start(test_config()).await;
    let (code, clients) = seated_game(
        &server,
        settings("classic+murcia-12+one-out", 2),
        &["blue", "green"],
    )
    .await;
    let room = server.room(&code).await;
    assert_eq!(room["settings"]["preset"], "classic+murcia-12+one-out");
    assert_eq!(room["rules"]["six_counts_when_nest_empty"], 12);
    assert_eq!(room["rules"]["start_with_one_out"], true);
    let started = room_events(&clients[0], "game_started");
    let pos = &started[0]["position"];
    assert_eq!(pos["rules"]["start_with_one_out"], true);
    assert_eq!(pos["rules"]["six_counts_when_nest_empty"], 12);
    let (won, _) = play_to_end(clients).await;
    assert_eq!(won["reason"], "goal");
}

static CAPTURE_CHOICES: AtomicUsize = AtomicUsize::new(0);

/// Plays a partner capture (`capture: true`) whenever one is legal, else the first action.
fn prefer_capture(legal: &Value) -> Value {
    let actions = legal.as_array().cloned().unwrap_or_default();
    match actions.iter().find(|a| a["capture"] == true) {
        Some(a) => {
            CAPTURE_CHOICES.fetch_add(1, Ordering::Relaxed);
            a.clone()
        }
        None => legal[0].clone(),
    }
}

/// A pairs lobby `room` with yellow, blue and red seated: still a lobby, the teams and
/// each seat's team shown.
fn check_lobby_teams(room: &Value) {
    assert_eq!(room["status"], "lobby");
    assert_eq!(room["teams"], json!([["yellow", "red"], ["blue", "green"]]));
    let teams: Vec<(Value, Value)> = room["seats"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| (s["colour"].clone(), s["team"].clone()))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        teams,
        vec![
            (json!("yellow"), json!(0)),
            (json!("blue"), json!(1)),
            (json!("red"), json!(0)),
        ]
    );
}

#[tokio::test]
async fn pairs_needs_four_shows_teams_and_is_played_to_the_end() {
    let server = start(test_config()).await;
    let code = server.create_room(settings("pairs", 4)).await;
    let mut clients = Vec::new();
    for (i, c) in ["yellow", "blue", "red"].iter().enumerate() {
        let mut cl = server.client().await;
        cl.join(&code, &format!("p{i}"), Some(c)).await;
        clients.push(cl);
    }
    for c in clients.iter_mut() {
        while c.seq < 3 {
            c.next().await;
        }
    }
    // Three players: the start is refused, nothing changes.
    let err = clients[0]
        .refused(json!({"type": "start"}), "not_enough_players")
        .await;
    assert!(
        err["message"]
            .as_str()
            .unwrap_or_default()
            .contains("pairs needs at least 4 players to start; 3 seated"),
        "{err}"
    );
    check_lobby_teams(&server.room(&code).await);
    // The fourth player sees the teams in the welcome snapshot.
    let mut green = server.client().await;
    let w = green.join(&code, "p3", Some("green")).await;
    assert_eq!(
        w["snapshot"]["teams"],
        json!([["yellow", "red"], ["blue", "green"]])
    );
    assert_eq!(w["snapshot"]["rules"]["teams"], true);
    assert_eq!(w["snapshot"]["seats"][3]["team"], 1);
    clients.push(green);
    for c in clients.iter_mut() {
        while c.seq < 4 {
            c.next().await;
        }
    }
    clients[0].ok(json!({"type": "start"})).await;

    let (won, clients) = play_to_end_by(clients, prefer_capture).await;
    assert_eq!(won["reason"], "goal");
    let winner = won["winner"].as_str().unwrap_or_default();
    let partner = match winner {
        "yellow" => "red",
        "red" => "yellow",
        "blue" => "green",
        _ => "blue",
    };
    assert_eq!(won["partner"], partner, "{won}");
    check_opening(&clients[0], false, 6);
    assert_dice_per_throw(&clients[0], 1);
    // Partner captures offered as `capture: true` were sent back and accepted (an
    // error would have failed the game above).
    assert!(
        CAPTURE_CHOICES.load(Ordering::Relaxed) > 0,
        "no partner capture was offered in this game"
    );
    let room = server.room(&code).await;
    assert_eq!(room["status"], "finished");
    assert_eq!(room["game"]["outcome"]["winner"], winner);
}

#[tokio::test]
async fn parcheesi_game_is_played_to_the_end() {
    let server = start(test_config()).await;
    let (code, clients) = seated_game(
        &server,
        settings("parcheesi", 3),
        &["yellow", "red", "green"],
    )
    .await;
    let (won, clients) = play_to_end(clients).await;
    assert_eq!(won["reason"], "goal");
    check_opening(&clients[2], false, 12);
    assert_dice_per_throw(&clients[2], 2);
    let room = server.room(&code).await;
    assert_eq!(room["status"], "finished");
    assert_eq!(room["rules"]["preset"], "parcheesi");
    assert_eq!(room["rules"]["doubles_bonus"], "all_or_none");
}

#[tokio::test]
async fn parcheesi_strict_starts_with_the_lowest_opening_roll() {
    let server = start(test_config()).await;
    let (_code, clients) =
        seated_game(&server, settings("parcheesi-strict", 2), &["blue", "red"]).await;
    let first = check_opening(&clients[0], true, 12);
    assert!(first == "blue" || first == "red");
}

#[tokio::test]
async fn invalid_combinations_are_refused_naming_the_conflict() {
    let server = start(test_config()).await;
    for (preset, why) in [
        // D-33 (issue 30): a variant only on the preset it was written for (classic).
        (
            "online+murcia-12",
            "the variant murcia-12 is not played with online",
        ),
        (
            "parcheesi+mixed-safe",
            "the variant mixed-safe is not played with parcheesi",
        ),
        (
            "pairs+safe-only",
            "Se permite formar barreras en cualquier lugar",
        ),
        (
            "online+two-out",
            "the variant two-out is not played with online",
        ),
        (
            "parcheesi+safe-only",
            "the variant safe-only is not played with parcheesi",
        ),
        ("classic+bogus", "unknown variant"),
        ("chess", "unknown preset"),
    ] {
        let body = json!({ "preset": preset }).to_string();
        let (status, err) = server.http("POST", "/api/rooms", Some(&body)).await;
        assert_eq!(status, 400, "{preset}: {err}");
        assert_eq!(err["code"], "bad_request");
        let message = err["message"].as_str().unwrap_or_default();
        assert!(message.contains(why), "{preset}: {message}");
    }
    // Still backward compatible: plain `"preset": "online"`.
    let (status, body) = server
        .http("POST", "/api/rooms", Some(r#"{"preset": "online"}"#))
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["settings"]["preset"], "online");
}

#[tokio::test]
async fn a_restart_recovers_a_classic_game_with_its_rule_set_and_first_player() {
    let store: std::sync::Arc<dyn parchis_store::Store> =
        std::sync::Arc::new(parchis_store::MemoryStore::new());
    let server = common::start_on(test_config(), store.clone()).await;
    let (code, mut clients) = seated_game(
        &server,
        settings("classic+murcia-12", 2),
        &["yellow", "green"],
    )
    .await;
    // Let both see the start; the first player rolls once.
    let last = clients[0].seq;
    for c in clients.iter_mut() {
        while c.seq < last {
            c.next().await;
        }
    }
    let first = check_opening(&clients[0], false, 6);
    let fi = if first == "yellow" { 0 } else { 1 };
    clients[fi].my_turn().await;
    clients[fi].ok(json!({"type": "roll"})).await;
    let before = server.room(&code).await;
    // A crash, not a graceful shutdown (which closes the store): stop serving and drop
    // the connections; the old room actor only waits for commands that never come.
    server.task.abort();
    let _ = server.task.await;

    // A new server on the same store recovers the room.
    let (server, restored) = common::start_recovered(test_config(), store).await;
    assert_eq!(restored, 1);
    let after = server.room(&code).await;
    assert_eq!(after["status"], "playing");
    assert_eq!(after["settings"]["preset"], "classic+murcia-12");
    assert_eq!(after["rules"], before["rules"]);
    assert_eq!(after["rules"]["six_counts_when_nest_empty"], 12);
    assert_eq!(after["game"]["position"], before["game"]["position"]);
    assert_eq!(
        after["game"]["position"]["turn"],
        before["game"]["position"]["turn"]
    );
    let history = server.room(&code).await;
    assert_eq!(history["game"]["game_id"], before["game"]["game_id"]);

    // Both players resume and finish the game with one-die throws.
    let mut resumed = Vec::new();
    for old in clients {
        let mut c = server.client().await;
        c.events = old.events;
        c.seq = old.seq;
        let token = old.token.clone().expect("token");
        c.resume(&code, &token, old.seq).await;
        c.room = code.clone();
        c.colour = old.colour.clone();
        c.token = old.token;
        resumed.push(c);
    }
    let (won, resumed) = play_to_end(resumed).await;
    assert_eq!(won["reason"], "goal");
    assert_dice_per_throw(&resumed[0], 1);
    server.shutdown.cancel();
    let _ = server.task.await;
}
