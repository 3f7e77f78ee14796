//! Rated rooms against the real server (issue 26): only logged-in players, one seat per
//! account, no bots; a rated game's end moves the players' ratings exactly as
//! `parchis_ratings::rate` says (shown by `GET /api/players/{username}` and `GET
//! /api/me`); a game ended by abandonment rates the leaver last; the leaderboard lists
//! players from their fifth rated game.

mod common;

use common::{
    accounts_server, logged_in, play_to_end, sign_up_at, start, test_config, Client, Server,
};
use parchis_ratings::{rate, Rating};
use parchis_server::config::AccountLimits;
use serde_json::{json, Value};

/// `GET /api/players/{name}`.
async fn profile(s: &Server, name: &str) -> Value {
    let (status, body) = s.http("GET", &format!("/api/players/{name}"), None).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// `a` and `b` equal but for the last bits a JSON round trip may change (serde_json
/// parses floats to within one ulp): 1e-12 relative.
fn assert_same(a: Rating, b: Rating, what: &str) {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * y.abs().max(1.0);
    assert!(
        close(a.mu, b.mu) && close(a.sigma, b.sigma),
        "{what}: {a:?} != {b:?}"
    );
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
    let s = accounts_server().await;
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
    let ana = sign_up_at(s.addr, "Ana").await;
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

    // The lobby lists who sits: the account's username, a guest's name only.
    let players_of = |list: &Value, c: &str| {
        list["rooms"]
            .as_array()
            .and_then(|rooms| rooms.iter().find(|r| r["code"] == c))
            .map(|r| r["players"].clone())
    };
    let want_rated = json!([{"colour": "yellow", "name": "Ana", "username": "Ana", "bot": false}]);
    let mut list = Value::Null;
    for _ in 0..50 {
        list = s.http("GET", "/api/rooms", None).await.1;
        if players_of(&list, &code) == Some(want_rated.clone())
            && players_of(&list, &casual)
                .is_some_and(|p| p.as_array().is_some_and(|a| !a.is_empty()))
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(players_of(&list, &code), Some(want_rated), "{list}");
    let casual_players = players_of(&list, &casual).expect("casual listed");
    assert_eq!(casual_players[0]["name"], "Guest", "{list}");
    assert_eq!(casual_players[0]["username"], Value::Null, "{list}");
    s.shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_game_moves_the_winner_up_and_the_loser_down_as_rate_says() {
    let s = accounts_server().await;
    let ana = sign_up_at(s.addr, "Ana").await;
    let luis = sign_up_at(s.addr, "Luis").await;
    let (first, clients) = rated_pair(&s, &ana, &luis).await;
    // Before any rated game the seats show no rating.
    let seats = s.room(&first).await["seats"].clone();
    assert_eq!(
        (seats[0].get("rating"), seats[1].get("rating")),
        (None, None),
        "{seats}"
    );
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
    assert_same(rating_of(&w, "online"), expected[0][0], &format!("{w}"));
    assert_same(rating_of(&l, "online"), expected[1][0], &format!("{l}"));
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

    // A new rated room's view and listing show both players' new display ratings.
    let code = s
        .create_room(json!({"preset": "online", "seats": 2, "rated": true}))
        .await;
    let mut y = logged_in(s.addr, &ana).await;
    y.join(&code, "ignored", Some("yellow")).await;
    let mut r = logged_in(s.addr, &luis).await;
    let welcome = r.join(&code, "ignored", Some("red")).await;
    let display = |name: &str| {
        let i = usize::from(name == loser);
        json!(i64::from(expected[i][0].display()))
    };
    let seats = welcome["snapshot"]["seats"].clone();
    assert_eq!(seats[0]["name"], "Ana", "{seats}");
    assert_eq!(
        (seats[0]["rating"].clone(), seats[1]["rating"].clone()),
        (display("Ana"), display("Luis")),
        "{seats}"
    );
    assert_ne!(seats[0]["rating"], seats[1]["rating"], "{seats}");
    assert_eq!(s.room(&code).await["seats"], seats);
    let (_, list) = s.http("GET", "/api/rooms", None).await;
    let listed = list["rooms"]
        .as_array()
        .and_then(|rooms| rooms.iter().find(|x| x["code"] == code))
        .map(|x| x["players"].clone());
    assert_eq!(
        listed.map(|p| (p[0]["rating"].clone(), p[1]["rating"].clone())),
        Some((display("Ana"), display("Luis"))),
        "{list}"
    );
    s.shutdown.cancel();
}

/// Five rated games where Luis leaves at once: each ends by abandonment with Ana first
/// and Luis (the leaver) last. Both appear on the leaderboard from the fifth game only,
/// Ana first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leaderboard_lists_players_from_their_fifth_rated_game() {
    let s = accounts_server().await;
    let ana = sign_up_at(s.addr, "Ana").await;
    let luis = sign_up_at(s.addr, "Luis").await;
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
        assert_same(
            rating_of(&a, "online"),
            ana_rating,
            &format!("game {game}: {a}"),
        );
        assert_same(
            rating_of(&profile(&s, "Luis").await, "online"),
            luis_rating,
            "Luis",
        );
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
            let top = board["players"][0]["mu"].as_f64().expect("mu");
            assert!((top - ana_rating.mu).abs() < 1e-12, "{board}");
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

/// A rated room of `preset` with one logged-in player per `(token, colour)`, the first the
/// creator, the game started; the clients in that order, each caught up with the joins.
async fn rated_room(s: &Server, preset: &str, seats: &[(&str, &str)]) -> Vec<Client> {
    let code = s
        .create_room(json!({"preset": preset, "seats": seats.len(), "rated": true}))
        .await;
    let mut clients = Vec::new();
    for (token, colour) in seats {
        let mut c = logged_in(s.addr, token).await;
        c.join(&code, "ignored", Some(colour)).await;
        clients.push(c);
    }
    let last = clients.last().map(|c| c.seq).unwrap_or(0);
    for c in clients.iter_mut() {
        while c.seq < last {
            c.next().await;
        }
    }
    clients[0].ok(json!({"type": "start"})).await;
    clients
}

/// Four players of `online`: blue, red and green leave at once, in that order; the
/// game ends when yellow is alone. Yellow is first, the three leavers share the last
/// place (D-40: abandoned, and tied on pieces and squares), rated as `rate` says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_four_player_rated_game_ended_by_abandonment_places_the_leavers_last() {
    let s = accounts_server().await;
    let names = ["Ana", "Bea", "Carla", "Dani"];
    let mut tokens = Vec::new();
    for n in names {
        tokens.push(sign_up_at(s.addr, n).await);
    }
    let colours = ["yellow", "blue", "red", "green"];
    let seats: Vec<(&str, &str)> = tokens.iter().map(String::as_str).zip(colours).collect();
    let mut clients = rated_room(&s, "online", &seats).await;
    for leaver in clients.iter_mut().skip(1) {
        leaver.ok(json!({"type": "leave"})).await;
    }
    let won = clients[0]
        .until("game_won", |v| Client::is_game_event(v, "game_won"))
        .await;
    assert_eq!(won["event"]["event"]["winner"], "yellow", "{won}");
    let i = Rating::INITIAL;
    let expected = rate(&[(vec![i], 1), (vec![i], 2), (vec![i], 2), (vec![i], 2)]).expect("rate");
    for (k, name) in names.iter().enumerate() {
        let p = profile(&s, name).await;
        assert_same(
            rating_of(&p, "online"),
            expected[k][0],
            &format!("{name}: {p}"),
        );
    }
    assert!(expected[0][0].mu > i.mu && expected[1][0].mu < i.mu);
    s.shutdown.cancel();
}

/// `pairs`: blue and green (one team) both leave; yellow and red win together and
/// their ratings move together, as `rate` says of two teams.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_pairs_game_moves_partners_together() {
    let s = accounts_server().await;
    let names = ["Ana", "Bea", "Carla", "Dani"];
    let mut tokens = Vec::new();
    for n in names {
        tokens.push(sign_up_at(s.addr, n).await);
    }
    // Ana yellow and Carla red (team 0); Bea blue and Dani green (team 1).
    let colours = ["yellow", "blue", "red", "green"];
    let seats: Vec<(&str, &str)> = tokens.iter().map(String::as_str).zip(colours).collect();
    let mut clients = rated_room(&s, "pairs", &seats).await;
    clients[1].ok(json!({"type": "leave"})).await;
    clients[3].ok(json!({"type": "leave"})).await;
    let won = clients[0]
        .until("game_won", |v| Client::is_game_event(v, "game_won"))
        .await;
    assert!(
        ["yellow", "red"].contains(&won["event"]["event"]["winner"].as_str().unwrap_or("")),
        "{won}"
    );
    let i = Rating::INITIAL;
    let expected = rate(&[(vec![i, i], 1), (vec![i, i], 2)]).expect("rate");
    let rating = |p: &Value| rating_of(p, "pairs");
    assert_same(rating(&profile(&s, "Ana").await), expected[0][0], "Ana");
    assert_same(rating(&profile(&s, "Carla").await), expected[0][1], "Carla");
    assert_same(rating(&profile(&s, "Bea").await), expected[1][0], "Bea");
    assert_same(rating(&profile(&s, "Dani").await), expected[1][1], "Dani");
    assert_eq!(expected[0][0], expected[0][1], "partners move together");
    assert!(expected[0][0].mu > i.mu && expected[1][0].mu < i.mu);
    s.shutdown.cancel();
}

/// A 4-player `online` rated game played to its end (not ended by abandonment): the
/// first to bring every piece home wins and the game ends there (`online`); the others
/// are placed by pieces in the goal, then squares still to travel (D-40). Every player's
/// rating is what `rate` gives for the places the engine's `standings` find in the final
/// position (read back from the room view).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_four_player_rated_online_game_played_to_its_end_rates_every_place() {
    let s = accounts_server().await;
    let names = ["Ana", "Bea", "Carla", "Dani"];
    let mut tokens = Vec::new();
    for n in names {
        tokens.push(sign_up_at(s.addr, n).await);
    }
    let colours = ["yellow", "blue", "red", "green"];
    let seats: Vec<(&str, &str)> = tokens.iter().map(String::as_str).zip(colours).collect();
    let clients = rated_room(&s, "online", &seats).await;
    let code = clients[0].room.clone();
    let (won, _clients) = play_to_end(clients).await;
    assert_eq!(won["reason"], "goal", "{won}");
    let view = s.room(&code).await;
    let position: parchis_engine::Position =
        serde_json::from_value(view["game"]["position"].clone()).expect("the final position");
    let game = parchis_engine::Game::try_from(position).expect("a game");
    let standings = parchis_engine::standings(&game, &[]);
    assert_eq!(standings.len(), 4);
    assert_eq!(
        standings[0].colour.to_string(),
        won["winner"],
        "{standings:?}"
    );
    let units = parchis_ratings::units(&standings);
    let i = Rating::INITIAL;
    let places: Vec<(Vec<Rating>, u8)> = units.iter().map(|u| (vec![i], u.place)).collect();
    let expected = rate(&places).expect("rate");
    for (unit, rating) in units.iter().zip(&expected) {
        let colour = unit.colours[0].to_string();
        let k = colours.iter().position(|c| *c == colour).expect("seated");
        let p = profile(&s, names[k]).await;
        assert_same(
            rating_of(&p, "online"),
            rating[0],
            &format!("{} ({colour}, place {}): {p}", names[k], unit.place),
        );
        assert_eq!(p["ratings"]["online"]["games"], 1, "{p}");
    }
    // The winner went up, the last place down.
    assert!(expected[0][0].mu > i.mu, "{expected:?}");
    assert!(expected[3][0].mu < i.mu, "{expected:?}");
    s.shutdown.cancel();
}

