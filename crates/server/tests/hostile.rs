//! Hostile clients against the real server on loopback: each attack runs (bounded in size
//! and time) and the test asserts the defence. Different client addresses are different
//! loopback addresses (127.0.0.x) bound as the source of the connection.
//!
//! Why one long file: it is a list of independent attacks, one test each, sharing the helpers at its top; one test binary
//! also keeps the build short.

mod common;
// Not in `common`: the CLI's tests include `common` and lack this file's dependencies.
#[path = "common/gated_store.rs"]
mod gated_store;

use common::{
    assert_answers_ping, assert_read_it_all, close_code, ip, read_to_the_end, start, test_config,
    Client, Server,
};
use parchis_server::ServerConfig;
use serde_json::{json, Value};
use std::net::IpAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::MaybeTlsStream;

/// A TCP connection to the server from source address `from`.
async fn connect_from(server: &Server, from: IpAddr) -> TcpStream {
    common::connect_from(server.addr, Some(from), false).await
}

/// An HTTP answer: status, lower-cased header lines, JSON (or text) body.
struct Answer {
    status: u16,
    head: String,
    body: Value,
}

impl Answer {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_owned())
        })
    }

    /// Asserts the answer is the error `code` with HTTP `status`.
    fn assert_refused(&self, status: u16, code: &str) {
        assert_eq!(
            (self.status, self.body["code"].clone()),
            (status, json!(code)),
            "{}",
            self.body
        );
    }
}

/// `POST /api/rooms` with `settings` (JSON text) from `from`.
async fn create_from(server: &Server, from: IpAddr, settings: &str) -> Answer {
    http_from(server, from, "POST", "/api/rooms", "", settings).await
}

/// `POST /api/rooms` with `settings` from `from` must create the room (201).
async fn assert_creates(server: &Server, from: IpAddr, settings: &str) {
    let a = create_from(server, from, settings).await;
    assert_eq!(a.status, 201, "{}", a.body);
}

/// A room of four seats where Ana (yellow, the client returned) plays three greedy bots
/// that think for 0 ms (a 600 s turn clock: nobody times out); the game is not started.
async fn ana_and_three_quick_bots(server: &Server) -> (String, Client) {
    let code = server
        .create_room(
            json!({"seats": 4, "bots": "greedy", "bot_think_ms": 0, "turn_clock_secs": 600}),
        )
        .await;
    let mut me = server.client().await;
    me.join(&code, "Ana", Some("yellow")).await;
    (code, me)
}

/// One HTTP request from `from` (`Connection: close`).
async fn http_from(
    server: &Server,
    from: IpAddr,
    method: &str,
    path: &str,
    headers: &str,
    body: &str,
) -> Answer {
    let mut s = connect_from(server, from).await;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n{headers}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        server.addr,
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    tokio::time::timeout(common::WAIT, s.read_to_end(&mut buf))
        .await
        .expect("answer in time")
        .expect("read");
    let text = String::from_utf8_lossy(&buf).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Answer {
        status,
        head: head.to_owned(),
        body: common::json_body(head, body),
    }
}

/// A WebSocket client connected from `from`.
async fn client_from(server: &Server, from: IpAddr) -> Client {
    common::client_from(server.addr, Some(from), false).await
}

fn long_clock() -> Value {
    json!({"turn_clock_secs": 600, "disconnect_grace_secs": 3600})
}

// ----- admission: room creation, code lookups, connections ---------------------------

#[tokio::test]
async fn room_creation_keeps_working_for_a_second_address_while_one_floods() {
    let mut config = test_config();
    config.limits.room_creations_per_minute = 20;
    config.limits.max_lobbies_per_address = 8;
    let server = start(config).await;
    let flooder = ip(2);
    let mut created = 0;
    let mut limited = 0;
    for _ in 0..150 {
        let a = create_from(&server, flooder, "{}").await;
        match a.status {
            201 => created += 1,
            429 => {
                assert_eq!(a.body["code"], "rate_limited", "{}", a.body);
                let retry: u64 = a
                    .header("retry-after")
                    .expect("Retry-After")
                    .parse()
                    .expect("secs");
                assert!((1..=60).contains(&retry), "Retry-After {retry}");
                limited += 1;
            }
            other => panic!("flood got {other}: {}", a.body),
        }
    }
    // Its open lobbies are capped, whatever the rate allows.
    assert_eq!(created, 8);
    assert_eq!(limited, 142);
    // Meanwhile another address creates rooms as usual.
    for _ in 0..3 {
        assert_creates(&server, ip(3), "{}").await;
    }
    // The lobby list holds the flooder's 8 and the other address's 3.
    let listed = server.http("GET", "/api/rooms", None).await.1;
    assert_eq!(listed["rooms"].as_array().map(Vec::len), Some(11));
}

#[tokio::test]
async fn a_full_server_answers_server_full_not_internal() {
    let mut config = test_config();
    config.max_rooms = 3;
    let server = start(config).await;
    for n in 0..3 {
        assert_creates(&server, ip(10 + n), "{}").await;
    }
    let a = create_from(&server, ip(20), "{}").await;
    assert_eq!(a.status, 503);
    assert_eq!(a.body["code"], "server_full", "{}", a.body);
    assert!(a.header("retry-after").is_some());
}

