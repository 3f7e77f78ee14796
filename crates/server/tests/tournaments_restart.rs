//! Championships survive a kill -9 (issue 27): the real `parchis-server` binary over
//! SQLite runs a knockout of 8 pairs of bots; it is killed during round 1 and again once
//! round 2 is drawn, restarted on the same data each time, and the tournament finishes
//! with the same draw, 7 games, each match played in exactly one game of its room.

mod binary;
mod common;

use common::tour::{matches, now_ms, round_one, until};
use common::{call, http_at};
use serde_json::json;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

const WHOLE: Duration = Duration::from_secs(240);

async fn spawn(dir: &Path) -> binary::Proc {
    // Bots think a few ms even unwatched, so that round 1 is still being played when the
    // first kill comes.
    let args = ["--dice-seed", "7", "--min-unwatched-bot-think-ms", "5"];
    binary::spawn(dir, None, &args, &[]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_killed_in_round_one_and_between_rounds_finishes_with_the_same_draw() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut p = spawn(dir.path()).await;
    let body = json!({"username": "Organiser", "password": "correct horse battery"}).to_string();
    let (status, answer) = call(p.addr, "POST", "/api/accounts", None, &body).await;
    assert_eq!(status, 201, "{answer}");
    let token = answer["token"].as_str().unwrap().to_owned();
    let settings = json!({
        "name": "Resistente",
        "preset": "pairs",
        "registration_deadline_ms": now_ms() + 3_600_000,
        "spectator_delay_throws": 0,
        "bot_fill": {"up_to": 8, "level": "random", "think_ms": 0},
    });
    let (status, created) = call(
        p.addr,
        "POST",
        "/api/tournaments",
        Some(&token),
        &settings.to_string(),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let (status, drawn) = call(
        p.addr,
        "POST",
        &format!("/api/tournaments/{id}/close"),
        Some(&token),
        "",
    )
    .await;
    assert_eq!(status, 200, "{drawn}");
    let draw = round_one(&drawn);
    assert_eq!(draw.len(), 4, "{drawn:#}");

    // Kill -9 while round 1 is being played.
    until(p.addr, &id, "a round-1 game under way", WHOLE, |v| {
        matches(v)
            .iter()
            .any(|m| m["round"] == 1 && m["status"] == "playing")
    })
    .await;
    p.kill();

    // Again once round 2 is drawn.
    let mut p = spawn(dir.path()).await;
    let v = until(p.addr, &id, "round 2 drawn", WHOLE, |v| {
        matches(v).iter().any(|m| m["round"] == 2)
    })
    .await;
    assert_eq!(round_one(&v), draw, "the same draw after the first restart");
    p.kill();

    let p = spawn(dir.path()).await;
    let v = until(p.addr, &id, "finished", WHOLE, |v| {
        v["status"] == "finished"
    })
    .await;
    assert_eq!(round_one(&v), draw, "the same draw at the end");
    let all = matches(&v);
    assert_eq!(all.len(), 7, "{v:#}");
    let mut games = BTreeSet::new();
    for m in &all {
        assert_eq!(m["status"], "finished", "{m}");
        let room = m["room"].as_str().expect("room");
        let (status, list) = http_at(p.addr, "GET", &format!("/api/games?room={room}"), None).await;
        assert_eq!(status, 200);
        let list = list["games"].as_array().cloned().unwrap_or_default();
        assert_eq!(list.len(), 1, "match {} played once: {list:?}", m["id"]);
        assert_eq!(list[0]["id"], m["game_id"], "{m}");
        assert!(games.insert(m["game_id"].as_str().unwrap().to_owned()));
    }
    let last = all.iter().max_by_key(|m| m["round"].as_u64()).unwrap();
    assert_eq!(v["champion"], last["winner"], "{v:#}");
}
