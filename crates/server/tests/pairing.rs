//! Reserved seats, quick pairing and seats by account against the real server (issue
//! 26): the `claim` message (by ticket or by the logged-in account) and its refusals;
//! `resume` by account from another device; the pairing routes: four players of a 2-seat
//! rated pool become two games (claimed and one played to its end, rated), a lone
//! player's window widens, leaving the pool, a guest refused in a rated pool and paired
//! in a casual one, and two players who blocked each other never grouped.

mod common;

use std::time::Duration;

use common::{
    accounts_server, call, logged_in, play_to_end, sign_up_at, start, test_config, Client, Server,
};
use parchis_server::config::AccountLimits;
use serde_json::{json, Value};

/// `claim` in `room`, with `ticket` if given; the answer (`welcome` or `error`).
async fn claim(c: &mut Client, room: &str, ticket: Option<&str>) -> Value {
    let mut msg = json!({"type": "claim", "room": room});
    if let Some(t) = ticket {
        msg["ticket"] = json!(t);
    }
    let req = c.cmd(msg).await;
    c.reply(req).await
}

/// A room without reserved seats answers a claim `bad_request`; a guest's claim without a
/// ticket is `not_logged_in`; a ticket that cannot be one is `bad_request`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_is_refused_where_nothing_is_reserved_for_it() {
    let s = accounts_server().await;
    let code = s.create_room(json!({"preset": "online", "seats": 2})).await;
    let mut guest = s.client().await;
    let answer = claim(&mut guest, &code, None).await;
    assert_eq!(answer["code"], "not_logged_in", "{answer}");
    let answer = claim(&mut guest, &code, Some("not a ticket!")).await;
    assert_eq!(answer["code"], "bad_request", "{answer}");
    let answer = claim(&mut guest, &code, Some("abcDEF123")).await;
    assert_eq!(answer["code"], "bad_request", "{answer}");
    assert!(
        answer["message"]
            .as_str()
            .unwrap_or_default()
            .contains("join it"),
        "{answer}"
    );
    let token = sign_up_at(s.addr, "Ana_1").await;
    let mut ana = logged_in(s.addr, &token).await;
    let answer = claim(&mut ana, &code, None).await;
    assert_eq!(answer["code"], "bad_request", "{answer}");
    // Still unjoined: a plain join works afterwards.
    let welcome = ana.join(&code, "ignored", None).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    // An ordinary room's view has no `reserved`.
    assert!(welcome["snapshot"]["code"].is_string(), "{welcome}");
    assert!(welcome["snapshot"].get("reserved").is_none(), "{welcome}");
    s.shutdown.cancel();
}

/// Another device (issue 26): a logged-in player's second connection sends `resume`
/// without a token and takes over the account's seat; the first connection is closed
/// 4000 (replaced). A guest's `resume` without a token, or an account that holds no seat
/// in the room, is refused `bad_token`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logged_in_player_resumes_their_seat_from_another_device_without_the_token() {
    let s = accounts_server().await;
    let ana = sign_up_at(s.addr, "Ana_1").await;
    let bea = sign_up_at(s.addr, "Bea_2").await;
    let code = s.create_room(json!({"preset": "online", "seats": 2})).await;
    let mut phone = logged_in(s.addr, &ana).await;
    let welcome = phone.join(&code, "ignored", Some("red")).await;
    assert_eq!(welcome["colour"], "red", "{welcome}");
    let seq = welcome["seq"].as_u64().expect("seq");

    let mut guest = s.client().await;
    let req = guest
        .cmd(json!({"type": "resume", "room": code, "last_seq": 0}))
        .await;
    let answer = guest.reply(req).await;
    assert_eq!(answer["code"], "bad_token", "{answer}");
    let mut other = logged_in(s.addr, &bea).await;
    let req = other
        .cmd(json!({"type": "resume", "room": code, "last_seq": 0}))
        .await;
    let answer = other.reply(req).await;
    assert_eq!(answer["code"], "bad_token", "{answer}");

    let mut laptop = logged_in(s.addr, &ana).await;
    let req = laptop
        .cmd(json!({"type": "resume", "room": code, "last_seq": seq}))
        .await;
    let answer = laptop.reply(req).await;
    assert_eq!(
        (answer["type"].clone(), answer["colour"].clone()),
        (json!("welcome"), json!("red")),
        "{answer}"
    );
    assert_eq!(common::close_code(&mut phone).await, Some(4000));
    // The laptop plays the seat: a guest joins yellow and the laptop (the creator's
    // seat) starts the game.
    let mut yellow = s.client().await;
    yellow.join(&code, "Luis", Some("yellow")).await;
    while laptop.seq < yellow.seq {
        laptop.next().await;
    }
    let started = laptop.ok(json!({"type": "start"})).await;
    assert_eq!(started["type"], "ok", "{started}");
    s.shutdown.cancel();
}

