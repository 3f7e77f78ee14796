//! A tournament watched live (issue 27) on the real server: the view names its officials
//! (organiser and referees, account and username), the SSE feed (`GET
//! /api/tournaments/{id}/events`) carries the draw and a match's result, a spectator of a
//! running tournament match stays the spectator delay's throws behind, and a tournament
//! room's bots keep the tournament's think time even when nobody watches (the server's
//! unwatched-bot minimum does not apply there).

mod common;

use common::tour::Sse;
use common::tour::{close, create, until, view as get};
use common::{assert_answers_ping, call, sign_up_at, start, test_config, Server};
use serde_json::{json, Value};
use std::time::Duration;

/// How long a tournament of bots may take.
const WHOLE: Duration = Duration::from_secs(60);

/// Two bots of `online` at one table: one match.
fn duel(think_ms: u32, delay: u32) -> Value {
    json!({
        "name": "Duel",
        "preset": "online",
        "table_size": 2,
        "advance": 1,
        "turn_clock_secs": 30,
        "spectator_delay_throws": delay,
        "bot_fill": {"up_to": 2, "level": "random", "think_ms": think_ms},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_view_names_the_organiser_and_its_referees() {
    let s = start(test_config()).await;
    let org = sign_up_at(s.addr, "Organiser").await;
    sign_up_at(s.addr, "Referee").await;
    let id = create(s.addr, &org, duel(0, 0)).await;
    let path = format!("/api/tournaments/{id}/referees");
    let (status, v) = call(
        s.addr,
        "POST",
        &path,
        Some(&org),
        r#"{"username":"referee"}"#,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let v = get(s.addr, &id).await;
    assert_eq!(v["organiser_official"]["name"], "Organiser", "{v:#}");
    assert_eq!(v["organiser_official"]["account"], v["organiser"]);
    let referees = v["referees"].as_array().expect("referees");
    assert_eq!(referees.len(), 1, "{v:#}");
    assert_eq!(referees[0]["name"], "Referee");
    // The organiser's account is the one `/api/me` names (by username; by id where given).
    let (status, org_me) = call(s.addr, "GET", "/api/me", Some(&org), "").await;
    assert_eq!(status, 200, "{org_me}");
    assert_eq!(org_me["username"], "Organiser");
    if org_me["id"].is_string() {
        assert_eq!(org_me["id"], v["organiser"]);
    }
    assert_ne!(referees[0]["account"], v["organiser"]);
    s.shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_rooms_bots_keep_its_think_time_when_nobody_watches() {
    // An unwatched room's bots would wait a minute per action: a game of a hundred
    // actions and more could not finish in the test's minute.
    let mut config = test_config();
    config.min_unwatched_bot_think = Duration::from_secs(60);
    let s = start(config).await;
    let org = sign_up_at(s.addr, "Organiser").await;
    let id = create(s.addr, &org, duel(0, 0)).await;
    close(s.addr, &org, &id).await;
    let v = until(s.addr, &id, "finished", WHOLE, |v| {
        v["status"] == "finished"
    })
    .await;
    let m = &v["matches"][0];
    assert_eq!(m["status"], "finished", "{v:#}");
    let game = m["game_id"].as_str().expect("game");
    let (status, g) = s.http("GET", &format!("/api/games/{game}"), None).await;
    assert_eq!(status, 200, "{g}");
    let events = g["events"].as_array().map_or(0, Vec::len);
    assert!(events > 20, "a whole game was played: {events} events");
    s.shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_feed_sends_the_view_then_the_draw_and_a_match_result() {
    let s = start(test_config()).await;
    let org = sign_up_at(s.addr, "Organiser").await;
    let id = create(s.addr, &org, duel(0, 0)).await;
    let mut feed = Sse::open(s.addr, &format!("/api/tournaments/{id}/events")).await;
    let first = feed.until("the view at once", |_| true).await;
    assert!(
        feed.raw.starts_with("HTTP/1.1 200"),
        "{}",
        &feed.raw[..feed.raw.len().min(200)]
    );
    assert!(
        feed.raw.to_ascii_lowercase().contains("text/event-stream"),
        "{}",
        feed.raw
    );
    assert_eq!(
        (first["id"].as_str(), &first["status"]),
        (Some(id.as_str()), &json!("registering"))
    );
    // The stream is what the OpenAPI document says: its event name, and data holding
    // every required field of the view's schema.
    let (api, _) = parchis_server::openapi();
    let doc = serde_json::to_value(&api).expect("document");
    let event = &doc["paths"]["/api/tournaments/{id}/events"]["get"]["responses"]["200"]["content"]
        ["text/event-stream"]["schema"];
    assert_eq!(event["properties"]["event"]["const"], "tournament");
    assert!(feed.raw.contains("\nevent: tournament\n"), "{}", feed.raw);
    let data = &event["properties"]["data"];
    assert_eq!(data["contentMediaType"], "application/json");
    let schema = data["contentSchema"]["$ref"]
        .as_str()
        .and_then(|r| r.rsplit('/').next())
        .expect("a schema reference");
    let required = doc["components"]["schemas"][schema]["required"]
        .as_array()
        .expect("required fields");
    assert!(required.len() > 5, "{required:?}");
    for field in required {
        let field = field.as_str().expect("a field name");
        assert!(first.get(field).is_some(), "the event's view lacks {field}");
    }
    close(s.addr, &org, &id).await;
    let drawn = feed
        .until("the draw", |v| v["status"] != "registering")
        .await;
    assert_eq!(drawn["current_round"], 1, "{drawn:#}");
    assert_eq!(drawn["entrants"].as_array().map(Vec::len), Some(2));
    let decided = feed
        .until("a match result", |v| v["matches"][0]["winner"].is_u64())
        .await;
    let winner = decided["matches"][0]["winner"].clone();
    // The feed says what the view says.
    let v = until(s.addr, &id, "finished", WHOLE, |v| {
        v["status"] == "finished"
    })
    .await;
    assert_eq!(v["matches"][0]["winner"], winner);
    assert_eq!(v["champion"], winner);
    s.shutdown.cancel();
}

const DELAY: usize = 3;

fn is_throw(event: &Value) -> bool {
    event["type"] == "game" && event["event"]["type"] == "dice_rolled"
}

/// The stored events of `game` (seq, event), ascending.
async fn stored(s: &Server, game: &str) -> Vec<(u64, Value)> {
    let (_, events) = s.stored_game(game).await;
    events
        .into_iter()
        .map(|e| (e.seq as u64, e.event))
        .collect()
}

/// The organiser's `action` on match `m`: true if done, false if refused because the
/// match is decided (409).
async fn referee(s: &Server, token: &str, id: &str, m: u64, action: &str) -> bool {
    let path = format!("/api/tournaments/{id}/matches/{m}/referee");
    let body = json!({ "action": action }).to_string();
    let (status, v) = call(s.addr, "POST", &path, Some(token), &body).await;
    assert!(status == 200 || status == 409, "{action}: {status} {v}");
    status == 200
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spectator_of_a_tournament_match_never_sees_a_throw_before_n_more_were_made() {
    let s = start(test_config()).await;
    let org = sign_up_at(s.addr, "Organiser").await;
    // Bots at 20 ms: a game of some seconds, with room to look at it.
    let id = create(s.addr, &org, duel(20, DELAY as u32)).await;
    close(s.addr, &org, &id).await;
    let v = until(s.addr, &id, "the game started", WHOLE, |v| {
        v["matches"][0]["game_id"].is_string() && v["matches"][0]["room"].is_string()
    })
    .await;
    let m = &v["matches"][0];
    let match_id = m["id"].as_u64().expect("match id");
    let (room, game) = (
        m["room"].as_str().expect("room").to_owned(),
        m["game_id"].as_str().expect("game").to_owned(),
    );
    let mut watcher = s.client().await;
    watcher.watch(&room).await;
    let (mut checks, mut behind) = (0, 0);
    loop {
        // The referee holds the clock: the bots stop, and what the spectator was sent
        // can be compared with everything the game has made.
        if !referee(&s, &org, &id, match_id, "pause").await {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let log = stored(&s, &game).await;
        if log.iter().any(|(_, e)| e["type"] == "dice_revealed") {
            break;
        }
        assert_answers_ping(&mut watcher).await;
        let shown = watcher.seq;
        let total = log.iter().filter(|(_, e)| is_throw(e)).count();
        let seen = log
            .iter()
            .take_while(|(seq, _)| *seq <= shown)
            .filter(|(_, e)| is_throw(e))
            .count();
        assert!(
            seen == 0 || seen + DELAY <= total,
            "check {checks}: the spectator saw throw {seen} of {total} (seq {shown})"
        );
        behind += usize::from(seen < total);
        // The room view a spectator reads is no further on than its stream.
        assert_eq!(s.room(&room).await["seq"].as_u64(), Some(shown));
        checks += 1;
        if !referee(&s, &org, &id, match_id, "resume").await {
            break;
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
        let v = get(s.addr, &id).await;
        if v["status"] == "finished" || checks >= 40 {
            break;
        }
    }
    assert!(
        checks >= 3 && behind >= 3,
        "{checks} checks, behind {behind} times"
    );
    s.shutdown.cancel();
}
