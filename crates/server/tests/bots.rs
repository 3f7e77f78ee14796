//! End-to-end tests of server-side bot seats (issue 7): real tokio-tungstenite clients
//! against the real server on port 0, seeded dice, a 1 ms bot think time.

mod common;

use common::{play_to_end, room_events, start, test_config, Client};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// The colours of every `dice_rolled` engine event a client saw after the event at
/// index `from` of its event list.
fn rollers(c: &Client, from: usize) -> BTreeSet<String> {
    c.events[from..]
        .iter()
        .filter(|e| Client::is_game_event(e, "dice_rolled"))
        .filter_map(|e| e["event"]["event"]["colour"].as_str().map(str::to_owned))
        .collect()
}

/// A room of `seats` whose free seats bots of `level` fill at the start (1 ms think, long
/// clocks); its code.
async fn bot_room(server: &common::Server, seats: u8, level: &str) -> String {
    server
        .create_room(json!({
            "seats": seats,
            "bots": level,
            "bot_think_ms": 1,
            "turn_clock_secs": 600,
            "disconnect_grace_secs": 600,
        }))
        .await
}

/// Ana joins `code` as yellow and, as its creator, starts the game.
async fn join_and_start(server: &common::Server, code: &str) -> Client {
    let mut me = server.client().await;
    me.join(code, "Ana", Some("yellow")).await;
    me.ok(json!({"type": "start"})).await;
    me
}

#[tokio::test]
async fn one_person_against_three_greedy_bots_plays_to_the_end() {
    let server = start(test_config()).await;
    let code = bot_room(&server, 4, "greedy").await;
    for bad in [
        json!({"bot_think_ms": 20_000}),
        json!({"bot_think_ms": 2_000, "turn_clock_secs": 2}),
        json!({"bots": "clever"}),
        json!({"on_abandon": "vanish"}),
    ] {
        let (status, body) = server
            .http("POST", "/api/rooms", Some(&bad.to_string()))
            .await;
        assert_eq!(status, 400, "{bad} -> {body}");
    }
    let view = server.room(&code).await;
    assert_eq!(view["settings"]["bots"], "greedy");
    assert_eq!(view["settings"]["on_abandon"], "forfeit");
    assert_eq!(view["settings"]["bot_think_ms"], 1);

    let me = join_and_start(&server, &code).await;

    // The bots took the three free seats.
    let view = server.room(&code).await;
    assert_eq!(view["status"], "playing");
    let seats = view["seats"].as_array().cloned().unwrap_or_default();
    assert_eq!(seats.len(), 4, "{view}");
    assert_eq!(seats[0]["colour"], "yellow");
    assert_eq!(seats[0]["bot"], Value::Null);
    assert_eq!(seats[0]["creator"], true);
    let bot_colours: BTreeSet<String> = seats[1..]
        .iter()
        .map(|s| {
            assert_eq!(s["bot"], "greedy", "{s}");
            assert_eq!(s["creator"], false, "{s}");
            assert_eq!(s["connected"], false, "{s}");
            s["colour"].as_str().unwrap_or_default().to_owned()
        })
        .collect();
    let expected: BTreeSet<String> = ["blue", "red", "green"].map(String::from).into();
    assert_eq!(bot_colours, expected);
    let joined = room_events(&me, "player_joined");
    let bot_joins: Vec<&Value> = joined.iter().filter(|e| e["bot"] == "greedy").collect();
    assert_eq!(bot_joins.len(), 3, "{joined:?}");
    assert_eq!(bot_joins[0]["name"], "Greedy bot 1");

    let (won, clients) = play_to_end(vec![me]).await;
    let me = &clients[0];
    let winner = won["winner"].as_str().unwrap_or_default().to_owned();
    assert!(
        ["yellow", "blue", "red", "green"].contains(&winner.as_str()),
        "{won}"
    );
    // Every seat acted: the person and each bot threw the dice.
    let all: BTreeSet<String> = ["yellow", "blue", "red", "green"].map(String::from).into();
    assert_eq!(rollers(me, 0), all);
    // Nobody forfeited and the room finished.
    assert!(room_events(me, "abandoned").is_empty());
    let view = server.room(&code).await;
    assert_eq!(view["status"], "finished");
    assert_eq!(view["game"]["outcome"]["winner"], winner.as_str(), "{view}");
    server.shutdown.cancel();
}

