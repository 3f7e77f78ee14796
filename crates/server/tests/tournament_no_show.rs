//! A no-show forfeits (issue 27, `docs/TOURNAMENTS.md` "No-shows"): a pair of real
//! accounts registers, confirms and never takes its reserved seats; `no_show_minutes`
//! (1, the shortest) after its match's room opened it forfeits, and the bot team that
//! sat goes through without a game. The wait is the real minute: the director's timer
//! (`next_wake`) acts, not the test.

mod common;

use common::{call, start};
use serde_json::{json, Value};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absent_pair_forfeits_after_the_no_show_time() {
    let s = start(common::test_config()).await;
    let org = common::sign_up_at(s.addr, "Organiser").await;
    let ana = common::sign_up_at(s.addr, "Ana").await;
    let luis = common::sign_up_at(s.addr, "Luis").await;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let settings = json!({
        "name": "Ausentes",
        "preset": "pairs",
        "registration_deadline_ms": now + 3_600_000,
        "no_show_minutes": 1,
        "spectator_delay_throws": 0,
        "bot_fill": {"up_to": 2, "level": "random", "think_ms": 0},
    });
    let (status, created) = call(
        s.addr,
        "POST",
        "/api/tournaments",
        Some(&org),
        &settings.to_string(),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let entries = format!("/api/tournaments/{id}/entries");
    let (status, v) = call(
        s.addr,
        "POST",
        &entries,
        Some(&ana),
        r#"{"partner":"Luis"}"#,
    )
    .await;
    assert_eq!(status, 201, "{v}");
    let team = v["entrants"][0]["id"].as_u64().unwrap();
    let (status, v) = call(
        s.addr,
        "POST",
        &format!("{entries}/{team}/confirm"),
        Some(&luis),
        "",
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let (status, v) = call(
        s.addr,
        "POST",
        &format!("/api/tournaments/{id}/close"),
        Some(&org),
        "",
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let opened = now_of(&v);
    // The match's room is open and waits for Ana and Luis, with its no-show deadline.
    let m = &v["matches"][0];
    assert_eq!(m["status"], "open", "{v:#}");
    let deadline = m["no_show_deadline_ms"]
        .as_i64()
        .expect("a no-show deadline");
    assert!(deadline >= opened + 59_000, "{deadline} vs {opened}");
    let (status, room) = call(
        s.addr,
        "GET",
        &format!("/api/rooms/{}", m["room"].as_str().unwrap()),
        None,
        "",
    )
    .await;
    assert_eq!(status, 200, "{room}");
    assert!(
        room["seats"].as_array().is_some_and(|s| s.is_empty()),
        "nobody sat: {room}"
    );
    // Its view says the seats are reserved (the director starts it): Ana's and Luis's,
    // and the two the bot team takes at the start.
    let reserved = &room["reserved"];
    assert_eq!(reserved["starts_when_seated"], false, "{room}");
    let reserved = reserved["seats"].as_array().expect("reserved seats");
    let mut people: Vec<&str> = reserved
        .iter()
        .filter(|r| r.get("bot").is_none())
        .filter_map(|r| r["name"].as_str())
        .collect();
    people.sort();
    assert_eq!(people, ["Ana", "Luis"], "{room}");
    let bots = reserved.iter().filter(|r| r["bot"] == true).count();
    assert_eq!(bots, 2, "{room}");
    // After the minute: forfeited, the bots' team champion, no game played.
    let end = tokio::time::Instant::now() + Duration::from_secs(120);
    let v = loop {
        let (_, v) = call(s.addr, "GET", &format!("/api/tournaments/{id}"), None, "").await;
        if v["status"] == "finished" {
            break v;
        }
        assert!(tokio::time::Instant::now() < end, "no forfeit: {v:#}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let m = &v["matches"][0];
    assert_eq!(m["status"], "forfeited", "{v:#}");
    assert!(m["game_id"].is_null(), "{m}");
    assert_ne!(v["champion"].as_u64(), Some(team), "{v:#}");
    assert!(v["champion"].is_u64(), "{v:#}");
    s.shutdown.cancel();
}

/// The time of the view's answer, near enough: now.
fn now_of(_v: &Value) -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        - 1_000
}
