//! New ratings in the other live rooms of their players (issue 26, `docs/ACCOUNTS.md`):
//! once a rated game's end is stored, every other live room where one of its players
//! holds a seat shows the new rating at once, told to its players and spectators with
//! `rating {room, colour, rating}`; the rating is the one `GET /api/players/{name}`
//! shows after the game.

mod common;

use common::{accounts_server, logged_in, sign_up_at, Client, Server};
use serde_json::{json, Value};

/// The display rating of `name` in `online` (`GET /api/players/{name}`).
async fn online_display(s: &Server, name: &str) -> Value {
    let (status, body) = s.http("GET", &format!("/api/players/{name}"), None).await;
    assert_eq!(status, 200, "{body}");
    let display = body["ratings"]["online"]["display"].clone();
    assert!(display.is_i64(), "{name}: {body}");
    display
}

/// A rated 2-seat `online` game between `yellow` and `red` (bearer tokens), ended at once
/// by red leaving: yellow wins. Returns the room's code once yellow has read the win.
async fn rated_game_red_leaves(s: &Server, yellow: &str, red: &str) -> String {
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
    while r.seq < y.seq {
        r.next().await;
    }
    r.ok(json!({"type": "leave"})).await;
    let won = y
        .until("game_won", |v| Client::is_game_event(v, "game_won"))
        .await;
    assert_eq!(won["event"]["event"]["winner"], "yellow", "{won}");
    code
}

/// The seats' ratings of a room view or snapshot.
fn seat_ratings(view: &Value) -> Vec<Value> {
    view["seats"]
        .as_array()
        .map(|seats| seats.iter().map(|x| x["rating"].clone()).collect())
        .unwrap_or_default()
}

/// Ana and Luis sit in the lobby of rated room B (Ana yellow, Luis red; a guest watches)
/// while they play a rated game in room A: when A's game ends, B's spectator and Ana's
/// connection in B get `rating` for her seat with her new display rating, and B's view
/// shows both players' new ratings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_games_new_ratings_show_at_once_in_the_players_other_rooms() {
    let s = accounts_server().await;
    let ana = sign_up_at(s.addr, "Ana").await;
    let luis = sign_up_at(s.addr, "Luis").await;
    // A first rated game gives both a rating in `online`, so that B's seats show one.
    rated_game_red_leaves(&s, &ana, &luis).await;
    let before = [
        online_display(&s, "Ana").await,
        online_display(&s, "Luis").await,
    ];

    let b = s
        .create_room(json!({"preset": "online", "seats": 2, "rated": true}))
        .await;
    let mut ana_b = logged_in(s.addr, &ana).await;
    ana_b.join(&b, "ignored", Some("yellow")).await;
    let mut luis_b = logged_in(s.addr, &luis).await;
    luis_b.join(&b, "ignored", Some("red")).await;
    let mut watcher = s.client().await;
    let welcome = watcher.watch(&b).await;
    assert_eq!(
        seat_ratings(&welcome["snapshot"]),
        before.to_vec(),
        "{welcome}"
    );

    // The second rated game, in another room: Ana wins again.
    rated_game_red_leaves(&s, &ana, &luis).await;
    let after = [
        online_display(&s, "Ana").await,
        online_display(&s, "Luis").await,
    ];
    assert_ne!(before[0], after[0], "the winner's rating moved");

    let want = json!({"type": "rating", "room": b, "colour": "yellow", "rating": after[0]});
    for c in [&mut watcher, &mut ana_b] {
        let got = c
            .until("rating of yellow", |v| {
                v["type"] == "rating" && v["colour"] == "yellow"
            })
            .await;
        assert_eq!(got, want);
    }
    assert_eq!(seat_ratings(&s.room(&b).await), after.to_vec(), "room B");
    s.shutdown.cancel();
}

/// A casual (unrated) game's end changes no rating: the players' other rooms are told
/// nothing. Ana sits in room B and plays a casual game elsewhere that ends by
/// abandonment; B's spectator then gets a `presence` frame from a new watcher, and no
/// `rating` before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_casual_games_end_tells_the_players_other_rooms_nothing() {
    let s = accounts_server().await;
    let ana = sign_up_at(s.addr, "Ana").await;
    let luis = sign_up_at(s.addr, "Luis").await;
    rated_game_red_leaves(&s, &ana, &luis).await;

    let b = s
        .create_room(json!({"preset": "online", "seats": 2, "rated": true}))
        .await;
    let mut ana_b = logged_in(s.addr, &ana).await;
    ana_b.join(&b, "ignored", Some("yellow")).await;
    let mut watcher = s.client().await;
    watcher.watch(&b).await;

    let casual = s.create_room(json!({"preset": "online", "seats": 2})).await;
    let mut y = logged_in(s.addr, &ana).await;
    y.join(&casual, "ignored", Some("yellow")).await;
    let mut r = logged_in(s.addr, &luis).await;
    r.join(&casual, "ignored", Some("red")).await;
    while y.seq < r.seq {
        y.next().await;
    }
    y.ok(json!({"type": "start"})).await;
    while r.seq < y.seq {
        r.next().await;
    }
    r.ok(json!({"type": "leave"})).await;
    y.until("game_won", |v| Client::is_game_event(v, "game_won"))
        .await;

    // A second spectator arrives: B's presence changes after anything the end of the
    // casual game could have caused there.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let mut second = s.client().await;
    second.watch(&b).await;
    let seen = watcher
        .until("presence with two spectators", |v| {
            assert_ne!(v["type"], "rating", "{v}");
            v["type"] == "presence" && v["spectators"] == 2
        })
        .await;
    assert_eq!(seen["room"], b.as_str());
    s.shutdown.cancel();
}

/// An administrator resets Ana's ratings while she sits in a lobby: her seat there shows
/// no rating at once (`rating` without one, to the spectator too), as her profile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_administrators_reset_clears_the_rating_of_a_seat_in_a_live_room() {
    const ADMIN: &str = "admin-token-for-resets";
    let s = common::start(parchis_server::ServerConfig {
        accounts: parchis_server::config::AccountLimits::unlimited(),
        admin_token: Some(ADMIN.into()),
        ..common::test_config()
    })
    .await;
    let ana = sign_up_at(s.addr, "Ana").await;
    let luis = sign_up_at(s.addr, "Luis").await;
    rated_game_red_leaves(&s, &ana, &luis).await;
    let before = online_display(&s, "Ana").await;

    let b = s
        .create_room(json!({"preset": "online", "seats": 2, "rated": true}))
        .await;
    let mut ana_b = logged_in(s.addr, &ana).await;
    let welcome = ana_b.join(&b, "ignored", Some("yellow")).await;
    assert_eq!(
        welcome["snapshot"]["seats"][0]["rating"], before,
        "{welcome}"
    );
    let mut watcher = s.client().await;
    watcher.watch(&b).await;

    let (status, answer) = common::request_raw(
        s.addr,
        "POST",
        "/admin/accounts/Ana/ratings/reset",
        &[&format!("Authorization: Bearer {ADMIN}")],
        "",
    )
    .await;
    assert_eq!(status, 204, "{answer}");
    let (_, profile) = s.http("GET", "/api/players/Ana", None).await;
    assert_eq!(profile["ratings"]["online"], Value::Null, "{profile}");
    let want = json!({"type": "rating", "room": b, "colour": "yellow"});
    for c in [&mut watcher, &mut ana_b] {
        let got = c.until("rating", |v| v["type"] == "rating").await;
        assert_eq!(got, want);
    }
    assert_eq!(seat_ratings(&s.room(&b).await), [Value::Null], "room B");
    s.shutdown.cancel();
}