#[tokio::test]
async fn a_bot_takes_over_a_seat_abandoned_mid_game_and_the_game_goes_on() {
    let server = start(test_config()).await;
    let code = server
        .create_room(json!({
            "seats": 2,
            "on_abandon": "bot",
            "bot_think_ms": 1,
            "turn_clock_secs": 600,
            "disconnect_grace_secs": 600,
        }))
        .await;
    let mut clients = common::yellow_and_red(&server, &code).await;
    let red_token = clients[1].token.clone().expect("token");
    clients[0].ok(json!({"type": "start"})).await;

    // Both people play a few throws.
    for _ in 0..12 {
        common::act_once(&server, &code, &mut clients).await;
    }
    // Red leaves on its own turn, so that the bot acts at once: yellow's `your_turn`, if
    // it were yellow's turn, would already have been read.
    for _ in 0..200 {
        if server.room(&code).await["game"]["position"]["turn"] == "red" {
            break;
        }
        common::act_once(&server, &code, &mut clients).await;
    }
    let mut red = clients.pop().expect("red");
    let mut yellow = clients.pop().expect("yellow");
    let before = server.room(&code).await;
    assert_eq!(before["status"], "playing");
    let red_rolls_before = rollers(&yellow, 0).contains("red");
    assert!(red_rolls_before, "red played before leaving");

    // Red leaves: a greedy bot (the room has no `bots` level) takes the seat over.
    red.ok(json!({"type": "leave"})).await;
    let took = yellow
        .until("bot_took_over", |v| {
            v["type"] == "event" && v["event"]["type"] == "bot_took_over"
        })
        .await;
    assert_eq!(
        took["event"],
        json!({"type": "bot_took_over", "colour": "red", "level": "greedy", "reason": "left"})
    );
    let mark = yellow.events.len();
    let view = server.room(&code).await;
    assert_eq!(view["status"], "playing");
    let red_seat = view["seats"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["colour"] == "red").cloned())
        .unwrap_or_default();
    assert_eq!(red_seat["bot"], "greedy", "{view}");
    assert_eq!(red_seat["abandoned"], false, "{view}");
    assert_eq!(red_seat["name"], "Luis");

    // The old token no longer resumes the seat.
    let mut again = server.client().await;
    let req = again
        .cmd(json!({"type": "resume", "room": code, "token": red_token, "last_seq": 0}))
        .await;
    let r = again.reply(req).await;
    assert_eq!(r["code"], "bad_token", "{r}");

    // The game goes on to the end: yellow plays, the bot plays red.
    let (won, clients) = play_to_end(vec![yellow]).await;
    let yellow = &clients[0];
    assert!(won["winner"] == "yellow" || won["winner"] == "red", "{won}");
    assert_eq!(won["reason"], "goal", "a real finish, not a forfeit: {won}");
    let after: BTreeSet<String> = rollers(yellow, mark);
    let both: BTreeSet<String> = ["yellow", "red"].map(String::from).into();
    assert_eq!(after, both, "the bot threw red's dice after the takeover");
    assert!(room_events(yellow, "abandoned").is_empty());
    let view = server.room(&code).await;
    assert_eq!(view["status"], "finished");
    server.shutdown.cancel();
}

#[tokio::test]
async fn a_bot_seat_comes_back_as_a_bot_after_a_restart() {
    use parchis_store::{MemoryStore, Store};
    use std::sync::Arc;

    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let first = common::start_on(test_config(), store.clone()).await;
    let code = first
        .create_room(json!({
            "seats": 2,
            "bots": "greedy",
            "bot_think_ms": 1,
            "turn_clock_secs": 600,
            "disconnect_grace_secs": 600,
        }))
        .await;
    let mut me = join_and_start(&first, &code).await;
    // Play until the bot has thrown and it is my roll again: the room is then quiet.
    loop {
        let t = me.my_turn().await;
        if t["seq"].as_u64() != Some(me.seq) {
            continue;
        }
        if t["must_roll"] == true {
            if rollers(&me, 0).contains("blue") {
                break;
            }
            me.ok(json!({"type": "roll"})).await;
        } else {
            me.ok(json!({"type": "play", "action": t["legal"][0].clone()}))
                .await;
        }
    }
    let token = me.token.clone().expect("token");
    let last_seq = me.seq;
    drop(me);
    // The restore below must come at least a millisecond after the last `turn`: a
    // stored deadline equal to (or within the skew beyond) the fresh one is kept as it
    // is, with no new `turn` event (R-CLOCK, `restore_game`), and on the memory store the
    // whole game so far can fit in one millisecond.
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;

    // A second server on the same store brings the room back (the first one is left
    // alone: its room is quiet, waiting for my roll).
    let (second, restored) = common::start_recovered(test_config(), store).await;
    assert_eq!(restored, 1);
    let view = second.room(&code).await;
    assert_eq!(view["status"], "playing");
    // R-CLOCK: the restore gives the player to act a fresh full clock, announced by one
    // `turn` event after the stored ones.
    assert_eq!(view["seq"].as_u64(), Some(last_seq + 1), "{view}");
    // The bot took the first free colour in board order.
    let bot = view["seats"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["colour"] == "blue").cloned())
        .unwrap_or_default();
    assert_eq!(bot["bot"], "greedy", "{view}");
    assert_eq!(bot["name"], "Greedy bot 1");

    let mut me = second.client().await;
    me.resume(&code, &token, last_seq).await;
    let (won, clients) = play_to_end(vec![me]).await;
    assert_eq!(won["reason"], "goal", "{won}");
    // The restored bot threw blue's dice on the second server.
    assert!(rollers(&clients[0], 0).contains("blue"));
    let view = second.room(&code).await;
    assert_eq!(view["status"], "finished");
    second.shutdown.cancel();
}