/// Enters the pool; the ticket (asserting 201 and the first state).
async fn enter(s: &Server, token: Option<&str>, ask: Value) -> String {
    let (status, body) = call(s.addr, "POST", "/api/pairing", token, &ask.to_string()).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["status"], "waiting", "{body}");
    assert_eq!(body["waiting_ms"], 0, "{body}");
    assert_eq!(body["window"], 2.0, "{body}");
    body["ticket"].as_str().expect("ticket").to_owned()
}

async fn poll(s: &Server, ticket: &str) -> (u16, Value) {
    call(s.addr, "GET", &format!("/api/pairing/{ticket}"), None, "").await
}

/// Polls `ticket` until it is paired (10 s at most); `(room, colour)`.
async fn paired(s: &Server, ticket: &str) -> (String, String) {
    for _ in 0..100 {
        let (status, body) = poll(s, ticket).await;
        assert_eq!(status, 200, "{body}");
        if body["status"] == "paired" {
            let room = body["room"].as_str().expect("room").to_owned();
            return (room, body["colour"].as_str().expect("colour").to_owned());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("ticket {ticket} not paired in 10 s");
}

/// Waiting players in the pool `(preset, seats, rated)` per `GET /api/pairing`.
async fn waiting(s: &Server, preset: &str, seats: u64, rated: bool) -> u64 {
    let (status, body) = call(s.addr, "GET", "/api/pairing", None, "").await;
    assert_eq!(status, 200, "{body}");
    body["pools"]
        .as_array()
        .expect("pools")
        .iter()
        .find(|p| p["preset"] == preset && p["seats"] == seats && p["rated"] == rated)
        .map_or(0, |p| p["waiting"].as_u64().expect("waiting"))
}

fn online(seats: u64, rated: bool) -> Value {
    json!({"preset": "online", "seats": seats, "rated": rated})
}

/// Four accounts wait in the `online` 2-seat rated pool: two rooms are opened, each with
/// yellow and red reserved; each player claims their seat by account and the game starts
/// at the second claim. One game is played to its end: both ratings move (the winner
/// up).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_players_in_a_two_seat_rated_pool_become_two_games() {
    let s = accounts_server().await;
    let names = ["Ana_1", "Bea_2", "Cris_3", "Dani_4"];
    let mut tokens = Vec::new();
    for n in names {
        tokens.push(sign_up_at(s.addr, n).await);
    }
    let mut tickets = Vec::new();
    for t in &tokens {
        tickets.push(enter(&s, Some(t), online(2, true)).await);
    }
    let mut seats = Vec::new();
    for t in &tickets {
        seats.push(paired(&s, t).await);
    }
    let rooms: std::collections::BTreeSet<&str> = seats.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(rooms.len(), 2, "two rooms: {seats:?}");
    for room in &rooms {
        let mut colours: Vec<&str> = seats
            .iter()
            .filter(|(r, _)| r == room)
            .map(|(_, c)| c.as_str())
            .collect();
        colours.sort();
        assert_eq!(colours, ["red", "yellow"], "{room}");
    }
    assert_eq!(waiting(&s, "online", 2, true).await, 0);
    // The first room's two players claim; the game starts at the second claim. Before
    // it, a player of the other room is refused there (`seat_reserved`).
    let first = seats[0].0.clone();
    let other = seats
        .iter()
        .position(|(r, _)| *r != first)
        .expect("another room");
    let mut clients = Vec::new();
    for (k, (room, colour)) in seats.iter().enumerate() {
        if *room != first {
            continue;
        }
        if clients.len() == 1 {
            let mut intruder = logged_in(s.addr, &tokens[other]).await;
            let answer = claim(&mut intruder, &first, None).await;
            assert_eq!(answer["code"], "seat_reserved", "{answer}");
        }
        let mut c = logged_in(s.addr, &tokens[k]).await;
        let welcome = claim(&mut c, room, None).await;
        assert_eq!(welcome["type"], "welcome", "{welcome}");
        assert_eq!(welcome["colour"], colour.as_str(), "{welcome}");
        clients.push(c);
    }
    let (won, _) = play_to_end(clients).await;
    let winner = won["winner"].as_str().expect("winner").to_owned();
    for (k, (room, colour)) in seats.iter().enumerate() {
        let (status, p) = call(
            s.addr,
            "GET",
            &format!("/api/players/{}", names[k]),
            None,
            "",
        )
        .await;
        assert_eq!(status, 200, "{p}");
        if *room == first {
            let mu = p["ratings"]["online"]["mu"].as_f64().expect("rated");
            assert_eq!(mu > 25.0, *colour == winner, "{}: {p}", names[k]);
        } else {
            assert_eq!(p["ratings"], json!({}), "not played yet: {p}");
        }
    }
    // The winner (rated now) and a player of the other room (no rating yet) wait again,
    // are paired together (within a few seconds: their μ differ by less than 3) and
    // claim: each claimed seat shows the account's display rating in the pool as the
    // profile gives it (none without a rating).
    let won_at = (0..4)
        .find(|&k| seats[k].0 == first && seats[k].1 == winner)
        .expect("the winner");
    let players = [won_at, other];
    let mut again = Vec::new();
    for &k in &players {
        again.push(enter(&s, Some(&tokens[k]), online(2, true)).await);
    }
    let mut room = String::new();
    let mut clients = Vec::new();
    for (&k, ticket) in players.iter().zip(&again) {
        let (r, _) = paired(&s, ticket).await;
        room = r;
        let mut c = logged_in(s.addr, &tokens[k]).await;
        let welcome = claim(&mut c, &room, None).await;
        assert_eq!(welcome["type"], "welcome", "{welcome}");
        clients.push(c);
    }
    let view = s.room(&room).await;
    for &k in &players {
        let (_, p) = call(
            s.addr,
            "GET",
            &format!("/api/players/{}", names[k]),
            None,
            "",
        )
        .await;
        let display = p["ratings"]["online"]["display"].clone();
        assert_eq!(display.is_i64(), k == won_at, "{p}");
        let seat = view["seats"]
            .as_array()
            .expect("seats")
            .iter()
            .find(|seat| seat["name"] == names[k])
            .unwrap_or_else(|| panic!("{} seated: {view}", names[k]))
            .clone();
        assert_eq!(seat["rating"], display, "{}: {view}", names[k]);
    }
    s.shutdown.cancel();
}

/// A lone player waits: `waiting_ms` grows and the window widens (2 μ points at once,
/// 0.25 more per second).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_players_window_widens_while_they_wait() {
    let s = accounts_server().await;
    let token = sign_up_at(s.addr, "Ana_1").await;
    let ticket = enter(&s, Some(&token), online(4, true)).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let (status, body) = poll(&s, &ticket).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "waiting", "{body}");
    let waited = body["waiting_ms"].as_i64().expect("waiting_ms");
    assert!(waited >= 1200, "{body}");
    let window = body["window"].as_f64().expect("window");
    let expected = 2.0 + 0.25 * waited as f64 / 1000.0;
    assert!(
        (window - expected).abs() < 1e-9,
        "{window} != {expected}: {body}"
    );
    assert!(window > 2.25, "{body}");
    assert_eq!(waiting(&s, "online", 4, true).await, 1);
    s.shutdown.cancel();
}