/// The admin API resets an account's ratings (issue 26): after a rated game the loser's
/// ratings and history are gone (the winner's stay), and the answer is logged; the admin
/// token is needed, an unknown username is 404.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_administrator_resets_an_accounts_ratings() {
    const ADMIN: &str = "admin-token-for-ratings";
    let s = start(parchis_server::ServerConfig {
        accounts: AccountLimits::unlimited(),
        admin_token: Some(ADMIN.into()),
        ..test_config()
    })
    .await;
    let ana = sign_up_at(s.addr, "Ana").await;
    let luis = sign_up_at(s.addr, "Luis").await;
    let (_, clients) = rated_pair(&s, &ana, &luis).await;
    play_to_end(clients).await;
    assert!(profile(&s, "Luis").await["ratings"]["online"].is_object());
    let auth = format!("Authorization: Bearer {ADMIN}");
    let reset = |name: &str| format!("/admin/accounts/{name}/ratings/reset");
    let (status, _) = common::request_raw(s.addr, "POST", &reset("Luis"), &[], "").await;
    assert_eq!(status, 401, "the admin token is needed");
    let (status, body) = common::request_raw(s.addr, "POST", &reset("Nobody"), &[&auth], "").await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = common::request_raw(s.addr, "POST", &reset("Luis"), &[&auth], "").await;
    assert_eq!(status, 204, "{body}");
    let luis_now = profile(&s, "Luis").await;
    assert_eq!(luis_now["ratings"], json!({}), "{luis_now}");
    assert_eq!(luis_now["history"], json!([]), "{luis_now}");
    let ana_now = profile(&s, "Ana").await;
    assert_eq!(ana_now["ratings"]["online"]["games"], 1, "{ana_now}");
    s.shutdown.cancel();
}