#[tokio::test]
async fn room_code_guessing_is_rate_limited_per_address() {
    let mut config = test_config();
    config.limits.lookups_per_minute = 30;
    let server = start(config).await;
    let code = server.create_room(long_clock()).await;
    let mut statuses = Vec::new();
    for n in 0..60 {
        let guess = format!("/api/rooms/GUESS{n:03}");
        statuses.push(
            http_from(&server, ip(4), "GET", &guess, "", "")
                .await
                .status,
        );
    }
    assert!(statuses[..30].iter().all(|s| *s == 404), "{statuses:?}");
    assert!(statuses[30..].iter().all(|s| *s == 429), "{statuses:?}");
    // The same limit holds on the WebSocket.
    let mut ws = client_from(&server, ip(4)).await;
    let e = ws
        .refused(json!({"type": "watch", "room": code}), "rate_limited")
        .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("lookups"),
        "{e}"
    );
    // And for a command sent before joining (its `not_joined` tells the code exists).
    ws.refused(
        json!({"type": "roll", "room": code, "seq": 0}),
        "rate_limited",
    )
    .await;
    let mut other = client_from(&server, ip(5)).await;
    other
        .refused(
            json!({"type": "roll", "room": code, "seq": 0}),
            "not_joined",
        )
        .await;
    // Another address is not affected.
    let a = http_from(&server, ip(5), "GET", &format!("/api/rooms/{code}"), "", "").await;
    assert_eq!(a.status, 200, "{}", a.body);
}

/// Guessing the admin token: an address gets ten wrong tokens a minute; past them every
/// admin request from it is refused `429 rate_limited` with `Retry-After`, the right
/// token too (so no guess gets through), while another address is served.
#[tokio::test]
async fn admin_token_guesses_are_limited_per_address() {
    let token = "a-long-enough-admin-token";
    let server = start(parchis_server::ServerConfig {
        admin_token: Some(token.into()),
        ..test_config()
    })
    .await;
    let bearer = |t: &str| format!("Authorization: Bearer {t}\r\n");
    let mut statuses = Vec::new();
    for n in 0..11 {
        let guess = bearer(&format!("guess-number-{n:04}"));
        statuses.push(
            http_from(&server, ip(12), "GET", "/admin/rooms", &guess, "")
                .await
                .status,
        );
    }
    assert_eq!(
        statuses,
        vec![401; 11],
        "ten guesses, and the one that runs out"
    );
    let right = http_from(&server, ip(12), "GET", "/admin/rooms", &bearer(token), "").await;
    right.assert_refused(429, "rate_limited");
    assert!(right.header("retry-after").is_some(), "{}", right.head);
    let other = http_from(&server, ip(13), "GET", "/admin/rooms", &bearer(token), "").await;
    assert_eq!(other.status, 200, "{}", other.body);
}

