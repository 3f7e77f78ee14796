//! Rated rooms against the real server (issue 26): only logged-in players, one seat per
//! account, no bots; a rated game's end moves the players' ratings exactly as
//! `parchis_ratings::rate` says (shown by `GET /api/players/{username}` and `GET
//! /api/me`); a game ended by abandonment rates the leaver last; the leaderboard lists
//! players from their fifth rated game.

mod common;

use std::net::SocketAddr;

use common::{play_to_end, start, test_config, Client, Server};
use parchis_ratings::{rate, Rating};
use parchis_server::config::AccountLimits;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

async fn server() -> Server {
    start(parchis_server::ServerConfig {
        accounts: AccountLimits::unlimited(),
        ..test_config()
    })
    .await
}

/// Signs `username` up; its bearer token.
async fn sign_up(s: &Server, username: &str) -> String {
    let body = json!({"username": username, "password": "correct horse battery"}).to_string();
    let (status, answer) = s.http("POST", "/api/accounts", Some(&body)).await;
    assert_eq!(status, 201, "{answer}");
    answer["token"].as_str().expect("token").to_owned()
}

/// A WebSocket client logged in with bearer `token`.
async fn logged_in(addr: SocketAddr, token: &str) -> Client {
    let mut request = format!("ws://{addr}/ws")
        .into_client_request()
        .expect("request");
    request.headers_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("header"),
    );
    let (ws, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("ws connect");
    Client::new(ws)
}

/// `GET /api/players/{name}`.
async fn profile(s: &Server, name: &str) -> Value {
    let (status, body) = s.http("GET", &format!("/api/players/{name}"), None).await;
    assert_eq!(status, 200, "{body}");
    body
}

fn rating_of(profile: &Value, pool: &str) -> Rating {
    let r = &profile["ratings"][pool];
    Rating {
        mu: r["mu"]
            .as_f64()
            .unwrap_or_else(|| panic!("no {pool} rating: {profile}")),
        sigma: r["sigma"].as_f64().expect("sigma"),
    }
}

