//! `GET /api/games`: typed bodies (parsed into `parchis_protocol` types), newest first,
//! cursor paging, filters by rule set, result, start time and room, and bad queries; the
//! game detail and the text export with its date tag, termination and bot seats.

mod common;

use common::{play_to_end, request_raw, Client};
use parchis_protocol::{GameDetail, GameEndReason, GameList, ResultReason};
use parchis_server::ServerConfig;
use serde_json::json;

const TOKEN: &str = "games-api-admin";

async fn list(server: &common::Server, query: &str) -> GameList {
    let (status, body) =
        request_raw(server.addr, "GET", &format!("/api/games{query}"), &[], "").await;
    assert_eq!(status, 200, "{query}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{query}: not a GameList ({e}): {body}"))
}

async fn refused(server: &common::Server, query: &str) -> String {
    let (status, body) = server
        .http("GET", &format!("/api/games{query}"), None)
        .await;
    assert_eq!(status, 400, "{query}: {body}");
    assert_eq!(body["code"], "bad_request", "{body}");
    body["message"].as_str().unwrap_or_default().to_owned()
}

fn ids(list: &GameList) -> Vec<String> {
    list.games.iter().map(|g| g.id.clone()).collect()
}

/// The game id of a room's current game (from the live room view).
async fn game_of(server: &common::Server, code: &str) -> String {
    server.room(code).await["game"]["game_id"]
        .as_str()
        .expect("a game")
        .to_owned()
}

/// The four games of [`games_list_pages_and_filters_typed_bodies`], oldest first.
struct Games {
    abandoned_room: String,
    abandoned: String,
    completed: String,
    running: String,
    closed: String,
    /// Newest first.
    newest_first: Vec<String>,
}

/// An abandoned game (a player leaves a two-player game), a completed one (played to the
/// end), a running classic one and one against a bot closed by an admin. Also returns the
/// running game's players, who keep it going.
async fn four_games(server: &common::Server) -> (Games, Vec<Client>) {
    // 1: abandoned (a player leaves a two-player game).
    let (abandoned_room, mut clients) =
        common::seated_game(server, json!({"seats": 2}), &["yellow", "red"]).await;
    let abandoned = game_of(server, &abandoned_room).await;
    let mut leaver = clients.remove(0);
    leaver.seq = clients[0].seq.max(leaver.seq);
    leaver.cmd(json!({"type": "leave"})).await;
    clients[0]
        .until("game_won", |v| Client::is_game_event(v, "game_won"))
        .await;
    // 2: completed (played to the end).
    let (completed_room, players) =
        common::seated_game(server, json!({"seats": 2}), &["yellow", "red"]).await;
    let completed = game_of(server, &completed_room).await;
    play_to_end(players).await;
    // 3: running, classic rules.
    let (running_room, running_players) = common::seated_game(
        server,
        json!({"seats": 2, "preset": "classic"}),
        &["yellow", "red"],
    )
    .await;
    let running = game_of(server, &running_room).await;
    // 4: against a bot, closed by an admin.
    let bot_room = server
        .create_room(json!({"seats": 2, "bots": "random", "bot_think_ms": 0}))
        .await;
    let mut alone = server.client().await;
    alone.join(&bot_room, "Ana", Some("yellow")).await;
    alone.ok(json!({"type": "start"})).await;
    let closed = game_of(server, &bot_room).await;
    let (status, body) = request_raw(
        server.addr,
        "POST",
        &format!("/admin/rooms/{bot_room}/close"),
        &[&format!("Authorization: Bearer {TOKEN}")],
        "",
    )
    .await;
    assert_eq!(status, 200, "{body}");

    let newest_first = vec![
        closed.clone(),
        running.clone(),
        completed.clone(),
        abandoned.clone(),
    ];
    let games = Games {
        abandoned_room,
        abandoned,
        completed,
        running,
        closed,
        newest_first,
    };
    (games, running_players)
}