/// Leaving the pool: 204, the ticket is unknown afterwards (404 `unknown_ticket`), the
/// pool's count drops; an account waits once (409 `already_waiting`) and may enter again
/// after leaving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_the_pool_forgets_the_ticket() {
    let s = accounts_server().await;
    let token = sign_up_at(s.addr, "Ana_1").await;
    let ticket = enter(&s, Some(&token), online(4, false)).await;
    assert_eq!(waiting(&s, "online", 4, false).await, 1);
    let (status, body) = call(
        s.addr,
        "POST",
        "/api/pairing",
        Some(&token),
        &online(2, false).to_string(),
    )
    .await;
    assert_eq!(
        (status, body["code"].clone()),
        (409, json!("already_waiting")),
        "{body}"
    );
    let (status, _) = call(
        s.addr,
        "DELETE",
        &format!("/api/pairing/{ticket}"),
        None,
        "",
    )
    .await;
    assert_eq!(status, 204);
    assert_eq!(waiting(&s, "online", 4, false).await, 0);
    let (status, body) = poll(&s, &ticket).await;
    assert_eq!(
        (status, body["code"].clone()),
        (404, json!("unknown_ticket")),
        "{body}"
    );
    let (status, _) = call(
        s.addr,
        "DELETE",
        &format!("/api/pairing/{ticket}"),
        None,
        "",
    )
    .await;
    assert_eq!(status, 204, "leaving again is no error");
    enter(&s, Some(&token), online(2, false)).await;
    s.shutdown.cancel();
}

