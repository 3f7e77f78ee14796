//! `GET /api/rooms?status=playing`: public games in progress that spectators may watch.

mod common;

use common::{seated_game, start, test_config};
use serde_json::{json, Value};

fn settings(extra: Value) -> Value {
    let mut s = json!({"seats": 2, "turn_clock_secs": 600, "disconnect_grace_secs": 600});
    if let (Some(s), Some(extra)) = (s.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            s.insert(k.clone(), v.clone());
        }
    }
    s
}

fn codes(list: &Value) -> Vec<String> {
    list["rooms"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r["code"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn status_playing_lists_only_public_watchable_games_in_progress() {
    let server = start(test_config()).await;
    let lobby = server.create_room(settings(json!({}))).await;
    let (live, _players) = seated_game(&server, settings(json!({})), &["yellow", "red"]).await;
    let (private, _p2) = seated_game(
        &server,
        settings(json!({"public": false})),
        &["yellow", "red"],
    )
    .await;
    let (closed, _p3) = seated_game(
        &server,
        settings(json!({"spectators": false})),
        &["yellow", "red"],
    )
    .await;
    assert_eq!(server.room(&live).await["status"], "playing");
    assert_eq!(server.room(&private).await["status"], "playing");
    assert_eq!(server.room(&closed).await["status"], "playing");

    let (status, list) = server.http("GET", "/api/rooms?status=playing", None).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(codes(&list), vec![live.clone()], "{list}");
    let entry = &list["rooms"][0];
    assert_eq!(entry["status"], "playing");
    assert_eq!(entry["seats"], 2);
    assert_eq!(entry["taken"], 2);
    assert_eq!(entry["free"], 0);
    assert_eq!(entry["preset"], "online");

    // The default list is unchanged: the lobby room only, no game in progress.
    for path in ["/api/rooms", "/api/rooms?status=lobby"] {
        let (status, list) = server.http("GET", path, None).await;
        assert_eq!(status, 200, "{list}");
        assert_eq!(codes(&list), vec![lobby.clone()], "{path}: {list}");
        assert_eq!(list["rooms"][0]["status"], "lobby");
    }
}

#[tokio::test]
async fn an_unknown_status_is_a_bad_request() {
    let server = start(test_config()).await;
    for path in [
        "/api/rooms?status=nope",
        "/api/rooms?status=finished",
        "/api/rooms?status=",
    ] {
        let (status, err) = server.http("GET", path, None).await;
        assert_eq!(status, 400, "{path}: {err}");
        assert_eq!(err["code"], "bad_request", "{path}: {err}");
        assert!(err["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
}
