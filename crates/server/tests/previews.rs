//! `your_turn.previews` and the `position`/`path` of event frames: the server tells the
//! client what each legal action does and draws the state after each batch, so the web
//! client needs no rules (issue 17). Real WebSocket clients against the real server.

mod common;

use common::{seated_game, start, test_config, Client};
use serde_json::{json, Value};

/// The previews of a `your_turn` frame `v`: one per legal action, in order, each
/// ending its path at its `to`.
fn checked_previews(v: &Value) -> Vec<Value> {
    let legal = v["legal"].as_array().expect("legal").clone();
    let previews = v["previews"].as_array().expect("previews").clone();
    assert_eq!(previews.len(), legal.len(), "{v}");
    for (a, pv) in legal.iter().zip(&previews) {
        assert_eq!(&pv["action"], a);
        assert_eq!(
            pv["path"].as_array().and_then(|p| p.last()),
            Some(&pv["to"])
        );
        // A preview's position is the state without the rule set (proto/README.md).
        assert!(pv["position"]["players"].is_array(), "{pv}");
        assert_eq!(pv["position"].get("rules"), None, "{pv}");
    }
    previews
}

/// Plays the action of preview `pv` and reads its batch up to the answer: where the
/// piece landed (a move's frame following the previewed path), the last position drawn,
/// and whether the game was won.
async fn play_preview(c: &mut Client, pv: &Value) -> (Option<Value>, Option<Value>, bool) {
    let req = c.cmd(json!({"type": "play", "action": pv["action"]})).await;
    let (mut landed, mut position, mut won) = (None, None, false);
    loop {
        let m = c.next().await.expect("socket open");
        if m["type"] == "event" {
            let e = &m["event"]["event"];
            if landed.is_none() && e["type"] == "piece_moved" {
                assert_eq!(m["path"], pv["path"], "moved along the previewed path");
                landed = Some(e["to"].clone());
            } else if landed.is_none() && e["type"] == "piece_exited" {
                landed = Some(json!(e["square"].to_string()));
            }
            won |= e["type"] == "game_won";
            if m["position"].is_object() {
                assert_eq!(m["position"].get("rules"), None, "{m}");
                position = Some(m["position"].clone());
            }
        }
        assert_ne!(m["type"], "error", "{m}");
        if m["type"] == "ok" && m["req"].as_u64() == Some(req) {
            return (landed, position, won);
        }
    }
}

/// Plays a two-player game under `preset` to its end (every player picks the last legal
/// action) and checks, for each action: one preview per legal action, in order; the
/// played piece lands where its preview said (the `piece_moved`/`piece_exited` event and
/// the frame's `path`); the batch's last frame carries a position equal to the preview's.
/// Returns (actions checked, moves of a six that counted more than 6).
async fn check_previews(preset: &str) -> (usize, usize) {
    let mut config = test_config();
    config.dice_seed = Some(17); // the same dice every run
    let server = start(config).await;
    let (_code, clients) = seated_game(
        &server,
        json!({"preset": preset, "seats": 2, "turn_clock_secs": 600}),
        &["yellow", "red"],
    )
    .await;
    let mut tasks = Vec::new();
    for mut c in clients {
        tasks.push(tokio::spawn(async move {
            let (mut played, mut sevens) = (0usize, 0usize);
            loop {
                let v = c.next().await.expect("socket open");
                if Client::is_game_event(&v, "game_won") {
                    return (played, sevens);
                }
                assert_ne!(v["type"], "error", "{v}");
                if v["type"] != "your_turn" || v["seq"].as_u64() != Some(c.seq) {
                    continue;
                }
                if v["must_roll"] == true {
                    c.cmd(json!({"type": "roll"})).await;
                    continue;
                }
                let previews = checked_previews(&v);
                let pv = previews.last().expect("a legal action").clone();
                if pv["action"]["die"] == 6 && pv["steps"].as_u64().unwrap_or(0) > 6 {
                    sevens += 1;
                }
                let (landed, position, won) = play_preview(&mut c, &pv).await;
                assert_eq!(
                    landed.as_ref(),
                    Some(&pv["to"]),
                    "lands where previewed: {pv}"
                );
                assert_eq!(
                    position.as_ref(),
                    Some(&pv["position"]),
                    "drawn = previewed"
                );
                played += 1;
                if won {
                    return (played, sevens);
                }
            }
        }));
    }
    let (mut played, mut sevens) = (0, 0);
    for t in tasks {
        let (p, s) = tokio::time::timeout(std::time::Duration::from_secs(120), t)
            .await
            .expect("game ended")
            .expect("player task");
        played += p;
        sevens += s;
    }
    (played, sevens)
}

