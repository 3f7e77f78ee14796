//! End-to-end tests: real tokio-tungstenite clients against the real server on port 0.
//!
//! Why one long file: it is a list of one independent test per protocol behaviour, sharing the helpers at its top;
//! one test binary also keeps the build short.

mod common;

use common::{play_to_end, seated_game, start, test_config, Client};
use futures_util::SinkExt;
use serde_json::{json, Value};
use std::time::Duration;

fn long_clock() -> Value {
    json!({"turn_clock_secs": 600, "disconnect_grace_secs": 600})
}

/// Every client saw the same gap-free event stream (seq n+1 after n).
fn assert_gap_free(c: &Client) {
    for w in c.events.windows(2) {
        assert_eq!(
            w[1]["seq"].as_u64(),
            w[0]["seq"].as_u64().map(|s| s + 1),
            "gap in the event stream"
        );
    }
}

// ----- HTTP ---------------------------------------------------------------------------

#[tokio::test]
async fn http_create_list_get_and_404() {
    let server = start(test_config()).await;
    let (status, body) = server.http("POST", "/api/rooms", Some("")).await;
    assert_eq!(status, 201, "{body}");
    let code = body["code"].as_str().unwrap_or_default().to_owned();
    assert_eq!(code.len(), 10);
    assert!(code
        .chars()
        .all(|c| "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(c)));
    assert!(body["invite_url"]
        .as_str()
        .unwrap_or_default()
        .ends_with(&code));
    assert_eq!(body["settings"]["preset"], "online");
    assert_eq!(body["settings"]["seats"], 4);
    assert_eq!(body["settings"]["turn_clock_secs"], 15);
    assert_eq!(body["settings"]["disconnect_grace_secs"], 60);
    assert_eq!(body["settings"]["timeouts_to_abandon"], 3);

    let private = server
        .create_room(json!({"public": false, "seats": 2}))
        .await;
    let (status, list) = server.http("GET", "/api/rooms", None).await;
    assert_eq!(status, 200);
    let codes: Vec<&str> = list["rooms"]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r["code"].as_str()).collect())
        .unwrap_or_default();
    assert!(codes.contains(&code.as_str()));
    assert!(!codes.contains(&private.as_str()));
    let entry = list["rooms"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["code"] == code.as_str()).cloned())
        .unwrap_or_default();
    assert_eq!(entry["free"], 4);
    assert_eq!(entry["taken"], 0);

    let room = server.room(&private).await;
    assert_eq!(room["status"], "lobby");
    assert_eq!(room["settings"]["seats"], 2);

    let (status, err) = server.http("GET", "/api/rooms/ZZZZZZZZZZ", None).await;
    assert_eq!(status, 404);
    assert_eq!(err["code"], "unknown_room");

    refused_room(&server, r#"{"seats": 7}"#, "bad_request").await;
    refused_room(&server, "{nope", "bad_json").await;
    presets_are_checked_at_creation(&server).await;
}

/// `POST /api/rooms` with `body` is refused: 400 with error `code`; its message.
async fn refused_room(server: &common::Server, body: &str, code: &str) -> String {
    let (status, err) = server.http("POST", "/api/rooms", Some(body)).await;
    assert_eq!(status, 400, "{body}: {err}");
    assert_eq!(err["code"], code, "{body}: {err}");
    err["message"].as_str().unwrap_or_default().to_owned()
}