/// `GET` `path`: its status and body.
async fn get(server: &common::Server, path: &str) -> (u16, String) {
    request_raw(server.addr, "GET", path, &[], "").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_list_pages_and_filters_typed_bodies() {
    let server = common::start(ServerConfig {
        admin_token: Some(TOKEN.into()),
        ..common::test_config()
    })
    .await;
    let (g, _running_players) = four_games(&server).await;
    let all = list_all(&server, &g).await;
    pages_and_filters(&server, &g, &all).await;
    bad_queries(&server).await;
    let detail = detail_and_replay(&server, &g).await;
    exports(&server, &g, &detail).await;
}

/// Everything, newest first, with each game's end reason, result and clock.
async fn list_all(server: &common::Server, g: &Games) -> GameList {
    let all = list(server, "").await;
    assert_eq!(ids(&all), g.newest_first);
    assert_eq!(all.next_cursor, None);
    let reasons: Vec<_> = all.games.iter().map(|g| g.reason).collect();
    assert_eq!(
        reasons,
        [
            Some(GameEndReason::ClosedByAdmin),
            None,
            Some(GameEndReason::Completed),
            Some(GameEndReason::Abandoned)
        ]
    );
    let results: Vec<_> = all
        .games
        .iter()
        .map(|g| g.result.map(|r| (r.winner, r.reason)))
        .collect();
    assert_eq!(results[0], Some((None, ResultReason::ClosedByAdmin)));
    assert_eq!(results[1], None);
    assert_eq!(results[2].map(|r| r.1), Some(ResultReason::Goal));
    assert_eq!(
        results[3],
        Some((Some(parchis_protocol::Colour::Red), ResultReason::Forfeit))
    );
    assert!(
        all.games[1].deadline_ms.is_some(),
        "the running game's clock"
    );

    all
}

/// Cursor paging and the filters by result, rule set, start time and room.
async fn pages_and_filters(server: &common::Server, g: &Games, all: &GameList) {
    let newest_first = &g.newest_first;
    let (running, completed, abandoned, closed) = (
        g.running.as_str(),
        g.completed.as_str(),
        g.abandoned.as_str(),
        g.closed.as_str(),
    );
    // Pages of three, then one; the cursor carries on exactly after the last game.
    let first = list(server, "?limit=3").await;
    assert_eq!(ids(&first), newest_first[..3]);
    let cursor = first.next_cursor.clone().expect("a next page");
    let second = list(server, &format!("?limit=3&cursor={cursor}")).await;
    assert_eq!(ids(&second), newest_first[3..]);
    assert_eq!(second.next_cursor, None);
    let exact = list(server, "?limit=4").await;
    assert_eq!((exact.games.len(), exact.next_cursor), (4, None));

    // Filters.
    assert_eq!(ids(&list(server, "?result=running").await), [running]);
    assert_eq!(ids(&list(server, "?result=completed").await), [completed]);
    assert_eq!(ids(&list(server, "?result=abandoned").await), [abandoned]);
    assert_eq!(
        ids(&list(server, "?result=closed_by_admin").await),
        [closed]
    );
    assert_eq!(
        ids(&list(server, "?result=finished").await),
        [closed, completed, abandoned]
    );
    assert_eq!(ids(&list(server, "?rules=classic").await), [running]);
    assert_eq!(
        ids(&list(server, "?rules=online&result=finished&limit=1").await),
        [closed]
    );
    let since = all.games[1].created_at_ms;
    let recent = list(server, &format!("?since={since}")).await;
    assert!(
        ids(&recent).starts_with(&[closed.to_owned(), running.to_owned()]),
        "{recent:?}"
    );
    assert!(recent.games.iter().all(|g| g.created_at_ms >= since));
    let room_query = format!("?room={}", g.abandoned_room.to_lowercase());
    assert_eq!(ids(&list(server, &room_query).await), [abandoned]);
    assert!(list(server, "?since=99999999999999").await.games.is_empty());
}

/// Bad queries are refused with `bad_request`.
async fn bad_queries(server: &common::Server) {
    assert!(refused(server, "?limit=0").await.contains("limit"));
    assert!(refused(server, "?limit=101").await.contains("limit"));
    refused(server, "?rules=nope").await;
    refused(server, "?result=won").await;
    refused(server, "?cursor=garbage").await;
    refused(server, "?since=yesterday").await;
    refused(server, "?colour=red").await;
    // A room that is not a room code.
    for room in ["", "%00", "AB%2FCD", &"A".repeat(40)] {
        assert!(
            refused(server, &format!("?room={room}"))
                .await
                .contains("room"),
            "{room}"
        );
    }
    // A rule-set name with an unencoded `+` (a space in a query string) is the name.
    assert!(list(server, "?rules=classic+two-out")
        .await
        .games
        .is_empty());
    // GET /api/rooms refuses what it does not know too.
    let (status, body) = get(server, "/api/rooms?foo=1").await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("bad_request"), "{body}");
}

