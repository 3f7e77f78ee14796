//! Reserved seats and quick pairing against the real server (issue 26): the `claim`
//! message (by ticket or by the logged-in account) and its refusals.

mod common;

use std::net::SocketAddr;

use common::{start, test_config, Client, Server};
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
    let s = server().await;
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
    let token = sign_up(&s, "Ana_1").await;
    let mut ana = logged_in(s.addr, &token).await;
    let answer = claim(&mut ana, &code, None).await;
    assert_eq!(answer["code"], "bad_request", "{answer}");
    // Still unjoined: a plain join works afterwards.
    let welcome = ana.join(&code, "ignored", None).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    s.shutdown.cancel();
}

/// Another device (issue 26): a logged-in player's second connection sends `resume`
/// without a token and takes over the account's seat; the first connection is closed
/// 4000 (replaced). A guest's `resume` without a token, or an account that holds no seat
/// in the room, is refused `bad_token`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logged_in_player_resumes_their_seat_from_another_device_without_the_token() {
    let s = server().await;
    let ana = sign_up(&s, "Ana_1").await;
    let bea = sign_up(&s, "Bea_2").await;
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