#[tokio::test]
async fn online_previews_are_where_pieces_land() {
    let (played, _) = check_previews("online").await;
    assert!(played >= 20, "a whole game has many moves, got {played}");
}

#[tokio::test]
async fn classic_previews_count_a_six_as_seven() {
    // R-MOVE (seed 001): a six counts 7 once the nest is empty. Over a whole game with
    // one die it happens many times; the landings of every move are checked.
    let (played, sevens) = check_previews("classic").await;
    assert!(played >= 20, "{played}");
    assert!(sevens >= 1, "no six counted 7 in a whole classic game");
}

/// The batch of a roll ends with the position after it, without the rule set: that
/// position with the rules of `game_started` is the room view's whole position.
#[tokio::test]
async fn a_roll_batch_ends_with_the_position() {
    let server = start(test_config()).await;
    let (code, mut p) = seated_game(
        &server,
        json!({"seats": 2, "turn_clock_secs": 600}),
        &["yellow", "red"],
    )
    .await;
    let t = p[0].my_turn().await;
    assert_eq!(t["must_roll"], true);
    let req = p[0].cmd(json!({"type": "roll"})).await;
    let mut last: Option<Value> = None;
    loop {
        let m = p[0].next().await.expect("open");
        if m["type"] == "ok" && m["req"].as_u64() == Some(req) {
            break;
        }
        if m["type"] == "event" {
            last = Some(m);
        }
    }
    let last = last.expect("events");
    let pos = &last["position"];
    assert!(pos.is_object(), "{last}");
    let dice = pos["stage"]["dice"].clone();
    let rolled = p[0]
        .events
        .iter()
        .rev()
        .find(|e| Client::is_game_event(e, "dice_rolled"))
        .map(|e| e["event"]["event"]["dice"].clone());
    if pos["stage"]["kind"] == "move" {
        assert_eq!(Some(dice), rolled);
    }

    assert_eq!(pos.get("rules"), None, "{last}");
    let started = p[0]
        .events
        .iter()
        .find(|e| e["event"]["type"] == "game_started")
        .expect("game_started seen")
        .clone();
    let rules = &started["event"]["position"]["rules"];
    assert_eq!(rules["preset"], "online", "{started}");
    let mut whole = pos.clone();
    whole["rules"] = rules.clone();
    let view = server.room(&code).await;
    assert_eq!(view["game"]["position"], whole, "{view}");
}

#[tokio::test]
async fn resuming_from_the_start_of_a_long_game_gets_a_snapshot() {
    // A reload resumes with last_seq 0; replaying more events than the outbound queue
    // holds would drop the connection as a slow consumer on every attempt.
    let mut config = test_config();
    config.outbound_queue = 16;
    config.dice_seed = Some(5);
    let server = start(config).await;
    let (code, clients) = seated_game(
        &server,
        json!({"seats": 2, "turn_clock_secs": 600}),
        &["yellow", "red"],
    )
    .await;
    let (_, clients) = common::play_to_end(clients).await;
    let token = clients[0].token.clone().expect("token");
    let seq = clients[0].seq;
    assert!(
        seq > 16,
        "a whole game has more events than the queue: {seq}"
    );
    let mut again = server.client().await;
    let w = again.resume(&code, &token, 0).await;
    assert!(
        w["snapshot"].is_object(),
        "a snapshot instead of {seq} events"
    );
    let ping = again.cmd(json!({"type": "ping"})).await;
    let pong = again
        .until("pong", |v| v["type"] == "pong" || v["type"] == "ws_close")
        .await;
    assert_eq!(pong["type"], "pong", "the connection stays open: {pong}");
    assert_eq!(pong["req"].as_u64(), Some(ping));
}