/// A renamed player's new name shows in the live room they sit in (issue 26): an
/// administrator renames Luis during a rated game; both players get `renamed` for red's
/// seat, and the room view's seat shows the new name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renamed_players_new_name_shows_in_their_live_room() {
    const ADMIN: &str = "admin-token-for-renames";
    let s = start(parchis_server::ServerConfig {
        accounts: AccountLimits::unlimited(),
        admin_token: Some(ADMIN.into()),
        ..test_config()
    })
    .await;
    let ana = sign_up_at(s.addr, "Ana").await;
    let luis = sign_up_at(s.addr, "Luis").await;
    let (code, mut clients) = rated_pair(&s, &ana, &luis).await;
    let auth = format!("Authorization: Bearer {ADMIN}");
    let body = json!({"username": "Luis_Nuevo"}).to_string();
    let (status, answer) = common::request_raw(
        s.addr,
        "POST",
        "/admin/accounts/Luis/rename",
        &[&auth, "Content-Type: application/json"],
        &body,
    )
    .await;
    assert_eq!(status, 204, "{answer}");
    for c in &mut clients {
        let renamed = c.until("renamed", |v| v["type"] == "renamed").await;
        assert_eq!(
            renamed,
            json!({"type": "renamed", "room": code, "colour": "red", "name": "Luis_Nuevo"})
        );
    }
    let view = s.room(&code).await;
    let names: Vec<&str> = view["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .filter_map(|seat| seat["name"].as_str())
        .collect();
    assert_eq!(names, ["Ana", "Luis_Nuevo"], "{view}");
    s.shutdown.cancel();
}

