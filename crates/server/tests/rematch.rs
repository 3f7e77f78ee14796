//! Rematch after a game (issue 17): the same seats and settings, started when every player
//! still in the room agrees (bots always agree). Real WebSocket clients, real server.

mod common;

use common::{play_to_end, seated_game, start, test_config};
use serde_json::{json, Value};

fn event_of(v: &Value, kind: &str) -> bool {
    v["type"] == "event" && v["event"]["type"] == kind
}

/// A started two-player game (yellow, red) with a long clock: its code and clients.
async fn two_players(server: &common::Server) -> (String, Vec<common::Client>) {
    seated_game(
        server,
        json!({"seats": 2, "turn_clock_secs": 600}),
        &["yellow", "red"],
    )
    .await
}

#[tokio::test]
async fn a_rematch_starts_when_both_players_ask() {
    let server = start(test_config()).await;
    let (code, clients) = two_players(&server).await;
    let first_game = clients[0]
        .events
        .iter()
        .find(|e| event_of(e, "game_started"))
        .map(|e| e["event"]["game_id"].clone());
    let (_, mut p) = play_to_end(clients).await;
    let r = p[0].cmd(json!({"type": "rematch"})).await;
    let a = p[0].reply(r).await;
    assert_eq!(a["type"], "ok", "{a}");
    let wanted = p[1]
        .until("rematch_wanted", |v| event_of(v, "rematch_wanted"))
        .await;
    assert_eq!(wanted["event"]["colour"], "yellow");
    // Asking twice changes nothing.
    let again = p[0].cmd(json!({"type": "rematch"})).await;
    assert_eq!(p[0].reply(again).await["type"], "ok");
    let room: Value = server.room(&code).await;
    assert_eq!(
        room["status"], "finished",
        "one player agreed: still finished"
    );
    // The second player agrees: the rematch starts with the same seats.
    let r = p[1].cmd(json!({"type": "rematch"})).await;
    let started = p[1]
        .until("game_started", |v| event_of(v, "game_started"))
        .await;
    assert!(p[1].events.iter().any(|e| event_of(e, "rematch")));
    assert_ne!(
        Some(started["event"]["game_id"].clone()),
        first_game,
        "a new game"
    );
    let reply = p[1].reply(r).await;
    assert_eq!(reply["type"], "ok", "{reply}");
    let room: Value = server.room(&code).await;
    assert_eq!(room["status"], "playing");
    let colours: Vec<&str> = room["seats"]
        .as_array()
        .map(|s| s.iter().filter_map(|x| x["colour"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(colours, ["yellow", "red"], "the same seats");
    assert_eq!(
        room["settings"]["turn_clock_secs"], 600,
        "the same settings"
    );
    // Both games are stored for the room.
    let (_, games) = server
        .http("GET", &format!("/api/games?room={code}"), None)
        .await;
    assert_eq!(games["games"].as_array().map(Vec::len), Some(2), "{games}");
}

#[tokio::test]
async fn a_rematch_is_refused_while_the_game_runs() {
    let server = start(test_config()).await;
    let (_code, mut p) = two_players(&server).await;
    let r = p[0]
        .refused(json!({"type": "rematch"}), "game_started")
        .await;
    assert_eq!(r["code"], "game_started");
}

#[tokio::test]
async fn against_bots_one_request_is_enough() {
    let mut config = test_config();
    config.dice_seed = Some(3);
    let server = start(config).await;
    let code = server
        .create_room(
            json!({"seats": 2, "bots": "random", "bot_think_ms": 0, "turn_clock_secs": 600}),
        )
        .await;
    let mut me = server.client().await;
    me.join(&code, "Ana", Some("yellow")).await;
    me.ok(json!({"type": "start"})).await;
    let (_, mut me) = play_to_end(vec![me]).await;
    let mut me = me.remove(0);
    let r = me.cmd(json!({"type": "rematch"})).await;
    me.until("game_started", |v| event_of(v, "game_started"))
        .await;
    assert_eq!(me.reply(r).await["type"], "ok");
    let room: Value = server.room(&code).await;
    assert_eq!(room["status"], "playing");
    assert_eq!(room["seats"].as_array().map(Vec::len), Some(2));
}

/// A refused rematch changes nothing: with one player left in a room without bots
/// (the others left, so yellow won by forfeit), yellow's request is refused
/// `not_enough_players` and nothing is announced (the room's seq stays).
#[tokio::test]
async fn a_refused_rematch_announces_nothing() {
    let server = start(test_config()).await;
    let (code, mut p) = seated_game(
        &server,
        json!({"seats": 3, "turn_clock_secs": 600}),
        &["yellow", "red", "blue"],
    )
    .await;
    for leaver in [1, 2] {
        p[leaver].ok(json!({"type": "leave"})).await;
    }
    p[0].until("game_won", |v| common::Client::is_game_event(v, "game_won"))
        .await;
    let before: Value = server.room(&code).await;
    assert_eq!(before["status"], "finished", "{before}");
    let r = p[0]
        .refused(json!({"type": "rematch"}), "not_enough_players")
        .await;
    assert_eq!(r["code"], "not_enough_players");
    let after: Value = server.room(&code).await;
    assert_eq!(after["seq"], before["seq"], "no event: {after}");
    assert!(
        !p[0].events.iter().any(|e| event_of(e, "rematch_wanted")),
        "rematch_wanted announced for a refused rematch"
    );
}

/// The last client of `p` leaves the running game (it abandons, R-LEAVE) and is dropped;
/// the others read up to its leave's events.
async fn last_leaves(p: &mut Vec<common::Client>) {
    let mut leaver = p.pop().expect("a client");
    leaver.ok(json!({"type": "leave"})).await;
    for c in p.iter_mut() {
        while c.seq < leaver.seq {
            c.next().await;
        }
    }
}

/// The colours of `code`'s seats as the room view shows them.
fn seat_colours(view: &Value) -> Vec<String> {
    view["seats"]
        .as_array()
        .map(|s| {
            s.iter()
                .filter_map(|x| x["colour"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The colours of `code`'s stored seat rows.
async fn stored_colours(store: &dyn parchis_store::Store, code: &str) -> Vec<String> {
    let snapshot = store.get_room(code).await.expect("read").expect("stored");
    let mut colours: Vec<String> = snapshot.seats.into_iter().map(|s| s.colour).collect();
    colours.sort();
    colours
}

/// Issue 25 (docs/CLUSTER.md, "Stored seats and the log"): a seat abandoned in the last
/// game (blue left mid-game) keeps its stored row (shown `abandoned`, from the log) until
/// the rematch, whose start transaction deletes it with the new game's start (R-LEAVE):
/// once the new game runs the store holds only the rematch's seats, and a server
/// restarted from that store shows the same seats, playing.
#[tokio::test]
async fn a_rematch_frees_an_abandoned_seat_in_its_start_and_a_restart_agrees() {
    let server = start(test_config()).await;
    let store = server.store.clone();
    let (code, mut p) = seated_game(
        &server,
        json!({"seats": 3, "turn_clock_secs": 600}),
        &["yellow", "red", "blue"],
    )
    .await;
    last_leaves(&mut p).await;
    let (_, mut p) = play_to_end(p).await;
    let finished: Value = server.room(&code).await;
    assert_eq!(finished["status"], "finished", "{finished}");
    assert_eq!(
        stored_colours(store.as_ref(), &code).await,
        ["blue", "red", "yellow"],
        "the abandoned seat is stored until the rematch"
    );
    let r = p[0].cmd(json!({"type": "rematch"})).await;
    assert_eq!(p[0].reply(r).await["type"], "ok");
    let r = p[1].cmd(json!({"type": "rematch"})).await;
    let left = p[1]
        .until("blue's player_left", |v| event_of(v, "player_left"))
        .await;
    assert_eq!(left["event"]["colour"], "blue", "{left}");
    p[1].until("game_started", |v| event_of(v, "game_started"))
        .await;
    assert_eq!(p[1].reply(r).await["type"], "ok");
    let view: Value = server.room(&code).await;
    assert_eq!(view["status"], "playing", "{view}");
    assert_eq!(seat_colours(&view), ["yellow", "red"]);
    assert_eq!(
        stored_colours(store.as_ref(), &code).await,
        ["red", "yellow"],
        "the rematch's start deleted the abandoned seat"
    );
    // A second server on the same store (a restart; the first is left alone, its room
    // quiet: nobody acts on a 600 s clock) brings back the same seats and the rematch.
    let (second, restored) = common::start_recovered(test_config(), store.clone()).await;
    assert_eq!(restored, 1);
    let view: Value = second.room(&code).await;
    assert_eq!(view["status"], "playing", "{view}");
    assert_eq!(seat_colours(&view), ["yellow", "red"], "{view}");
    assert!(
        view["seats"]
            .as_array()
            .is_some_and(|s| s.iter().all(|x| x["abandoned"] != true)),
        "nobody abandoned the rematch: {view}"
    );
}

/// R-SEAT, issue 25: in a `pairs` room without bots, after green abandoned, the three
/// players left cannot start a rematch (pairs needs four): the first request is refused
/// `not_enough_players` before anything is announced or freed: green's seat stays, as
/// stored (shown abandoned, from the log), and the room's seq stays.
#[tokio::test]
async fn r_seat_a_pairs_rematch_short_of_players_is_refused_before_any_seat_is_freed() {
    let server = start(test_config()).await;
    let store = server.store.clone();
    let (code, mut p) = seated_game(
        &server,
        json!({"seats": 4, "preset": "pairs", "turn_clock_secs": 600}),
        &["yellow", "blue", "red", "green"],
    )
    .await;
    last_leaves(&mut p).await;
    let (_, mut p) = play_to_end(p).await;
    let before: Value = server.room(&code).await;
    assert_eq!(before["status"], "finished", "{before}");
    let r = p[0]
        .refused(json!({"type": "rematch"}), "not_enough_players")
        .await;
    assert!(
        r["message"].as_str().is_some_and(|m| m.contains('4')),
        "{r}"
    );
    let after: Value = server.room(&code).await;
    assert_eq!(after["seq"], before["seq"], "nothing announced: {after}");
    assert_eq!(after["status"], "finished");
    assert_eq!(
        seat_colours(&after),
        ["yellow", "blue", "red", "green"],
        "no seat freed"
    );
    assert_eq!(
        stored_colours(store.as_ref(), &code).await,
        ["blue", "green", "red", "yellow"],
        "and none deleted"
    );
}