/// A guest is refused in a rated pool (401 `not_logged_in`) and bad requests are 400; two
/// guests in a casual pool are paired and claim their seats with their tickets (a wrong
/// ticket: `seat_reserved`); the game starts with their names on the seats.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_is_refused_in_a_rated_pool_and_plays_a_casual_one_by_ticket() {
    let s = accounts_server().await;
    let (status, body) = call(
        s.addr,
        "POST",
        "/api/pairing",
        None,
        &online(2, true).to_string(),
    )
    .await;
    assert_eq!(
        (status, body["code"].clone()),
        (401, json!("not_logged_in")),
        "{body}"
    );
    for bad in [
        json!({"preset": "chess", "seats": 2, "rated": false}),
        json!({"preset": "online", "seats": 3, "rated": false}),
        json!({"preset": "pairs", "seats": 2, "rated": false}),
        json!({"preset": "online", "seats": 2, "rated": false, "name": "   "}),
        json!({"preset": "online", "seats": 2}),
    ] {
        let (status, body) = call(s.addr, "POST", "/api/pairing", None, &bad.to_string()).await;
        assert_eq!(
            (status, body["code"].clone()),
            (400, json!("bad_request")),
            "{bad}: {body}"
        );
    }
    let mut ask = online(2, false);
    ask["name"] = json!("Luis");
    let luis = enter(&s, None, ask.clone()).await;
    ask["name"] = json!("Marta");
    let marta = enter(&s, None, ask).await;
    let (room, luis_colour) = paired(&s, &luis).await;
    let (room2, _) = paired(&s, &marta).await;
    assert_eq!(room, room2);
    let mut a = s.client().await;
    let answer = claim(&mut a, &room, Some("0123456789abcdef")).await;
    assert_eq!(answer["code"], "seat_reserved", "{answer}");
    let answer = claim(&mut a, &room, Some(&luis)).await;
    assert_eq!(answer["colour"], luis_colour.as_str(), "{answer}");
    // The room view says both seats are reserved, by colour and name (never a ticket),
    // and that the room starts by itself; Marta's seat is not taken yet.
    let reserved = &answer["snapshot"]["reserved"];
    assert_eq!(reserved["starts_when_seated"], true, "{answer}");
    let mut seats: Vec<(String, String)> = reserved["seats"]
        .as_array()
        .expect("reserved seats")
        .iter()
        .map(|r| (r["name"].to_string(), r["colour"].to_string()))
        .collect();
    seats.sort();
    assert_eq!(seats.len(), 2, "{answer}");
    assert_eq!(seats[0].0, "\"Luis\"", "{answer}");
    assert_eq!(seats[0].1, json!(luis_colour).to_string(), "{answer}");
    assert_eq!(seats[1].0, "\"Marta\"", "{answer}");
    assert_ne!(seats[1].1, seats[0].1, "{answer}");
    assert_eq!(
        answer["snapshot"]["seats"].as_array().map(Vec::len),
        Some(1)
    );
    assert!(!answer.to_string().contains(&marta), "{answer}");
    assert!(!answer.to_string().contains(&luis), "{answer}");
    let mut b = s.client().await;
    let answer = claim(&mut b, &room, Some(&marta)).await;
    assert_eq!(answer["type"], "welcome", "{answer}");
    let started = a
        .until("game_started", |v| {
            v["type"] == "event" && v["event"]["type"] == "game_started"
        })
        .await;
    assert_eq!(started["type"], "event", "{started}");
    let view = s.room(&room).await;
    let mut names: Vec<&str> = view["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .filter_map(|seat| seat["name"].as_str())
        .collect();
    names.sort();
    assert_eq!(names, ["Luis", "Marta"], "{view}");
    s.shutdown.cancel();
}

