//! Quick emotes, the away countdown and the client config (issue 29), with real WebSocket
//! clients against the real server: an emote reaches every player and spectator, a
//! spectator's is refused, a seat is limited to 3 in 10 s, unknown ids are refused; a
//! dropped player is listed `away` with the end of its grace period in presence and the
//! room view; `GET /api/config` names the public URL for invite links.

mod common;

use common::{seated_game, start, test_config};
use parchis_server::ServerConfig;
use serde_json::{json, Value};

fn emote_frame(v: &Value) -> bool {
    v["type"] == "emote"
}

#[tokio::test]
async fn an_emote_reaches_players_and_spectators_and_spectators_cannot_send() {
    let server = start(test_config()).await;
    let (code, mut p) = seated_game(
        &server,
        json!({"seats": 2, "turn_clock_secs": 600}),
        &["yellow", "red"],
    )
    .await;
    let mut w = server.client().await;
    w.watch(&code).await;

    p[1].ok(json!({"type": "emote", "emote": "good_luck"}))
        .await;
    for c in [&mut p[0], &mut w] {
        let e = c.until("the emote", emote_frame).await;
        assert_eq!(e["colour"], "red", "{e}");
        assert_eq!(e["emote"], "good_luck", "{e}");
        assert_eq!(e["room"], code.as_str(), "{e}");
        assert!(e.get("seq").is_none(), "not part of the event stream: {e}");
    }
    // A spectator: refused with a clear error, and nothing reaches the players.
    let r = w
        .refused(
            json!({"type": "emote", "emote": "hello"}),
            "spectator_cannot_act",
        )
        .await;
    assert_eq!(r["message"], "spectators cannot send emotes");
    // No free text: an id outside the list is a bad request.
    p[0].refused(
        json!({"type": "emote", "emote": "you are bad"}),
        "bad_request",
    )
    .await;
    // The next emote yellow gets is its own (sent before its `ok`), not the spectator's.
    let req = p[0].cmd(json!({"type": "emote", "emote": "thanks"})).await;
    let next = p[0].until("an emote", emote_frame).await;
    assert_eq!(next["colour"], "yellow", "{next}");
    assert_eq!(next["emote"], "thanks");
    assert_eq!(p[0].reply(req).await["type"], "ok");
}

#[tokio::test]
async fn emotes_are_limited_per_seat() {
    let server = start(test_config()).await;
    let (_code, mut p) = seated_game(
        &server,
        json!({"seats": 2, "turn_clock_secs": 600}),
        &["yellow", "red"],
    )
    .await;
    for emote in ["hello", "wow", "oops"] {
        p[0].ok(json!({"type": "emote", "emote": emote})).await;
    }
    let r = p[0]
        .refused(json!({"type": "emote", "emote": "sorry"}), "rate_limited")
        .await;
    assert_eq!(r["message"], "at most 3 emotes per seat in 10 s");
    // Red has its own count; red hears yellow's three, then its own.
    let req = p[1]
        .cmd(json!({"type": "emote", "emote": "well_played"}))
        .await;
    let mut seen = Vec::new();
    while seen.len() < 4 {
        let e = p[1].until("emotes", emote_frame).await;
        seen.push(format!(
            "{}:{}",
            e["colour"].as_str().unwrap_or("?"),
            e["emote"].as_str().unwrap_or("?")
        ));
    }
    assert_eq!(
        seen,
        [
            "yellow:hello",
            "yellow:wow",
            "yellow:oops",
            "red:well_played"
        ]
    );
    assert_eq!(p[1].reply(req).await["type"], "ok");
}

#[tokio::test]
async fn a_dropped_player_is_away_until_its_grace_period_ends() {
    let server = start(test_config()).await;
    let (code, mut p) = seated_game(
        &server,
        json!({"seats": 2, "turn_clock_secs": 600, "disconnect_grace_secs": 90, "on_abandon": "bot"}),
        &["yellow", "red"],
    )
    .await;
    let red = p.pop().expect("red");
    let before = chrono_ms();
    drop(red);
    let presence = p[0]
        .until("presence with red away", |v| {
            v["type"] == "presence" && v["away"].as_array().is_some_and(|a| !a.is_empty())
        })
        .await;
    let after = chrono_ms();
    let away = &presence["away"][0];
    assert_eq!(away["colour"], "red", "{presence}");
    let until = away["until_ms"].as_i64().expect("until_ms");
    assert!(
        until >= before + 90_000 && until <= after + 90_000,
        "the grace period's end: {until} within [{}, {}]",
        before + 90_000,
        after + 90_000
    );
    let view = server.room(&code).await;
    let seat = view["seats"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["colour"] == "red"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(seat["away_until_ms"].as_i64(), Some(until), "{view}");
    let yellow = view["seats"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["colour"] == "yellow"))
        .cloned()
        .unwrap_or_default();
    assert!(yellow.get("away_until_ms").is_none(), "connected: {yellow}");
}

fn chrono_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

#[tokio::test]
async fn the_client_config_names_the_public_url() {
    let server = start(ServerConfig {
        public_url: "http://192.168.1.20:8080/".into(),
        ..test_config()
    })
    .await;
    let (status, body) = server.http("GET", "/api/config", None).await;
    assert_eq!(status, 200);
    assert_eq!(body, json!({"public_url": "http://192.168.1.20:8080"}));
    let wildcard = start(ServerConfig {
        public_url: "http://0.0.0.0:8080".into(),
        ..test_config()
    })
    .await;
    let (status, body) = wildcard.http("GET", "/api/config", None).await;
    assert_eq!(status, 200);
    assert_eq!(body, json!({"public_url": null}));
}