/// The detail (typed, the bot seat marked) and the replay (step 0 the start, one step
/// per action). Returns the closed game's detail.
async fn detail_and_replay(server: &common::Server, g: &Games) -> GameDetail {
    let (closed, completed) = (&g.closed, &g.completed);
    let (status, body) = get(server, &format!("/api/games/{closed}")).await;
    assert_eq!(status, 200, "{body}");
    let detail: GameDetail = serde_json::from_str(&body).expect("a GameDetail");
    assert_eq!(detail.game.reason, Some(GameEndReason::ClosedByAdmin));
    let mut bots: Vec<_> = detail
        .players
        .iter()
        .map(|p| (p.name.as_str(), p.bot))
        .collect();
    bots.sort_by_key(|b| b.0);
    assert_eq!(
        bots,
        [
            ("Ana", None),
            ("Random bot 1", Some(parchis_protocol::BotLevel::Random))
        ]
    );
    assert!(detail
        .events
        .iter()
        .any(|e| matches!(e.event, parchis_protocol::RoomEvent::GameStarted { .. })));

    // Replay: typed, step 0 the start, one step per action, the bot seat marked.
    let (status, body) = get(server, &format!("/api/games/{completed}/replay")).await;
    assert_eq!(status, 200, "{body}");
    let replay: parchis_protocol::GameReplay = serde_json::from_str(&body).expect("a GameReplay");
    assert_eq!(&replay.game.id, completed);
    assert_eq!(replay.steps[0].action, None);
    assert!(replay.steps.len() > 20, "{} steps", replay.steps.len());
    assert!(replay.steps[1..].iter().all(|s| s.action.is_some()));
    // The rule set is given once: no step's position repeats it, and with it the first
    // step's board state is the game_started position.
    let raw: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    let steps = raw["steps"].as_array().expect("steps");
    assert!(
        steps.iter().all(|s| s["position"].get("rules").is_none()),
        "a step repeats the rules"
    );
    let (_, body) = get(server, &format!("/api/games/{completed}")).await;
    let completed_detail: GameDetail = serde_json::from_str(&body).expect("a GameDetail");
    let started = completed_detail
        .events
        .iter()
        .find_map(|e| match &e.event {
            parchis_protocol::RoomEvent::GameStarted { position, .. } => Some(position.clone()),
            _ => None,
        })
        .expect("game_started");
    assert_eq!(replay.rules, started.rules);
    assert_eq!(
        parchis_engine::Position::from_state(replay.rules, replay.steps[0].position.clone()),
        started
    );
    let (_, body) = get(server, &format!("/api/games/{closed}/replay")).await;
    let replay: parchis_protocol::GameReplay = serde_json::from_str(&body).expect("a GameReplay");
    assert!(replay
        .players
        .iter()
        .any(|p| p.bot == Some(parchis_protocol::BotLevel::Random)));

    detail
}