/// A rated 2-seat `online` room with `yellow` and `red` seated (logged-in clients), the
/// game started; the clients `[yellow, red]`.
async fn rated_pair(s: &Server, yellow: &str, red: &str) -> (String, Vec<Client>) {
    let code = s
        .create_room(json!({"preset": "online", "seats": 2, "rated": true}))
        .await;
    let mut y = logged_in(s.addr, yellow).await;
    y.join(&code, "ignored", Some("yellow")).await;
    let mut r = logged_in(s.addr, red).await;
    r.join(&code, "ignored", Some("red")).await;
    while y.seq < r.seq {
        y.next().await;
    }
    y.ok(json!({"type": "start"})).await;
    (code, vec![y, r])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_room_refuses_bots_guests_and_a_second_seat_and_is_listed_rated() {
    let s = server().await;
    for bad in [
        json!({"rated": true, "bots": "greedy"}),
        json!({"rated": true, "on_abandon": "bot"}),
    ] {
        let (status, body) = s.http("POST", "/api/rooms", Some(&bad.to_string())).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_eq!(body["code"], "bad_request", "{body}");
    }
    let code = s.create_room(json!({"seats": 2, "rated": true})).await;
    let casual = s.create_room(json!({"seats": 2})).await;
    let (_, list) = s.http("GET", "/api/rooms", None).await;
    let rated_of = |c: &str| {
        list["rooms"]
            .as_array()
            .expect("rooms")
            .iter()
            .find(|r| r["code"] == c)
            .map(|r| r["rated"].clone())
    };
    assert_eq!(rated_of(&code), Some(json!(true)), "{list}");
    assert_eq!(rated_of(&casual), Some(json!(false)), "{list}");
    assert_eq!(s.room(&code).await["settings"]["rated"], true);

    let mut guest = s.client().await;
    let refusal = guest
        .refused(
            json!({"type": "join", "room": code, "name": "Guest"}),
            "not_logged_in",
        )
        .await;
    assert!(
        refusal["message"].as_str().unwrap_or("").contains("rated"),
        "{refusal}"
    );
    let ana = sign_up(&s, "Ana").await;
    let mut first = logged_in(s.addr, &ana).await;
    let welcome = first.join(&code, "x", Some("yellow")).await;
    assert_eq!(welcome["snapshot"]["seats"][0]["name"], "Ana", "{welcome}");
    let mut second = logged_in(s.addr, &ana).await;
    second
        .refused(
            json!({"type": "join", "room": code, "name": "x", "colour": "red"}),
            "already_joined",
        )
        .await;
    // A casual room still seats guests.
    guest.join(&casual, "Guest", None).await;
    s.shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_game_moves_the_winner_up_and_the_loser_down_as_rate_says() {
    let s = server().await;
    let ana = sign_up(&s, "Ana").await;
    let luis = sign_up(&s, "Luis").await;
    let (_, clients) = rated_pair(&s, &ana, &luis).await;
    let (won, _clients) = play_to_end(clients).await;
    assert_eq!(won["reason"], "goal", "{won}");
    let (winner, loser) = if won["winner"] == "yellow" {
        ("Ana", "Luis")
    } else {
        ("Luis", "Ana")
    };
    let expected = rate(&[(vec![Rating::INITIAL], 1), (vec![Rating::INITIAL], 2)]).expect("rate");
    let w = profile(&s, winner).await;
    let l = profile(&s, loser).await;
    assert_eq!(rating_of(&w, "online"), expected[0][0], "{w}");
    assert_eq!(rating_of(&l, "online"), expected[1][0], "{l}");
    assert!(expected[0][0].mu > Rating::INITIAL.mu && expected[1][0].mu < Rating::INITIAL.mu);
    assert_eq!(w["ratings"]["online"]["games"], 1);
    assert_eq!(
        w["ratings"]["online"]["display"],
        i64::from(expected[0][0].display())
    );
    let history = w["history"].as_array().expect("history");
    assert_eq!(history.len(), 1, "{w}");
    assert_eq!(history[0]["pool"], "online");
    assert_eq!(history[0]["display"], i64::from(expected[0][0].display()));
    assert_eq!(history[0]["game_id"], w["recent_games"][0]["id"], "{w}");
    // `GET /api/me` shows the same rating.
    let token = if winner == "Ana" { &ana } else { &luis };
    let (status, me) = common::get_raw(
        s.addr,
        "/api/me",
        &[&format!("Authorization: Bearer {token}")],
    )
    .await;
    assert_eq!(status, 200, "{me}");
    let me: Value = serde_json::from_str(&me).expect("me json");
    assert_eq!(me["ratings"], w["ratings"], "{me}");
    s.shutdown.cancel();
}

/// Five rated games where Luis leaves at once: each ends by abandonment with Ana first
/// and Luis (the leaver) last. Both appear on the leaderboard from the fifth game only,
/// Ana first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leaderboard_lists_players_from_their_fifth_rated_game() {
    let s = server().await;
    let ana = sign_up(&s, "Ana").await;
    let luis = sign_up(&s, "Luis").await;
    let mut ana_rating = Rating::INITIAL;
    let mut luis_rating = Rating::INITIAL;
    for game in 1..=5 {
        let (_, mut clients) = rated_pair(&s, &ana, &luis).await;
        clients[1].ok(json!({"type": "leave"})).await;
        let won = clients[0]
            .until("game_won", |v| Client::is_game_event(v, "game_won"))
            .await;
        assert_eq!(won["event"]["event"]["winner"], "yellow", "{won}");
        let next = rate(&[(vec![ana_rating], 1), (vec![luis_rating], 2)]).expect("rate");
        ana_rating = next[0][0];
        luis_rating = next[1][0];
        // The end (and its ratings) is durable before `game_won` goes out.
        let a = profile(&s, "Ana").await;
        assert_eq!(rating_of(&a, "online"), ana_rating, "game {game}: {a}");
        assert_eq!(rating_of(&profile(&s, "Luis").await, "online"), luis_rating);
        let (status, board) = s.http("GET", "/api/leaderboard?preset=online", None).await;
        assert_eq!(status, 200, "{board}");
        assert_eq!(board["pool"], "online");
        let names: Vec<&str> = board["players"]
            .as_array()
            .expect("players")
            .iter()
            .filter_map(|p| p["username"].as_str())
            .collect();
        if game < 5 {
            assert!(names.is_empty(), "game {game}: {board}");
        } else {
            assert_eq!(names, ["Ana", "Luis"], "{board}");
            assert_eq!(board["players"][0]["rank"], 1);
            assert_eq!(board["players"][0]["games"], 5);
            assert_eq!(board["players"][0]["mu"], ana_rating.mu);
            assert_eq!(
                board["players"][1]["display"],
                i64::from(luis_rating.display())
            );
        }
    }
    let (_, one) = s.http("GET", "/api/leaderboard?limit=1", None).await;
    assert_eq!(one["players"].as_array().map(Vec::len), Some(1), "{one}");
    for bad in [
        "/api/leaderboard?preset=chess",
        "/api/leaderboard?limit=0",
        "/api/leaderboard?limit=101",
        "/api/leaderboard?pool=online",
    ] {
        let (status, body) = s.http("GET", bad, None).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_eq!(body["code"], "bad_request", "{bad}: {body}");
    }
    // Another pool is empty.
    let (_, pairs) = s.http("GET", "/api/leaderboard?preset=pairs", None).await;
    assert_eq!(pairs, json!({"pool": "pairs", "players": []}));
    s.shutdown.cancel();
}