/// Issue 26: once a rated game has ended its seats show the ratings after it, and a
/// rematch starts with them: each seat's `rating` is its profile's new display rating.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rematch_shows_the_ratings_after_the_game_just_ended() {
    let s = accounts_server().await;
    let ana = sign_up_at(s.addr, "Ana").await;
    let luis = sign_up_at(s.addr, "Luis").await;
    let (code, clients) = rated_pair(&s, &ana, &luis).await;
    let (won, mut p) = play_to_end(clients).await;
    assert_eq!(won["reason"], "goal", "{won}");
    let mut expected = Vec::new();
    for name in ["Ana", "Luis"] {
        let display = profile(&s, name).await["ratings"]["online"]["display"].clone();
        assert!(display.is_i64(), "{name}: {display}");
        expected.push(display);
    }
    assert_ne!(expected[0], expected[1], "winner and loser differ");
    let ratings = |view: &Value| -> Vec<Value> {
        view["seats"]
            .as_array()
            .map(|seats| seats.iter().map(|x| x["rating"].clone()).collect())
            .unwrap_or_default()
    };
    assert_eq!(ratings(&s.room(&code).await), expected, "after the game");
    for c in &mut p {
        let r = c.cmd(json!({"type": "rematch"})).await;
        assert_eq!(c.reply(r).await["type"], "ok");
    }
    // Yellow's reply came before red asked: the new game's start is still ahead of it.
    p[0].until("game_started", |v| {
        v["type"] == "event" && v["event"]["type"] == "game_started"
    })
    .await;
    let view = s.room(&code).await;
    assert_eq!(view["status"], "playing", "{view}");
    assert_eq!(ratings(&view), expected, "in the rematch: {view}");
    s.shutdown.cancel();
}

/// Issue 26: an account deleted while its seat is in a running room: the seat takes the
/// neutral name "deleted player" at once, and every connection of the room is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_players_seat_in_a_live_room_takes_the_neutral_name() {
    let s = accounts_server().await;
    let ana = sign_up_at(s.addr, "Ana").await;
    let luis = sign_up_at(s.addr, "Luis").await;
    let (code, mut clients) = rated_pair(&s, &ana, &luis).await;
    let body = json!({"password": "correct horse battery"}).to_string();
    let (status, answer) = common::request_raw(
        s.addr,
        "DELETE",
        "/api/me",
        &[
            &format!("Authorization: Bearer {luis}"),
            "Content-Type: application/json",
        ],
        &body,
    )
    .await;
    assert_eq!(status, 204, "{answer}");
    for c in &mut clients {
        let renamed = c.until("renamed", |v| v["type"] == "renamed").await;
        assert_eq!(
            renamed,
            json!({"type": "renamed", "room": code, "colour": "red", "name": "deleted player"})
        );
    }
    let view = s.room(&code).await;
    let names: Vec<&str> = view["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .filter_map(|seat| seat["name"].as_str())
        .collect();
    assert_eq!(names, ["Ana", "deleted player"], "{view}");
    s.shutdown.cancel();
}