/// Ana blocked Bea: both wait in the same pool and are never grouped; Cris comes and is
/// grouped with Ana (the longest waiting), Bea waits on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_who_blocked_each_other_are_never_grouped() {
    let s = accounts_server().await;
    let ana = sign_up_at(s.addr, "Ana_1").await;
    let bea = sign_up_at(s.addr, "Bea_2").await;
    let cris = sign_up_at(s.addr, "Cris_3").await;
    let (status, body) = call(s.addr, "POST", "/api/me/blocks/Bea_2", Some(&ana), "").await;
    assert_eq!(status, 204, "{body}");
    let a = enter(&s, Some(&ana), online(2, true)).await;
    let b = enter(&s, Some(&bea), online(2, true)).await;
    // Several matcher rounds pass (every 500 ms): nobody is grouped.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for t in [&a, &b] {
        let (_, body) = poll(&s, t).await;
        assert_eq!(body["status"], "waiting", "{body}");
    }
    let c = enter(&s, Some(&cris), online(2, true)).await;
    let (room_a, _) = paired(&s, &a).await;
    let (room_c, _) = paired(&s, &c).await;
    assert_eq!(room_a, room_c);
    let (_, body) = poll(&s, &b).await;
    assert_eq!(body["status"], "waiting", "{body}");
    s.shutdown.cancel();
}