/// An oversized room-creation body is refused before it is read whole, in JSON like every
/// other error (`413 bad_request`), and the address can still create a room.
#[tokio::test]
async fn an_oversized_creation_body_gets_a_json_413() {
    let server = start(test_config()).await;
    let padding = "x".repeat(20 * 1024);
    let body = format!(r#"{{"seats": 2, "pad": "{padding}"}}"#);
    let a = create_from(&server, ip(11), &body).await;
    a.assert_refused(413, "bad_request");
    assert!(
        a.body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("bytes"),
        "{}",
        a.body
    );
    assert_creates(&server, ip(11), r#"{"seats": 2}"#).await;
}

/// Stored-game reads (list, detail, replay, export: each reads the database, a replay
/// rebuilds the whole game) have a per-address budget of their own, as large as the
/// lookups': past it `429 rate_limited` with `Retry-After`; room lookups and other
/// addresses are not affected.
#[tokio::test]
async fn stored_game_reads_are_rate_limited_per_address() {
    let mut config = test_config();
    config.limits.lookups_per_minute = 8;
    let server = start(config).await;
    let (code, _players) = common::seated_game(&server, long_clock(), &["yellow", "red"]).await;
    let game = server.room(&code).await["game"]["game_id"]
        .as_str()
        .expect("a game")
        .to_owned();
    let paths = [
        "/api/games".to_owned(),
        format!("/api/games?room={code}"),
        format!("/api/games/{game}"),
        format!("/api/games/{game}/replay"),
        format!("/api/games/{game}/export"),
    ];
    let mut statuses = Vec::new();
    for path in paths.iter().cycle().take(12) {
        statuses.push(http_from(&server, ip(9), "GET", path, "", "").await.status);
    }
    assert!(statuses[..8].iter().all(|s| *s == 200), "{statuses:?}");
    assert!(statuses[8..].iter().all(|s| *s == 429), "{statuses:?}");
    let refused = http_from(&server, ip(9), "GET", &paths[3], "", "").await;
    assert_eq!(refused.body["code"], "rate_limited", "{}", refused.body);
    assert!(
        refused.head.to_ascii_lowercase().contains("retry-after:"),
        "{}",
        refused.head
    );
    // Room lookups count apart; another address reads on.
    let room = http_from(&server, ip(9), "GET", &format!("/api/rooms/{code}"), "", "").await;
    assert_eq!(room.status, 200, "{}", room.body);
    let other = http_from(&server, ip(10), "GET", &paths[3], "", "").await;
    assert_eq!(other.status, 200, "{}", other.body);
    assert_eq!(other.body["game"]["id"], game.as_str(), "a replay");
}

#[tokio::test]
async fn connections_are_capped_per_address_and_in_total_and_health_checks_still_answer() {
    let mut config = test_config();
    config.limits.max_connections_per_address = 4;
    config.limits.max_connections = 10;
    let server = start(config).await;
    // One address holds its four connections open (idle).
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(connect_from(&server, ip(6)).await);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let a = http_from(&server, ip(6), "GET", "/api/rooms", "", "").await;
    assert_eq!(a.status, 429, "{}", a.body);
    assert_eq!(a.body["code"], "rate_limited");
    assert_eq!(a.header("retry-after").as_deref(), Some("1"));
    let health = http_from(&server, ip(6), "GET", "/healthz", "", "").await;
    assert_eq!((health.status, health.body.clone()), (200, json!("ok")));
    assert_operators_are_answered(&server, ip(6)).await;
    let a = http_from(&server, ip(7), "GET", "/api/rooms", "", "").await;
    assert_eq!(a.status, 200);
    // Fill the server: 4 + 6 = 10 connections.
    for n in 0..6 {
        held.push(connect_from(&server, ip(30 + n)).await);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let a = http_from(&server, ip(8), "GET", "/api/rooms", "", "").await;
    assert_eq!(a.status, 503, "{}", a.body);
    assert_eq!(a.body["code"], "server_full");
    let health = http_from(&server, ip(8), "GET", "/healthz", "", "").await;
    assert_eq!(health.status, 200);
    assert_operators_are_answered(&server, ip(8)).await;
    // Closing connections gives the slots back.
    held.clear();
    let mut status = 0;
    for _ in 0..50 {
        status = http_from(&server, ip(8), "GET", "/api/rooms", "", "")
            .await
            .status;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, 200);
}

/// `/readyz` and `/metrics` get their real answers from `from`, whose connections are over
/// a limit (the other paths get 429/503 there).
async fn assert_operators_are_answered(server: &Server, from: IpAddr) {
    let ready = http_from(server, from, "GET", "/readyz", "", "").await;
    assert_eq!(ready.status, 200, "{}", ready.body);
    assert_eq!(ready.body["status"], "ready", "{}", ready.body);
    let metrics = http_from(server, from, "GET", "/metrics", "", "").await;
    assert_eq!(metrics.status, 200, "{}", metrics.body);
    let text = metrics.body.as_str().unwrap_or_default();
    assert!(
        text.contains("parchis_rooms"),
        "not the server's metrics: {text:.300}"
    );
}

/// `--ops-reserved` is honoured: over a connection limit, exactly that many `/readyz` or
/// `/metrics` requests are served at once (here held in flight by a store whose readiness
/// query waits at a gate); the next one gets the 429 like any other path, and once the
/// held ones are answered the reserve is free again.
#[tokio::test]
async fn over_a_limit_operators_get_exactly_the_reserved_number_of_answers_at_once() {
    use crate::gated_store::GatedStore;
    for reserved in [0, 1, 2] {
        let store = std::sync::Arc::new(GatedStore::default());
        let mut config = test_config();
        config.limits.max_connections_per_address = 1;
        config.limits.ops_reserved = reserved;
        let server = common::start_on(config, store.clone()).await;
        // The address's one connection (accepted first: the listener takes them in order).
        let _held = connect_from(&server, ip(9)).await;
        let held = futures_util::future::join_all(
            (0..reserved).map(|_| http_from(&server, ip(9), "GET", "/readyz", "", "")),
        );
        let probe = async {
            // Every reserved slot is taken by a request held at the store's gate.
            store.pings.arrived_at_least(reserved).await;
            for path in ["/readyz", "/metrics"] {
                let refused = http_from(&server, ip(9), "GET", path, "", "").await;
                assert_eq!(
                    (refused.status, &refused.body["code"]),
                    (429, &json!("rate_limited")),
                    "reserve {reserved}, {path}: {}",
                    refused.body
                );
            }
            assert_eq!(
                store.pings.arrived(),
                reserved,
                "no other request reached the store"
            );
            store.pings.open();
        };
        let (served, ()) = tokio::join!(held, probe);
        assert_eq!(served.len(), reserved);
        for a in served {
            // The readiness document, not the refusal ("unavailable" only if this machine
            // stalled past the readiness timeout while the gate was shut).
            assert!(a.body["code"].is_null(), "refused: {}", a.body);
            assert!(
                a.body["status"] == "ready" || a.body["status"] == "unavailable",
                "{}",
                a.body
            );
        }
        // The reserve is free again.
        let again = http_from(&server, ip(9), "GET", "/readyz", "", "").await;
        if reserved == 0 {
            assert_eq!(again.status, 429, "{}", again.body);
        } else {
            assert_eq!(
                (again.status, &again.body["status"]),
                (200, &json!("ready")),
                "reserve {reserved}: {}",
                again.body
            );
        }
        server.shutdown.cancel();
    }
}

// ----- timeouts and liveness --------------------------------------------------------------

/// Waits for the server to close `s`; returns how long that took, or `None` if it was
/// still open after `limit`.
async fn closed_within(s: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout_at(started + limit, s.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(started.elapsed()),
            Ok(Ok(_)) => continue,
        }
    }
}

fn quick_timeouts() -> ServerConfig {
    let mut config = test_config();
    config.timeouts.header_read = Duration::from_secs(1);
    config.timeouts.join = Duration::from_secs(1);
    config
}

#[tokio::test]
async fn a_trickled_handshake_and_an_idle_connection_are_closed_within_the_header_timeout() {
    let server = start(quick_timeouts()).await;
    // Idle: connects and sends nothing.
    let mut idle = connect_from(&server, ip(9)).await;
    // Trickle: an upgrade request, one byte every 100 ms (it would take 20 s).
    let mut trickle = connect_from(&server, ip(9)).await;
    let request = format!(
        "GET /ws HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nX-Pad: {}\r\n\r\n",
        server.addr,
        "x".repeat(40)
    );
    let trickler = tokio::spawn(async move {
        let started = Instant::now();
        for b in request.as_bytes() {
            if trickle.write_all(&[*b]).await.is_err() {
                return (started.elapsed(), true, trickle);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        (started.elapsed(), false, trickle)
    });
    let idle_closed = closed_within(&mut idle, Duration::from_secs(5)).await;
    assert!(
        idle_closed.is_some(),
        "idle connection still open after 5 s"
    );
    let (_, write_failed, mut trickle) = trickler.await.expect("trickler");
    // Either a write already failed, or the socket reads as closed now.
    if !write_failed {
        let end = closed_within(&mut trickle, Duration::from_secs(1)).await;
        assert!(end.is_some(), "trickled upgrade never closed");
    }
    // A prompt client is still served.
    let a = http_from(&server, ip(9), "GET", "/healthz", "", "").await;
    assert_eq!(a.status, 200);
}

#[tokio::test]
async fn an_idle_unjoined_websocket_is_closed_with_4004_but_a_joined_one_stays() {
    let server = start(quick_timeouts()).await;
    let code = server.create_room(long_clock()).await;
    let mut idle = client_from(&server, ip(11)).await;
    let mut player = client_from(&server, ip(11)).await;
    player.join(&code, "Ana", None).await;
    let started = Instant::now();
    assert_eq!(close_code(&mut idle).await, Some(4004));
    assert!(started.elapsed() < Duration::from_secs(5));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_answers_ping(&mut player).await;
}

#[tokio::test]
async fn pings_detect_a_half_open_client_and_its_seat_shows_disconnected() {
    let mut config = test_config();
    config.timeouts.ping_interval = Duration::from_millis(300);
    config.timeouts.pong_timeout = Duration::from_millis(300);
    let server = start(config).await;
    let code = server.create_room(long_clock()).await;
    let mut ana = server.client().await;
    ana.join(&code, "Ana", Some("yellow")).await;
    let mut gone = server.client().await;
    gone.join(&code, "Bea", Some("red")).await;
    // Bea's device vanishes: her socket stays open but nothing comes back from it (the
    // test no longer polls it, so not even pongs are sent).
    ana.until("Bea shown connected", |v| {
        v["type"] == "presence" && v["connected"] == json!(["yellow", "red"])
    })
    .await;
    let started = Instant::now();
    let presence = ana
        .until("Bea shown disconnected", |v| {
            v["type"] == "presence" && v["connected"] == json!(["yellow"])
        })
        .await;
    assert_eq!(presence["connected"], json!(["yellow"]));
    let detected = started.elapsed();
    // Within ping interval + pong timeout (0.6 s) plus scheduling slack, far inside the
    // room's grace period (an hour): the seat is kept, shown disconnected.
    assert!(detected < Duration::from_secs(5), "took {detected:?}");
    let view = server.room(&code).await;
    let bea = &view["seats"][1];
    assert_eq!(
        (
            bea["name"].clone(),
            bea["connected"].clone(),
            bea["abandoned"].clone()
        ),
        (json!("Bea"), json!(false), json!(false)),
        "{view}"
    );
    // Ana, who reads (and so answers pings), is still connected.
    assert_answers_ping(&mut ana).await;
    drop(gone);
}

#[tokio::test]
async fn a_client_that_stops_reading_is_dropped_within_the_write_timeout() {
    let mut config = test_config();
    config.timeouts.write = Duration::from_secs(1);
    // The frame-count queue is not what trips here: it is large.
    config.outbound_queue = 100_000;
    config.send_buffer_bytes = Some(4096);
    let server = start(config).await;
    let code = server.create_room(long_clock()).await;
    let mut ana = server.client().await;
    ana.join(&code, "Ana", Some("yellow")).await;
    let mut stalled = server.small_buffer_client().await;
    stalled.watch(&code).await;
    // Ana changes colour until the stalled spectator is gone; its buffers hold a few KB.
    let started = Instant::now();
    let mut spectators = 1;
    for i in 0..2000 {
        let colour = if i % 2 == 0 { "red" } else { "yellow" };
        ana.ok(json!({"type": "choose_colour", "colour": colour}))
            .await;
        if i % 50 == 49 {
            spectators = server.room(&code).await["spectators"]
                .as_u64()
                .unwrap_or(99);
            if spectators == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    assert_eq!(spectators, 0, "stalled spectator still attached");
    assert!(started.elapsed() < Duration::from_secs(30));
    let end = close_code(&mut stalled).await;
    assert!(end.is_none() || end == Some(4001), "{end:?}");
    // Ana was never dropped.
    assert_answers_ping(&mut ana).await;
}

/// A fast bot game, watched: a burst of frames. A spectator that reads everything promptly
/// gets every event and is never dropped; one that stopped reading, in the same room, is
/// dropped within the write timeout (plus the time its few KB of buffers take to fill).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_reader_survives_a_burst_that_drops_a_stalled_one_in_the_same_room() {
    let mut config = test_config();
    config.timeouts.write = Duration::from_secs(1);
    config.send_buffer_bytes = Some(4096);
    let server = start(config).await;
    let (code, mut me) = ana_and_three_quick_bots(&server).await;
    let mut healthy = server.client().await;
    healthy.watch(&code).await;
    let mut stalled = server.small_buffer_client().await;
    stalled.watch(&code).await;
    me.ok(json!({"type": "start"})).await;
    // Ana leaves: three bots play as fast as they can, two spectators watch.
    me.ok(json!({"type": "leave"})).await;
    let started = Instant::now();
    drop(me);

    let reader = read_to_the_end(healthy);
    // The stalled spectator goes, within the write timeout and a few seconds of slack.
    let mut dropped_after = None;
    while started.elapsed() < Duration::from_secs(10) {
        let view = server.room(&code).await;
        if view["spectators"] == 1 {
            dropped_after = Some(started.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let dropped_after = dropped_after
        .expect("the stalled spectator was still attached 10 s after the game started");
    assert!(
        dropped_after >= Duration::from_secs(1),
        "dropped before its write timeout: {dropped_after:?}"
    );
    let end = close_code(&mut stalled).await;
    assert!(end.is_none() || end == Some(4001), "{end:?}");

    // Every event of the game, in order, none missing; still served (and still watching).
    let _healthy = assert_read_it_all(reader).await;
    assert_eq!(server.room(&code).await["spectators"], 1);
}

// ----- Origin, framing, rate-limit answers -----------------------------------------------

async fn upgrade_status(server: &Server, origin: Option<&str>, host: &str) -> (u16, Value) {
    let mut s = connect_from(server, ip(12)).await;
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    let req = format!(
        "GET /ws HTTP/1.1\r\nHost: {host}\r\n{origin}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = vec![0u8; 4096];
    let mut got = Vec::new();
    // Read the head (and the body of a refusal, which closes).
    let _ = tokio::time::timeout(Duration::from_millis(500), async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    let text = String::from_utf8_lossy(&got).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .and_then(|(_, b)| serde_json::from_str(b).ok())
        .unwrap_or(Value::Null);
    (status, body)
}

#[tokio::test]
async fn websockets_from_pages_of_other_origins_are_refused() {
    let mut config = test_config();
    config.allowed_origins = vec!["https://parchis.example".into()];
    let server = start(config).await;
    let own = server.addr.to_string();
    let (status, body) = upgrade_status(&server, Some("https://evil.example"), &own).await;
    assert_eq!(status, 403);
    assert_eq!(body["code"], "origin_not_allowed", "{body}");
    assert_eq!(
        upgrade_status(&server, Some("https://parchis.example"), &own)
            .await
            .0,
        101
    );
    assert_eq!(
        upgrade_status(&server, None, &own).await.0,
        101,
        "apps send no Origin"
    );
    let same = format!("http://{own}");
    assert_eq!(
        upgrade_status(&server, Some(&same), &own).await.0,
        101,
        "the server's own page"
    );
}

/// A masked client frame with `first` (FIN, RSV, opcode) and `payload`.
fn raw_frame(first: u8, payload: &[u8]) -> Vec<u8> {
    let mask = [1u8, 2, 3, 4];
    let mut f = vec![first];
    match payload.len() {
        n if n < 126 => f.push(0x80 | n as u8),
        n if n <= u16::MAX as usize => {
            f.push(0x80 | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(0x80 | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(&mask);
    f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    f
}

async fn close_after_raw(server: &Server, bytes: Vec<u8>) -> Option<u64> {
    let mut c = client_from(server, ip(13)).await;
    let MaybeTlsStream::Plain(tcp) = c.ws.get_mut() else {
        panic!("plain tcp");
    };
    tcp.write_all(&bytes).await.expect("raw write");
    close_code(&mut c).await
}

#[tokio::test]
async fn framing_violations_close_with_1009_1002_and_1007() {
    let server = start(test_config()).await;
    // A header announcing a 1 MiB frame (the hard limit is 64 KiB): 1009 before the
    // payload is even sent.
    let mut big = vec![0x81u8, 0x80 | 127];
    big.extend_from_slice(&(1u64 << 20).to_be_bytes());
    big.extend_from_slice(&[1, 2, 3, 4]);
    assert_eq!(close_after_raw(&server, big).await, Some(1009));
    // A reserved opcode (0x3): protocol error.
    assert_eq!(
        close_after_raw(&server, raw_frame(0x83, b"hi")).await,
        Some(1002)
    );
    // RSV1 set without an extension: protocol error.
    assert_eq!(
        close_after_raw(&server, raw_frame(0xC1, b"{}")).await,
        Some(1002)
    );
    // A text frame that is not UTF-8.
    assert_eq!(
        close_after_raw(&server, raw_frame(0x81, &[0xFF, 0xFE, 0x41])).await,
        Some(1007)
    );
}

#[tokio::test]
async fn rate_limited_errors_echo_the_request_id() {
    let mut config = test_config();
    config.commands_per_second = 2;
    config.max_errors = 1000;
    let server = start(config).await;
    let mut c = server.client().await;
    for req in 100..120u64 {
        c.send_text(&json!({"type": "ping", "req": req}).to_string())
            .await;
    }
    let mut limited = Vec::new();
    let mut ponged = Vec::new();
    while limited.len() + ponged.len() < 20 {
        let v = c.next().await.expect("open");
        match v["type"].as_str() {
            Some("pong") => ponged.push(v["req"].as_u64().expect("req")),
            Some("error") => {
                assert_eq!(v["code"], "rate_limited", "{v}");
                limited.push(v["req"].as_u64().expect("rate_limited carries req"));
            }
            _ => {}
        }
    }
    let mut all: Vec<u64> = limited.iter().chain(&ponged).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (100..120).collect::<Vec<_>>());
    assert!(limited.len() >= 10, "{limited:?}");
}

// ----- strict input --------------------------------------------------------------------

#[tokio::test]
async fn settings_must_be_one_json_object_with_known_fields() {
    let server = start(test_config()).await;
    for body in [
        r#"["online", 2, 30]"#,
        r#""online""#,
        "2",
        r#"{"seats": 2, "colour": "red"}"#,
    ] {
        let (status, answer) = server.http("POST", "/api/rooms", Some(body)).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["code"], "bad_request", "{body}: {answer}");
    }
    let (status, _) = server
        .http("POST", "/api/rooms", Some(r#" {"seats": 2} "#))
        .await;
    assert_eq!(status, 201);
}

#[tokio::test]
async fn invisible_and_bot_like_names_are_refused_and_names_are_cleaned() {
    let server = start(test_config()).await;
    let code = server.create_room(long_clock()).await;
    let mut c = server.client().await;
    for name in [
        "\u{200B}\u{200D}\u{2060}",
        "\u{3164}",
        " \u{FEFF} ",
        "Greedy bot 1",
        "ＢＯＴ",
    ] {
        let e = c
            .refused(
                json!({"type": "join", "room": code, "name": name}),
                "bad_request",
            )
            .await;
        assert!(
            e["message"].as_str().is_some_and(|m| m.contains("name")),
            "{e}"
        );
    }
    c.join(&code, " Ana\u{200B}  María ", None).await;
    assert_eq!(server.room(&code).await["seats"][0]["name"], "Ana María");
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_forwarded_address_is_limited_not_the_proxy() {
    let mut config = test_config();
    config.limits.room_creations_per_minute = 3;
    config.limits.trusted_proxies = vec![ip(50)];
    let server = start(config).await;
    let create = |from: IpAddr, forwarded: &'static str| {
        let server = &server;
        async move {
            let header = format!("X-Forwarded-For: {forwarded}\r\n");
            http_from(server, from, "POST", "/api/rooms", &header, "{}")
                .await
                .status
        }
    };
    // Through the proxy: one client floods, another still creates.
    for _ in 0..3 {
        assert_eq!(create(ip(50), "203.0.113.1").await, 201);
    }
    assert_eq!(create(ip(50), "203.0.113.1").await, 429);
    assert_eq!(create(ip(50), "6.6.6.6, 203.0.113.2").await, 201);
    // A peer that is not a trusted proxy cannot pose as others.
    for _ in 0..3 {
        assert_eq!(create(ip(51), "203.0.113.9").await, 201);
    }
    assert_eq!(create(ip(51), "203.0.113.10").await, 429);
}

#[tokio::test]
async fn a_person_whose_bot_game_ended_while_away_after_a_restart_still_gets_the_result() {
    let dir = tempfile::tempdir().expect("tempdir");
    let open = || parchis_store::open_store(None, dir.path());
    let first = common::start_on(test_config(), open().await.expect("sqlite")).await;
    let code = first
        .create_room(json!({
            "seats": 4,
            "bots": "greedy",
            "bot_think_ms": 1,
            "turn_clock_secs": 600,
            "disconnect_grace_secs": 1,
        }))
        .await;
    let mut me = first.client().await;
    me.join(&code, "Ana", Some("yellow")).await;
    me.ok(json!({"type": "start"})).await;
    let token = me.token.clone().expect("token");
    drop(me);
    first.shutdown.cancel();
    let _ = first.task.await;

    // The server comes back; Ana does not. Her grace runs out, she has abandoned, and the
    // three bots finish the game; the finished room, with nobody in it, is disposed of.
    let second = common::start_on(test_config(), open().await.expect("sqlite again")).await;
    let mut gone = false;
    for _ in 0..600 {
        let (status, _) = second
            .http("GET", &format!("/api/rooms/{code}"), None)
            .await;
        if status == 404 {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "the bot game did not finish within 60 s");
    let games = second
        .http("GET", &format!("/api/games?room={code}"), None)
        .await
        .1;
    let game_id = games["games"][0]["id"]
        .as_str()
        .expect("a stored game")
        .to_owned();

    let mut me = second.client().await;
    let e = me
        .refused(
            json!({"type": "resume", "room": code, "token": token, "last_seq": 3}),
            "game_over",
        )
        .await;
    let message = e["message"].as_str().unwrap_or_default();
    assert!(message.contains("you played yellow"), "{e}");
    assert!(message.contains(&format!("/api/games/{game_id}")), "{e}");
    assert!(message.contains("winner"), "{e}");
    // A token of no seat still learns nothing about the room.
    me.refused(
        json!({"type": "resume", "room": code, "token": "00", "last_seq": 0}),
        "unknown_room",
    )
    .await;
    second.shutdown.cancel();
}

// ----- bots ---------------------------------------------------------------------------

#[tokio::test]
async fn bot_rooms_are_limited_per_address_and_for_the_server() {
    let mut config = test_config();
    config.limits.max_bot_rooms_per_address = 2;
    config.limits.max_bot_rooms = 3;
    let server = start(config).await;
    let bots = r#"{"seats": 2, "bots": "random"}"#;
    for _ in 0..2 {
        assert_creates(&server, ip(60), bots).await;
    }
    let a = create_from(&server, ip(60), bots).await;
    a.assert_refused(429, "rate_limited");
    assert!(
        a.body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("bots"),
        "{}",
        a.body
    );
    // Rooms without bots are still fine for that address.
    assert_creates(&server, ip(60), "{}").await;
    assert_creates(&server, ip(61), bots).await;
    // Three bot rooms are open: the server takes no fourth, from anyone.
    create_from(&server, ip(62), bots)
        .await
        .assert_refused(503, "server_full");
}

/// The open-lobby limit of an address is checked and counted in one step: six creations
/// from one address at once, every room's store write held at a gate, against a limit of
/// two lobbies. Exactly two reach the store; the other four are refused 429 while the
/// two still wait (before, each of the six passed the check before any was counted, and
/// all six were created). Once the gate opens both are created, and the address's next
/// creation is refused.
#[tokio::test]
async fn concurrent_creations_from_one_address_do_not_pass_its_lobby_limit_together() {
    use crate::gated_store::GatedStore;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let store = std::sync::Arc::new(GatedStore::holding_creations());
    let mut config = test_config();
    config.limits.max_lobbies_per_address = 2;
    config.limits.room_creations_per_minute = 100;
    let server = common::start_on(config, store.clone()).await;
    let answered = AtomicUsize::new(0);
    let creations = futures_util::future::join_all((0..6).map(|_| async {
        let a = create_from(&server, ip(70), "{}").await;
        answered.fetch_add(1, Ordering::SeqCst);
        a
    }));
    let probe = async {
        // Four answers while the gate is still shut: they never reached the store (5 s:
        // well within the answers' own time-out, so this is what fails first).
        let until = Instant::now() + Duration::from_secs(5);
        while answered.load(Ordering::SeqCst) < 4 {
            assert!(
                Instant::now() < until,
                "only {} of six creations answered before the gate opened",
                answered.load(Ordering::SeqCst)
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        store.creations.arrived_at_least(2).await;
        assert_eq!(store.creations.arrived(), 2, "two reached the store");
        assert_eq!(answered.load(Ordering::SeqCst), 4, "the two still wait");
        store.creations.open();
    };
    let (answers, ()) = tokio::join!(creations, probe);
    let mut statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 201, 429, 429, 429, 429]);
    for a in answers.iter().filter(|a| a.status == 429) {
        a.assert_refused(429, "rate_limited");
        let message = a.body["message"].as_str().unwrap_or_default();
        assert!(message.contains("unstarted rooms"), "{}", a.body);
    }
    // Two lobbies open: the next one is refused, another address's is not.
    create_from(&server, ip(70), "{}")
        .await
        .assert_refused(429, "rate_limited");
    assert_creates(&server, ip(71), "{}").await;
    assert_eq!(store.creations.arrived(), 3);
    server.shutdown.cancel();
}

#[tokio::test]
async fn a_bot_game_nobody_watches_is_slowed_to_the_minimum_think_time() {
    let mut config = test_config();
    config.min_unwatched_bot_think = Duration::from_millis(250);
    let server = start(config).await;
    let (code, mut me) = ana_and_three_quick_bots(&server).await;
    me.ok(json!({"type": "start"})).await;
    // Ana leaves: three bots play on with nobody watching.
    me.ok(json!({"type": "leave"})).await;
    drop(me);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = server.room(&code).await["seq"].as_u64().expect("seq");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = server.room(&code).await["seq"].as_u64().expect("seq");
    // One bot action (a roll or a move) every 250 ms at most, each a few events: about
    // 8 actions in 2 s, where bots thinking 0 ms make hundreds.
    assert!(after > before, "the bots stopped");
    assert!(after - before <= 8 * 4, "{} events in 2 s", after - before);
    // Someone watches: the room's own think time (0 ms) applies again.
    let mut watcher = server.client().await;
    watcher.watch(&code).await;
    let watched = server.room(&code).await["seq"].as_u64().expect("seq");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let later = server.room(&code).await;
    let moved = later["seq"].as_u64().expect("seq") - watched;
    assert!(
        moved > 8 || later["status"] == "finished",
        "{moved} events in 0.5 s watched"
    );
}

// ----- spectators and fan-out -----------------------------------------------------------

#[tokio::test]
async fn a_room_takes_no_more_spectators_than_its_cap_and_one_address_no_more_watches() {
    let mut config = test_config();
    config.limits.watches_per_minute = 4;
    let server = start(config).await;
    let (status, body) = server
        .http("POST", "/api/rooms", Some(r#"{"max_spectators": 100000}"#))
        .await;
    assert_eq!(
        (status, body["code"].clone()),
        (400, json!("bad_request")),
        "{body}"
    );
    let code = server.create_room(json!({"max_spectators": 3})).await;
    assert_eq!(server.room(&code).await["settings"]["max_spectators"], 3);
    let mut watchers = Vec::new();
    for n in 0..3 {
        let mut w = client_from(&server, ip(70 + n)).await;
        w.watch(&code).await;
        watchers.push(w);
    }
    let mut late = client_from(&server, ip(73)).await;
    late.refused(
        json!({"type": "watch", "room": code}),
        "too_many_spectators",
    )
    .await;
    // The default cap is generous but finite.
    let open = server.create_room(json!({})).await;
    let default_cap = server.room(&open).await["settings"]["max_spectators"].as_u64();
    assert!(
        default_cap.is_some_and(|c| (50..=1000).contains(&c)),
        "{default_cap:?}"
    );
    // One address: four watches a minute.
    let mut eager = client_from(&server, ip(74)).await;
    let mut refused = None;
    for _ in 0..5 {
        let req = eager.cmd(json!({"type": "watch", "room": open})).await;
        let r = eager.reply(req).await;
        if r["type"] == "welcome" {
            eager = client_from(&server, ip(74)).await;
        } else {
            refused = Some(r);
            break;
        }
    }
    let refused = refused.expect("a watch refused");
    assert_eq!(refused["code"], "rate_limited", "{refused}");
}

#[tokio::test]
async fn players_are_not_disconnected_by_a_thousand_spectator_joins() {
    let server = start(test_config()).await;
    let settings = json!({"seats": 2, "turn_clock_secs": 600, "disconnect_grace_secs": 3600, "max_spectators": 1000});
    let (code, mut players) = common::seated_game(&server, settings, &["yellow", "red"]).await;
    // 1,000 spectator joins (the most a room allows): one honest spectator that reads
    // everything, and 999 that join from 40 addresses, 50 at a time, and never read.
    let mut honest = server.client().await;
    honest.watch(&code).await;
    let mut crowd = Vec::new();
    // The last presence frame each player read while draining (it may already be the one
    // that counts the whole crowd: presence is coalesced and can arrive during a drain).
    let mut seen: Vec<Option<Value>> = vec![None; players.len()];
    for batch in 0..20u32 {
        let joins = (0..50u32).filter(|i| batch * 50 + i < 999).map(|i| {
            let server = &server;
            let code = code.clone();
            async move {
                let n = batch * 50 + i;
                let mut c = client_from(server, ip(100 + (n % 40) as u8)).await;
                let req = c.cmd(json!({"type": "watch", "room": code})).await;
                let w = c.reply(req).await;
                assert_eq!(w["type"], "welcome", "{w}");
                c
            }
        });
        crowd.extend(futures_util::future::join_all(joins).await);
        // The players keep playing meanwhile.
        for (p, seen) in players.iter_mut().zip(seen.iter_mut()) {
            while let Ok(Some(v)) = tokio::time::timeout(Duration::from_millis(1), p.next()).await {
                assert_ne!(v["type"], "ws_close", "player dropped: {v}");
                assert_ne!(v["type"], "closing", "player dropped: {v}");
                if v["type"] == "presence" {
                    *seen = Some(v);
                }
            }
        }
    }
    assert_eq!(crowd.len(), 999);
    // Every player still holds a live connection and hears the room.
    let view = server.room(&code).await;
    assert_eq!(view["spectators"], 1000, "{}", view["spectators"]);
    for seat in view["seats"].as_array().expect("seats") {
        assert_eq!(seat["connected"], true, "{seat}");
    }
    for (p, seen) in players.iter_mut().zip(seen) {
        let last = match seen.filter(|v| v["spectators"] == 1000) {
            Some(v) => v,
            None => {
                p.until("presence with the crowd", |v| {
                    v["type"] == "presence" && v["spectators"] == 1000
                })
                .await
            }
        };
        assert_eq!(last["connected"], json!(["yellow", "red"]));
    }
    // Presence is coalesced: far fewer presence frames than joins reached the honest
    // spectator, which read all along.
    let mut frames = 0;
    loop {
        let v = honest
            .next()
            .await
            .expect("honest spectator still connected");
        assert_ne!(v["type"], "ws_close", "{v}");
        if v["type"] == "presence" {
            frames += 1;
            if v["spectators"] == 1000 {
                break;
            }
        }
    }
    assert!(frames < 200, "{frames} presence frames for 1,000 joins");
    // And the game goes on: the player to act can still act.
    let req = players[0].cmd(json!({"type": "roll"})).await;
    let r = players[0].reply(req).await;
    assert!(r["type"] == "ok" || r["code"] == "not_your_turn", "{r}");
    drop(crowd);
}

#[tokio::test]
async fn a_command_after_the_deadline_gets_not_your_turn() {
    let server = start(test_config()).await;
    let settings = json!({"seats": 2, "turn_clock_secs": 1, "disconnect_grace_secs": 3600, "timeouts_to_abandon": 10});
    let (_code, mut players) = common::seated_game(&server, settings, &["yellow", "red"]).await;
    let yellow = &mut players[0];
    yellow.my_turn().await;
    let seq = yellow.seq;
    // Yellow thinks too long: the clock runs out and the turn passes.
    yellow
        .until("yellow's timeout", |v| {
            Client::is_game_event(v, "timed_out")
        })
        .await;
    let e = yellow
        .refused(json!({"type": "roll", "seq": seq}), "not_your_turn")
        .await;
    assert!(
        e["message"].as_str().unwrap_or_default().contains("turn"),
        "{e}"
    );
}

/// A `leave` is acknowledged only once stored (issue 25): when the database cannot be
/// reached the leave is refused `room_unavailable`, the player keeps the seat and the
/// session stays joined (its next command reaches the room, not `not_joined`), nobody
/// hears of a leave; the same `leave` sent again is stored, acknowledged, announced, and
/// the session may join again.
#[tokio::test]
async fn a_refused_leave_keeps_the_seat_and_the_session_joined() {
    use crate::gated_store::GatedStore;
    use std::sync::atomic::Ordering;
    let store = std::sync::Arc::new(GatedStore::default());
    store.pings.open();
    let server = common::start_on(test_config(), store.clone()).await;
    let code = server.create_room(json!({"seats": 4})).await;
    let mut clients = common::yellow_and_red(&server, &code).await;
    let (mut ana, mut luis) = (clients.remove(0), clients.remove(0));
    store.failing_seat_deletes.store(1, Ordering::SeqCst);
    let refused = luis
        .refused(
            json!({"type": "leave", "room": code, "seq": 2}),
            "room_unavailable",
        )
        .await;
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("nothing was applied")),
        "{refused}"
    );
    // Still joined: a colour change reaches the room (and is applied).
    let seq = server.room(&code).await["seq"].as_u64().expect("seq");
    luis.ok(json!({"type": "choose_colour", "room": code, "seq": seq, "colour": "green"}))
        .await;
    let view = server.room(&code).await;
    assert_eq!(view["seats"].as_array().map(Vec::len), Some(2), "{view}");
    let seq = view["seq"].as_u64().expect("seq");
    luis.ok(json!({"type": "leave", "room": code, "seq": seq}))
        .await;
    ana.until("Luis left", |v| v["event"]["type"] == "player_left")
        .await;
    let view = server.room(&code).await;
    assert_eq!(view["seats"].as_array().map(Vec::len), Some(1), "{view}");
    // Unjoined now: the session may join again.
    luis.join(&code, "Luis", Some("blue")).await;
}