/// Every preset is playable; an invalid combination is refused naming the conflict, a
/// valid one is accepted and named canonically.
async fn presets_are_checked_at_creation(server: &common::Server) {
    let message = refused_room(server, r#"{"preset": "online+murcia-12"}"#, "bad_request").await;
    assert!(
        message.contains("the variant murcia-12 is not played with online"),
        "{message}"
    );
    let message = refused_room(server, r#"{"preset": "classic+nope"}"#, "bad_request").await;
    assert!(message.contains("unknown variant"), "{message}");
    let message = refused_room(server, r#"{"preset": "pairs", "seats": 2}"#, "bad_request").await;
    assert!(
        message.contains("pairs plays with 4 to 4 players"),
        "{message}"
    );
    let (status, body) = server
        .http(
            "POST",
            "/api/rooms",
            Some(r#"{"preset": "classic+two-out+murcia-12", "seats": 2}"#),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["settings"]["preset"], "classic+murcia-12+two-out");
    let code = body["code"].as_str().unwrap_or_default().to_owned();
    let room = server.room(&code).await;
    assert_eq!(room["rules"]["preset"], "classic");
    assert_eq!(room["rules"]["dice"], 1);
    assert_eq!(room["rules"]["six_counts_when_nest_empty"], 12);
    assert_eq!(room["rules"]["two_out_on_first_five"], true);
    assert_eq!(room["teams"], json!([]));
}

// ----- full games ---------------------------------------------------------------------

#[tokio::test]
async fn two_player_game_is_played_to_the_end() {
    let server = start(test_config()).await;
    let (code, clients) = seated_game(&server, long_clock(), &["yellow", "red"]).await;
    let (won, clients) = play_to_end(clients).await;
    assert_eq!(won["reason"], "goal");
    let winner = won["winner"].as_str().unwrap_or_default().to_owned();
    assert!(winner == "yellow" || winner == "red");
    for c in &clients {
        assert_gap_free(c);
    }
    // Both saw the same stream from the start of the game.
    let tail = |c: &Client| -> Vec<u64> {
        c.events
            .iter()
            .filter_map(|e| e["seq"].as_u64())
            .filter(|s| *s >= 3)
            .collect()
    };
    assert_eq!(tail(&clients[0]), tail(&clients[1]));
    // The first throw was the creator's (R-FIRST).
    let first_roll = clients[1]
        .events
        .iter()
        .find(|e| Client::is_game_event(e, "dice_rolled"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(first_roll["event"]["event"]["colour"], "yellow");

    let room = server.room(&code).await;
    assert_eq!(room["status"], "finished");
    assert_eq!(room["game"]["outcome"]["winner"], winner.as_str());
    // Write-ahead: every game event is in the store, in order.
    let game_id = room["game"]["game_id"].as_str().unwrap_or_default();
    let (record, events) = server.stored_game(game_id).await;
    assert!(record.is_finished());
    assert_eq!(record.reason.as_deref(), Some("completed"));
    let last_seq = clients[0].seq as i64;
    assert_eq!(events.last().map(|e| e.seq), Some(last_seq));
    assert_eq!(
        events.first().map(|e| e.seq),
        Some(3),
        "game_started follows two joins"
    );
    assert_eq!(events.len() as i64, last_seq - 2);
}

#[tokio::test]
async fn a_game_on_the_sqlite_store_is_written_ahead_and_finished() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = parchis_store::open_store(None, dir.path())
        .await
        .expect("sqlite store");
    let server = common::start_on(test_config(), store).await;
    let (code, clients) = seated_game(&server, long_clock(), &["blue", "green"]).await;
    let (won, clients) = play_to_end(clients).await;
    assert_eq!(won["reason"], "goal");
    let snapshot = server
        .store
        .get_room(&code)
        .await
        .ok()
        .flatten()
        .expect("room stored");
    assert_eq!(snapshot.room.status, parchis_store::RoomStatus::Finished);
    assert_eq!(snapshot.seats.len(), 2);
    let game = snapshot.game.clone().expect("game stored");
    assert!(game.is_finished());
    assert_eq!(
        game.result.as_ref().map(|r| r["winner"].clone()),
        Some(won["winner"].clone())
    );
    // A new game is stored as its packed log (issue 28), no JSON rows.
    assert!(snapshot.events.is_empty(), "no event rows for a new game");
    let (log, _) = parchis_room_core::persist::stored_log(&snapshot.events, snapshot.log.as_ref())
        .expect("the packed log unpacks");
    assert_eq!(log.last().map(|e| e.seq), Some(clients[0].seq));
    assert_eq!(snapshot.last_seq(), clients[0].seq as i64);
    assert!(matches!(
        log[0].event,
        parchis_protocol::RoomEvent::GameStarted { .. }
    ));
    server.shutdown.cancel();
    let _ = server.task.await;
}

#[tokio::test]
async fn four_player_game_with_a_spectator_is_played_to_the_end() {
    let server = start(test_config()).await;
    let code = server.create_room(long_clock()).await;
    let mut clients = Vec::new();
    for (i, c) in ["green", "yellow", "blue", "red"].iter().enumerate() {
        let mut cl = server.client().await;
        cl.join(&code, &format!("p{i}"), Some(c)).await;
        clients.push(cl);
    }
    let mut spectator = server.client().await;
    let w = spectator.watch(&code).await;
    assert_eq!(w["snapshot"]["seats"].as_array().map(Vec::len), Some(4));
    for c in clients.iter_mut() {
        while c.seq < 4 {
            c.next().await;
        }
    }
    clients[0].ok(json!({"type": "start"})).await;
    let spec_task = tokio::spawn(async move {
        spectator
            .until("game_won", |v| Client::is_game_event(v, "game_won"))
            .await;
        // The last event: the server seed revealed (docs/FAIR_DICE.md).
        spectator
            .until("dice_revealed", |v| v["event"]["type"] == "dice_revealed")
            .await;
        spectator
    });
    let (won, clients) = play_to_end(clients).await;
    let spectator = spec_task.await.expect("spectator");
    assert_eq!(won["reason"], "goal");
    assert_gap_free(&spectator);
    // The spectator's stream equals the players' stream from the game start.
    let seqs = |c: &Client| -> Vec<u64> {
        c.events
            .iter()
            .filter_map(|e| e["seq"].as_u64())
            .filter(|s| *s >= 5)
            .collect()
    };
    assert_eq!(seqs(&spectator), seqs(&clients[2]));
    let first_roll = spectator
        .events
        .iter()
        .find(|e| Client::is_game_event(e, "dice_rolled"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        first_roll["event"]["event"]["colour"], "green",
        "creator rolls first"
    );
    let room = server.room(&code).await;
    assert_eq!(room["status"], "finished");
    assert_eq!(room["spectators"], 1);
}

// ----- lobby --------------------------------------------------------------------------

#[tokio::test]
async fn colour_conflict_is_refused() {
    let server = start(test_config()).await;
    let code = server.create_room(long_clock()).await;
    let mut a = server.client().await;
    let w = a.join(&code, "Ana", Some("yellow")).await;
    assert_eq!(w["colour"], "yellow");
    assert_eq!(w["token"].as_str().map(str::len), Some(64));
    let mut b = server.client().await;
    let req = b
        .cmd(json!({"type": "join", "room": code, "name": "Bea", "colour": "yellow"}))
        .await;
    let r = b.reply(req).await;
    assert_eq!(r["code"], "colour_taken", "{r}");
    b.join(&code, "Bea", Some("red")).await;
    b.refused(
        json!({"type": "choose_colour", "colour": "yellow"}),
        "colour_taken",
    )
    .await;
    b.ok(json!({"type": "choose_colour", "colour": "blue"}))
        .await;
    let room = server.room(&code).await;
    let colours: Vec<&str> = room["seats"]
        .as_array()
        .map(|s| s.iter().filter_map(|x| x["colour"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(colours, vec!["yellow", "blue"]);
    // Not the creator: cannot start.
    b.refused(json!({"type": "start"}), "not_creator").await;
}

#[tokio::test]
async fn creator_leaving_passes_the_role_and_frees_the_seat() {
    let server = start(test_config()).await;
    let code = server.create_room(long_clock()).await;
    let mut a = server.client().await;
    a.join(&code, "Ana", Some("yellow")).await;
    a.refused(json!({"type": "start"}), "not_enough_players")
        .await;
    let mut b = server.client().await;
    b.join(&code, "Bea", Some("red")).await;
    let mut c = server.client().await;
    c.join(&code, "Cris", Some("green")).await;
    a.ok(json!({"type": "leave"})).await;
    let ev = b
        .until("creator_changed", |v| {
            v["type"] == "event" && v["event"]["type"] == "creator_changed"
        })
        .await;
    assert_eq!(ev["event"]["colour"], "red");
    let room = server.room(&code).await;
    assert_eq!(room["seats"].as_array().map(Vec::len), Some(2));
    assert_eq!(room["seats"][0]["creator"], true);
    // Yellow is free again.
    let mut d = server.client().await;
    d.join(&code, "Dani", Some("yellow")).await;
    while b.seq < d.seq {
        b.next().await;
    }
    b.ok(json!({"type": "start"})).await;
    let turn = b.my_turn().await;
    assert_eq!(turn["colour"], "red", "the new creator rolls first");
    assert_eq!(turn["must_roll"], true);
}

#[tokio::test]
async fn after_the_start_joining_is_refused_but_watching_works_and_spectators_cannot_act() {
    let server = start(test_config()).await;
    let (code, mut players) = seated_game(&server, long_clock(), &["yellow", "blue"]).await;
    let mut late = server.client().await;
    let req = late
        .cmd(json!({"type": "join", "room": code, "name": "Late"}))
        .await;
    let r = late.reply(req).await;
    assert_eq!(r["code"], "game_started", "{r}");
    let w = late.watch(&code).await;
    assert_eq!(w["role"], "spectator");
    assert_eq!(w["snapshot"]["status"], "playing");
    assert_eq!(w["snapshot"]["game"]["position"]["turn"], "yellow");
    assert!(w["snapshot"]["game"]["deadline_ms"].as_i64().is_some());
    for cmd in [
        json!({"type": "roll"}),
        json!({"type": "play", "action": {"type": "exit"}}),
        json!({"type": "start"}),
        json!({"type": "choose_colour", "colour": "red"}),
    ] {
        late.refused(cmd, "spectator_cannot_act").await;
    }
    let turn = players[0].my_turn().await;
    let p = players[0]
        .until("presence", |v| {
            v["type"] == "presence" && v["spectators"] == 1
        })
        .await;
    assert_eq!(p["spectators"], 1);
    assert_eq!(server.room(&code).await["spectators"], 1);
    // The spectator's commands changed nothing.
    assert_eq!(turn["must_roll"], true);
    assert_eq!(server.room(&code).await["seq"], turn["seq"]);
    players[0].ok(json!({"type": "roll"})).await;
    let ev = late
        .until("dice", |v| Client::is_game_event(v, "dice_rolled"))
        .await;
    assert_eq!(ev["event"]["event"]["colour"], "yellow");
}

// ----- refusals with the state unchanged ------------------------------------------------

#[tokio::test]
async fn out_of_turn_illegal_stale_and_duplicate_commands_change_nothing() {
    let server = start(test_config()).await;
    let (code, mut p) = seated_game(&server, long_clock(), &["yellow", "red"]).await;
    let turn = p[0].my_turn().await;
    let before = server.room(&code).await;
    while p[1].seq < p[0].seq {
        p[1].next().await;
    }
    // Out of turn.
    let r = p[1].refused(json!({"type": "roll"}), "not_your_turn").await;
    assert!(r["message"].as_str().unwrap_or_default().contains("yellow"));
    // Illegal: moving before rolling names the rule.
    let r = p[0]
        .refused(
            json!({"type": "play", "action": {"type": "move", "piece": 0, "die": 3}}),
            "illegal_action",
        )
        .await;
    assert!(r["rule"].as_str().is_some_and(|s| !s.is_empty()), "{r}");
    // Stale seq.
    let stale = p[0].seq.saturating_sub(1);
    p[0].refused(json!({"type": "roll", "seq": stale}), "stale_seq")
        .await;
    let after = server.room(&code).await;
    assert_eq!(before["seq"], after["seq"]);
    assert_eq!(before["game"], after["game"]);
    assert_eq!(turn["seq"], after["seq"]);
    // Duplicate request id: the second roll with the same req is not applied.
    p[0].cmd(json!({"type": "roll", "req": 500})).await;
    let r = p[0].reply(500).await;
    assert_eq!(r["type"], "ok");
    let seq_after_roll = server.room(&code).await["seq"].clone();
    let dup = json!({"type": "roll", "req": 500, "room": code, "seq": p[0].seq});
    p[0].send_text(&dup.to_string()).await;
    let e = p[0].error("duplicate_request").await;
    assert_eq!(e["req"], 500);
    assert_eq!(server.room(&code).await["seq"], seq_after_roll);
}

// ----- clock and abandonment ------------------------------------------------------------

#[tokio::test]
async fn a_timeout_loses_the_turn() {
    let server = start(test_config()).await;
    let settings =
        json!({"turn_clock_secs": 1, "timeouts_to_abandon": 3, "disconnect_grace_secs": 600});
    let (_code, mut p) = seated_game(&server, settings, &["yellow", "blue"]).await;
    let turn = p[1]
        .until("turn", |v| {
            v["type"] == "event" && v["event"]["type"] == "turn"
        })
        .await;
    assert_eq!(turn["event"]["colour"], "yellow");
    let deadline = turn["event"]["deadline_ms"].as_i64().unwrap_or_default();
    let at = turn["at_ms"].as_i64().unwrap_or_default();
    // Absolute: the server's clock at the throw's start plus the 1 s turn clock (the event's
    // own timestamp is taken a moment after the deadline is computed).
    assert!(
        (deadline - at - 1000).abs() <= 100,
        "deadline {deadline} is not 1 s after {at}"
    );
    let t = p[1]
        .until("timed_out", |v| Client::is_game_event(v, "timed_out"))
        .await;
    assert_eq!(t["event"]["event"]["colour"], "yellow");
    assert_eq!(t["event"]["event"]["consecutive"], 1);
    let next = p[1].my_turn().await;
    assert_eq!(next["colour"], "blue");
    assert!(next["deadline_ms"].as_i64().unwrap_or_default() > deadline);
    // Yellow's late roll is refused as out of turn.
    while p[0].seq < next["seq"].as_u64().unwrap_or_default() {
        p[0].next().await;
    }
    p[0].refused(json!({"type": "roll"}), "not_your_turn").await;
}

#[tokio::test]
async fn consecutive_timeouts_abandon_and_end_a_two_player_game() {
    let server = start(test_config()).await;
    let settings =
        json!({"turn_clock_secs": 1, "timeouts_to_abandon": 2, "disconnect_grace_secs": 600});
    let (code, mut p) = seated_game(&server, settings, &["yellow", "blue"]).await;
    // Blue plays its turns (rolls), yellow never acts.
    let ab = loop {
        let v = p[1].next().await.expect("open");
        if v["type"] == "your_turn" && v["must_roll"] == true {
            p[1].cmd(json!({"type": "roll"})).await;
        } else if v["type"] == "your_turn" {
            let a = v["legal"][0].clone();
            p[1].cmd(json!({"type": "play", "action": a})).await;
        }
        if v["type"] == "event" && v["event"]["type"] == "abandoned" {
            break v;
        }
    };
    assert_eq!(ab["event"]["colour"], "yellow");
    assert_eq!(ab["event"]["reason"], "timeouts");
    let won = p[1]
        .until("game_won", |v| Client::is_game_event(v, "game_won"))
        .await;
    assert_eq!(won["event"]["event"]["winner"], "blue");
    assert_eq!(won["event"]["event"]["reason"], "forfeit");
    let room = server.room(&code).await;
    assert_eq!(room["status"], "finished");
    assert_eq!(room["seats"][0]["abandoned"], true);
    // Yellow was told too.
    p[0].until("game_won", |v| Client::is_game_event(v, "game_won"))
        .await;
}

#[tokio::test]
async fn disconnect_past_grace_ends_a_two_player_game() {
    let server = start(test_config()).await;
    let settings = json!({"turn_clock_secs": 600, "disconnect_grace_secs": 1});
    let (code, mut p) = seated_game(&server, settings, &["yellow", "blue"]).await;
    let blue = p.pop().expect("blue");
    drop(blue);
    let ab = p[0]
        .until("abandoned", |v| {
            v["type"] == "event" && v["event"]["type"] == "abandoned"
        })
        .await;
    assert_eq!(ab["event"]["colour"], "blue");
    assert_eq!(ab["event"]["reason"], "disconnected");
    let won = p[0]
        .until("game_won", |v| Client::is_game_event(v, "game_won"))
        .await;
    assert_eq!(won["event"]["event"]["winner"], "yellow");
    assert_eq!(won["event"]["event"]["reason"], "forfeit");
    assert_eq!(server.room(&code).await["status"], "finished");
}

#[tokio::test]
async fn disconnect_past_grace_removes_one_of_three_players_and_the_game_goes_on() {
    let server = start(test_config()).await;
    let settings = json!({"turn_clock_secs": 600, "disconnect_grace_secs": 1});
    let (code, mut p) = seated_game(&server, settings, &["yellow", "blue", "red"]).await;
    let red = p.pop().expect("red");
    drop(red);
    let ab = p[0]
        .until("abandoned", |v| {
            v["type"] == "event" && v["event"]["type"] == "abandoned"
        })
        .await;
    assert_eq!(ab["event"]["colour"], "red");
    p[0].until("player_abandoned", |v| {
        Client::is_game_event(v, "player_abandoned")
    })
    .await;
    let room = server.room(&code).await;
    assert_eq!(room["status"], "playing");
    assert_eq!(room["seats"][2]["abandoned"], true);
    let statuses: Vec<&str> = room["game"]["position"]["players"]
        .as_array()
        .map(|a| a.iter().filter_map(|x| x["status"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(statuses, vec!["playing", "playing", "abandoned"]);
    // Yellow still plays.
    let t = p[0].my_turn().await;
    assert_eq!(t["colour"], "yellow");
    p[0].ok(json!({"type": "roll"})).await;
}

// ----- reconnection -------------------------------------------------------------------

#[tokio::test]
async fn reconnect_mid_turn_restores_seat_dice_and_deadline() {
    let server = start(test_config()).await;
    let (code, mut p) = seated_game(&server, long_clock(), &["yellow", "blue"]).await;
    // Play until some player is mid-throw (rolled, a move pending).
    let (who, turn) = loop {
        let (i, v) = {
            let (a, b) = p.split_at_mut(1);
            tokio::select! {
                v = a[0].next() => (0, v.expect("open")),
                v = b[0].next() => (1, v.expect("open")),
            }
        };
        if v["type"] == "your_turn" && v["seq"].as_u64() == Some(p[i].seq) {
            if v["must_roll"] == false {
                break (i, v);
            }
            p[i].cmd(json!({"type": "roll"})).await;
        }
    };
    let token = p[who].token.clone().expect("token");
    let last_seq = p[who].seq;
    let old = std::mem::replace(&mut p[who], server.client().await);
    drop(old);
    let w = p[who].resume(&code, &token, last_seq).await;
    assert_eq!(w["colour"], turn["colour"]);
    assert_eq!(w["snapshot"], Value::Null, "nothing missed: no snapshot");
    let again = p[who].my_turn().await;
    assert_eq!(again["dice"], turn["dice"]);
    assert_eq!(again["deadline_ms"], turn["deadline_ms"]);
    assert_eq!(again["legal"], turn["legal"]);
    assert_eq!(again["colour"], turn["colour"]);
    // And the seat plays on.
    let a = again["legal"][0].clone();
    p[who].ok(json!({"type": "play", "action": a})).await;

    // A resume with an old seq replays the missed events in order.
    let token = p[who].token.clone().unwrap_or(token);
    let mut third = server.client().await;
    let req = third
        .cmd(json!({"type": "resume", "room": code, "token": token, "last_seq": 1}))
        .await;
    let w = third.reply(req).await;
    assert_eq!(w["snapshot"], Value::Null);
    let first = third.until("event", |v| v["type"] == "event").await;
    assert_eq!(first["seq"], 2);
    // The older connection was taken over: told and closed with 4000.
    let closing = p[who]
        .until("closing", |v| {
            v["type"] == "closing" || v["type"] == "ws_close"
        })
        .await;
    assert_eq!(closing["code"], 4000);
    // One `closing`, then the close frame (two `closing` frames came before).
    let mut rest = Vec::new();
    while let Some(v) = p[who].next().await {
        let end = v["type"] == "ws_close";
        rest.push(v);
        if end {
            break;
        }
    }
    assert!(
        !rest.iter().any(|v| v["type"] == "closing"),
        "a second closing: {rest:?}"
    );
    assert_eq!(
        rest.last().map(|v| v["code"].clone()),
        Some(json!(4000)),
        "{rest:?}"
    );
}

#[tokio::test]
async fn resume_after_the_history_window_gets_a_snapshot_and_bad_tokens_are_refused() {
    let mut config = test_config();
    config.history = 2;
    let server = start(config).await;
    let (code, mut p) = seated_game(&server, long_clock(), &["yellow", "blue"]).await;
    p[0].my_turn().await;
    p[0].ok(json!({"type": "roll"})).await;
    let token = p[1].token.clone().expect("token");
    let mut again = server.client().await;
    let req = again
        .cmd(json!({"type": "resume", "room": code, "token": token, "last_seq": 0}))
        .await;
    let w = again.reply(req).await;
    assert_eq!(w["type"], "welcome");
    assert_eq!(w["snapshot"]["status"], "playing");
    assert_eq!(w["snapshot"]["seq"], w["seq"]);
    let mut bad = server.client().await;
    let req = bad
        .cmd(json!({"type": "resume", "room": code, "token": "00", "last_seq": 0}))
        .await;
    assert_eq!(bad.reply(req).await["code"], "bad_token");
}

// ----- bad input and abuse ---------------------------------------------------------------

#[tokio::test]
async fn every_bad_input_gets_a_typed_error_and_the_connection_keeps_working() {
    let server = start(test_config()).await;
    let code = server.create_room(long_clock()).await;
    let other = server.create_room(long_clock()).await;
    let mut c = server.client().await;
    c.join(&code, "Ana", Some("yellow")).await;

    c.send_text("this is not json").await;
    c.error("bad_json").await;
    c.ws.send(tokio_tungstenite::tungstenite::Message::Binary(
        vec![1u8, 2, 3].into(),
    ))
    .await
    .expect("send");
    c.error("binary_frame").await;
    c.send_text(r#"{"type":"teleport","req":900}"#).await;
    let e = c.error("unknown_type").await;
    assert_eq!(e["req"], 900);
    c.send_text(r#"{"type":"roll","req":901}"#).await;
    let e = c.error("missing_field").await;
    assert_eq!(e["req"], 901);
    let big = format!(
        r#"{{"type":"ping","req":902,"pad":"{}"}}"#,
        "x".repeat(17 * 1024)
    );
    c.send_text(&big).await;
    c.error("frame_too_large").await;
    c.refused(json!({"type": "start", "room": other}), "wrong_room")
        .await;
    let mut lost = server.client().await;
    lost.refused(
        json!({"type": "watch", "room": "NOSUCHROOM"}),
        "unknown_room",
    )
    .await;
    let stale = c.seq + 5;
    c.refused(
        json!({"type": "choose_colour", "colour": "red", "seq": stale}),
        "stale_seq",
    )
    .await;
    c.send_text(&json!({"type": "ping", "req": 903}).to_string())
        .await;
    let pong = c.until("pong", |v| v["type"] == "pong").await;
    assert_eq!(pong["req"], 903);
    c.send_text(&json!({"type": "ping", "req": 903}).to_string())
        .await;
    c.error("duplicate_request").await;
    // The room still works for this connection.
    c.ok(json!({"type": "choose_colour", "colour": "green"}))
        .await;
    assert_eq!(server.room(&code).await["seats"][0]["colour"], "green");
}

/// `c` is told it is closing, or closed, with close code `code`.
async fn assert_closes(c: &mut Client, code: u16) {
    let close = c
        .until("close", |v| {
            v["type"] == "ws_close" || v["type"] == "closing"
        })
        .await;
    assert_eq!(close["code"], code);
}

#[tokio::test]
async fn sustained_abuse_closes_with_a_policy_close_code() {
    let server = start(test_config()).await;
    let mut c = server.client().await;
    for _ in 0..40 {
        c.send_text("garbage").await;
    }
    assert_closes(&mut c, 1008).await;
}

#[tokio::test]
async fn rate_limit_refuses_then_closes() {
    let mut config = test_config();
    config.commands_per_second = 2;
    config.max_errors = 5;
    let server = start(config).await;
    let mut c = server.client().await;
    for i in 0..30u64 {
        let _ = tokio::time::timeout(
            Duration::from_millis(200),
            c.ws.send(tokio_tungstenite::tungstenite::Message::Text(
                json!({"type": "ping", "req": i}).to_string().into(),
            )),
        )
        .await;
    }
    c.error("rate_limited").await;
    assert_closes(&mut c, 1008).await;
}

#[tokio::test]
async fn a_stalled_reader_is_disconnected_without_delaying_the_others() {
    let mut config = test_config();
    config.outbound_queue = 8;
    config.send_buffer_bytes = Some(4096);
    let server = start(config).await;
    let code = server.create_room(long_clock()).await;
    let mut a = server.client().await;
    a.join(&code, "Ana", Some("yellow")).await;
    let mut stalled = server.small_buffer_client().await;
    stalled.watch(&code).await;
    // The stalled spectator now reads nothing while Ana changes colour many times.
    for i in 0..600 {
        let colour = if i % 2 == 0 { "red" } else { "yellow" };
        a.ok(json!({"type": "choose_colour", "colour": colour}))
            .await;
    }
    // The room dropped the stalled spectator (and kept serving Ana).
    let mut watchers = u64::MAX;
    for _ in 0..50 {
        watchers = server.room(&code).await["spectators"]
            .as_u64()
            .unwrap_or(99);
        if watchers == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(watchers, 0, "stalled spectator still attached");
    // When it finally reads, its stream ends (slow-consumer close or reset).
    let end = loop {
        match stalled.next().await {
            None => break None,
            Some(v) if v["type"] == "ws_close" || v["type"] == "closing" => break Some(v),
            Some(_) => continue,
        }
    };
    if let Some(v) = end {
        assert_eq!(v["code"], 4001);
    }
}

#[tokio::test]
async fn shutdown_tells_clients_and_stops() {
    let server = start(test_config()).await;
    let code = server.create_room(long_clock()).await;
    let mut a = server.client().await;
    a.join(&code, "Ana", None).await;
    server.shutdown.cancel();
    assert_closes(&mut a, 1001).await;
    let result = tokio::time::timeout(Duration::from_secs(10), server.task)
        .await
        .expect("server stopped");
    assert!(matches!(result, Ok(Ok(()))));
}