/// Blocks mute emotes (issue 26): Ana blocked Bea; in a room together Bea's emote reaches
/// a spectator but not Ana, while Ana's reaches Bea (a block is one way).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_gets_no_emotes_from_a_player_they_blocked() {
    let s = accounts_server().await;
    let ana = sign_up_at(s.addr, "Ana_1").await;
    let bea = sign_up_at(s.addr, "Bea_2").await;
    let (status, body) = call(s.addr, "POST", "/api/me/blocks/Bea_2", Some(&ana), "").await;
    assert_eq!(status, 204, "{body}");
    let code = s
        .create_room(json!({"preset": "online", "seats": 2, "turn_clock_secs": 600}))
        .await;
    let mut a = logged_in(s.addr, &ana).await;
    a.join(&code, "ignored", Some("yellow")).await;
    let mut b = logged_in(s.addr, &bea).await;
    b.join(&code, "ignored", Some("red")).await;
    while a.seq < b.seq {
        a.next().await;
    }
    a.ok(json!({"type": "start"})).await;
    let mut w = s.client().await;
    w.watch(&code).await;
    b.ok(json!({"type": "emote", "emote": "good_luck"})).await;
    let seen = w.until("bea's emote", |v| v["type"] == "emote").await;
    assert_eq!(seen["colour"], "red", "{seen}");
    // Not `ok`, which would read past the emote (sent before the `ok`).
    a.cmd(json!({"type": "emote", "emote": "well_played"}))
        .await;
    let first = a.until("an emote", |v| v["type"] == "emote").await;
    assert_eq!(
        (first["colour"].clone(), first["emote"].clone()),
        (json!("yellow"), json!("well_played")),
        "Ana's own emote is the first she gets: {first}"
    );
    let got = b
        .until("ana's emote", |v| {
            v["type"] == "emote" && v["colour"] == "yellow"
        })
        .await;
    assert_eq!(got["emote"], "well_played", "{got}");
    s.shutdown.cancel();
}

/// The claim wait (1 s here): Ana and Bea are paired; Ana claims, Bea never does. The
/// lobby closes: Ana's connection is closed 4006 (`pairing_expired`), both tickets
/// answer `expired` with the room, Ana's with a new ticket on which she waits again with
/// her original wait, Bea's with none. Cris comes and is paired with Ana's new ticket;
/// the closed room refuses a late claim.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seats_not_all_claimed_in_time_close_the_lobby_and_requeue_who_claimed() {
    let s = start(parchis_server::ServerConfig {
        accounts: AccountLimits::unlimited(),
        pairing_claim_wait: Duration::from_secs(1),
        ..test_config()
    })
    .await;
    let ana = sign_up_at(s.addr, "Ana_1").await;
    let bea = sign_up_at(s.addr, "Bea_2").await;
    let cris = sign_up_at(s.addr, "Cris_3").await;
    let a = enter(&s, Some(&ana), online(2, false)).await;
    let b = enter(&s, Some(&bea), online(2, false)).await;
    let (room, colour) = paired(&s, &a).await;
    let mut ana_ws = logged_in(s.addr, &ana).await;
    let welcome = claim(&mut ana_ws, &room, None).await;
    assert_eq!(welcome["colour"], colour.as_str(), "{welcome}");
    assert_eq!(common::close_code(&mut ana_ws).await, Some(4006));
    let (status, body) = poll(&s, &a).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["status"].clone(), body["room"].clone()),
        (json!("expired"), json!(room)),
        "{body}"
    );
    let again = body["ticket"].as_str().expect("a new ticket").to_owned();
    assert_eq!(again.len(), 32, "{body}");
    let (_, body) = poll(&s, &b).await;
    assert_eq!(
        (
            body["status"].clone(),
            body["room"].clone(),
            body["ticket"].clone()
        ),
        (json!("expired"), json!(room), Value::Null),
        "{body}"
    );
    let (status, body) = poll(&s, &again).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "waiting", "{body}");
    assert!(
        body["waiting_ms"].as_i64().expect("waiting_ms") >= 1000,
        "the original wait is kept: {body}"
    );
    assert_eq!(waiting(&s, "online", 2, false).await, 1);
    let mut bea_ws = logged_in(s.addr, &bea).await;
    let late = claim(&mut bea_ws, &room, None).await;
    assert_eq!(late["type"], "error", "{late}");
    let c = enter(&s, Some(&cris), online(2, false)).await;
    let (room_a, _) = paired(&s, &again).await;
    let (room_c, _) = paired(&s, &c).await;
    assert_eq!(room_a, room_c);
    assert_ne!(room_a, room);
    s.shutdown.cancel();
}