#[tokio::test]
async fn bots_take_over_players_who_time_out_and_finish_the_game() {
    let server = start(test_config()).await;
    let code = server
        .create_room(json!({
            "seats": 2,
            "bots": "random",
            "on_abandon": "bot",
            "bot_think_ms": 1,
            "turn_clock_secs": 1,
            "timeouts_to_abandon": 1,
            "disconnect_grace_secs": 600,
        }))
        .await;
    let mut clients = common::yellow_and_red(&server, &code).await;
    let (mut red, mut yellow) = (clients.pop().expect("red"), clients.pop().expect("yellow"));
    yellow.ok(json!({"type": "start"})).await;
    // With the creator's bots setting, the two seats are people: no bot joined.
    let view = server.room(&code).await;
    let bots: Vec<&Value> = view["seats"]
        .as_array()
        .map(|s| s.iter().filter(|s| !s["bot"].is_null()).collect())
        .unwrap_or_default();
    assert!(bots.is_empty(), "{view}");

    // Nobody acts: yellow (first) times out once and a bot takes over.
    let took = yellow
        .until("bot_took_over yellow", |v| {
            v["type"] == "event" && v["event"]["type"] == "bot_took_over"
        })
        .await;
    assert_eq!(
        took["event"],
        json!({"type": "bot_took_over", "colour": "yellow", "level": "random", "reason": "timeouts"})
    );
    // The seat is no longer this connection's to play.
    let req = yellow.cmd(json!({"type": "roll"})).await;
    let r = yellow.reply(req).await;
    assert_eq!(r["code"], "not_joined", "{r}");

    // Red never acts either: the two bots play the game out.
    let won = red
        .until("game_won", |v| Client::is_game_event(v, "game_won"))
        .await;
    assert_eq!(won["event"]["event"]["reason"], "goal", "{won}");
    let took = room_events(&red, "bot_took_over");
    let colours: Vec<&Value> = took.iter().map(|e| &e["colour"]).collect();
    assert_eq!(colours, [&json!("yellow"), &json!("red")], "{took:?}");
    assert!(took.iter().all(|e| e["reason"] == "timeouts"));
    assert!(room_events(&red, "abandoned").is_empty());
    let view = server.room(&code).await;
    assert_eq!(view["status"], "finished");
    for s in view["seats"].as_array().cloned().unwrap_or_default() {
        assert_eq!(s["bot"], "random", "{s}");
    }
    server.shutdown.cancel();
}

/// The search bot (expectimax over the dice, docs/BOTS.md) plays a seat through the same
/// room path: two-seat game against a person, to the end.
#[tokio::test]
async fn an_expectimax_bot_plays_a_whole_game_against_a_person() {
    let server = start(test_config()).await;
    let code = bot_room(&server, 2, "expectimax").await;
    let me = join_and_start(&server, &code).await;
    let view = server.room(&code).await;
    let seats = view["seats"].as_array().cloned().unwrap_or_default();
    assert_eq!(seats.len(), 2, "{view}");
    assert_eq!(seats[1]["bot"], "expectimax", "{view}");
    let bot_colour = seats[1]["colour"].as_str().unwrap_or_default().to_owned();
    assert_ne!(bot_colour, "yellow");

    let (won, clients) = play_to_end(vec![me]).await;
    let me = &clients[0];
    let winner = won["winner"].as_str().unwrap_or_default().to_owned();
    assert!(winner == "yellow" || winner == bot_colour, "{won}");
    // The bot threw the dice and moved pieces, not only passed.
    let bot_moves = me
        .events
        .iter()
        .filter(|e| Client::is_game_event(e, "piece_moved"))
        .filter(|e| e["event"]["event"]["colour"] == bot_colour.as_str())
        .count();
    assert!(bot_moves > 10, "the bot moved {bot_moves} times");
    assert!(rollers(me, 0).contains(&bot_colour));
    assert!(room_events(me, "abandoned").is_empty());
    let view = server.room(&code).await;
    assert_eq!(view["status"], "finished");
    server.shutdown.cancel();
}