/// The exports: date, termination, bot seat.
async fn exports(server: &common::Server, g: &Games, detail: &GameDetail) {
    let (closed, abandoned) = (&g.closed, &g.abandoned);
    let (status, export) = get(server, &format!("/api/games/{closed}/export")).await;
    assert_eq!(status, 200, "{export}");
    let date = parchis_server::games::date_tag(detail.game.created_at_ms);
    assert!(export.contains(&format!("[Date \"{date}\"]")), "{export}");
    assert!(
        export.contains("[Termination \"closed_by_admin\"]"),
        "{export}"
    );
    assert!(export.contains("[Result \"*\"]"), "{export}");
    assert!(export.contains("[Yellow \"Ana\"]"), "{export}");
    assert!(export.contains("[Blue \"Random bot 1\"]"), "{export}");
    assert!(export.contains("[BlueBot \"random\"]"), "{export}");
    assert!(!export.contains("YellowBot"), "{export}");
    let parsed: parchis_engine::GameRecord = export.parse().expect("the export parses");
    assert!(parsed
        .tags
        .iter()
        .any(|(k, v)| k == "BlueBot" && v == "random"));
    let (_, export) = get(server, &format!("/api/games/{abandoned}/export")).await;
    assert!(export.contains("[Termination \"abandoned\"]"), "{export}");
    assert!(export.contains("[Result \"R forfeit\"]"), "{export}");
}

/// The game of a private room is not listed (its code is the invitation) but is found by
/// its code; the running game of a room without spectators cannot be read over HTTP
/// (detail, replay, export: `403 spectators_not_allowed`, as a `watch` of the room is
/// refused) until it has ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_rooms_are_not_listed_and_rooms_without_spectators_are_not_shown_live() {
    let server = common::start(common::test_config()).await;
    let (private, _players) = common::seated_game(
        &server,
        json!({"seats": 2, "public": false, "turn_clock_secs": 600}),
        &["yellow", "red"],
    )
    .await;
    let private_game = game_of(&server, &private).await;
    let (open, _players) = common::seated_game(
        &server,
        json!({"seats": 2, "turn_clock_secs": 600}),
        &["yellow", "red"],
    )
    .await;
    let open_game = game_of(&server, &open).await;
    let (closed, hidden) = common::seated_game(
        &server,
        json!({"seats": 2, "spectators": false, "turn_clock_secs": 600}),
        &["yellow", "red"],
    )
    .await;
    let hidden_game = game_of(&server, &closed).await;

    let listed = |body: &str| -> Vec<String> {
        let list: GameList = serde_json::from_str(body).expect("a GameList");
        list.games.into_iter().map(|g| g.room).collect()
    };
    for path in ["/api/games", "/api/games?result=running&limit=100"] {
        let (status, body) = get(&server, path).await;
        assert_eq!(status, 200, "{body}");
        let rooms = listed(&body);
        assert!(rooms.contains(&open), "{path}: {rooms:?}");
        assert!(rooms.contains(&closed), "{path}: {rooms:?}");
        assert!(
            !rooms.contains(&private),
            "{path} lists a private room: {rooms:?}"
        );
    }
    let (_, body) = get(&server, &format!("/api/games?room={private}")).await;
    assert_eq!(listed(&body), vec![private.clone()], "found by its code");
    let (status, _) = get(&server, &format!("/api/games/{private_game}")).await;
    assert_eq!(status, 200, "a private room's game by its id");
    let (status, _) = get(&server, &format!("/api/games/{open_game}/replay")).await;
    assert_eq!(status, 200);

    for tail in ["", "/replay", "/export"] {
        let (status, body) = get(&server, &format!("/api/games/{hidden_game}{tail}")).await;
        assert_eq!(status, 403, "{tail}: {body}");
        assert!(body.contains("spectators_not_allowed"), "{tail}: {body}");
    }
    play_to_end(hidden).await;
    for tail in ["", "/replay", "/export"] {
        let (status, body) = get(&server, &format!("/api/games/{hidden_game}{tail}")).await;
        assert_eq!(status, 200, "{tail} once the game has ended: {body}");
    }
}
