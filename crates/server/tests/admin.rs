//! The admin API through real HTTP and WebSocket clients: disabled without a token,
//! refuses a missing or wrong token, and with the right one lists rooms with their
//! connections, disconnects a connection (4003, the player may resume) and closes a room
//! (its game stored as ended `closed_by_admin`, connections closed with 4002, not
//! restored).

mod common;

use common::{request_raw, Client};
use parchis_server::ServerConfig;
use serde_json::{json, Value};
use std::net::SocketAddr;

const TOKEN: &str = "correct horse battery staple";

async fn admin(addr: SocketAddr, method: &str, path: &str, token: Option<&str>) -> (u16, Value) {
    let header = token.map(|t| format!("Authorization: Bearer {t}"));
    let headers: Vec<&str> = header.iter().map(String::as_str).collect();
    let (status, body) = request_raw(addr, method, path, &headers, "").await;
    let value = serde_json::from_str(&body).unwrap_or(Value::String(body));
    (status, value)
}

fn config_with_token() -> ServerConfig {
    ServerConfig {
        admin_token: Some(TOKEN.into()),
        ..common::test_config()
    }
}

async fn wait_close(c: &mut Client) -> Value {
    c.until("close frame", |v| v["type"] == "ws_close").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_api_is_disabled_without_a_token() {
    let server = common::start(common::test_config()).await;
    for (method, path) in [
        ("GET", "/admin/rooms"),
        ("POST", "/admin/rooms/ABCDEFGHJK/close"),
        ("POST", "/admin/connections/1/disconnect"),
    ] {
        let (status, body) = admin(server.addr, method, path, Some(TOKEN)).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert_eq!(body["code"], "admin_disabled", "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_api_refuses_missing_and_wrong_tokens_and_acts_with_the_right_one() {
    let server = common::start(config_with_token()).await;
    let addr = server.addr;
    refuses_bad_tokens(addr).await;
    let (code, mut clients) =
        common::seated_game(&server, json!({"seats": 2}), &["yellow", "red"]).await;
    let mut s = server.client().await;
    s.watch(&code).await;
    let (game_id, red_conn) = listed(addr, &code).await;
    let red = clients.pop().expect("red");
    let mut red2 = disconnect_and_resume(&server, &code, red_conn, red).await;
    let mut yellow = clients.pop().expect("yellow");
    close_room(&server, &code, &game_id, [&mut yellow, &mut red2, &mut s]).await;
}

/// No token, a wrong one, a prefix of the right one or no Bearer scheme: 401; the right
/// one lists no rooms yet.
async fn refuses_bad_tokens(addr: SocketAddr) {
    for token in [None, Some("wrong"), Some(""), Some("correct horse battery")] {
        let (status, body) = admin(addr, "GET", "/admin/rooms", token).await;
        assert_eq!(status, 401, "{token:?}: {body}");
        assert_eq!(body["code"], "unauthorized", "{body}");
    }
    // A raw header without the Bearer scheme is refused too.
    let (status, _) = request_raw(
        addr,
        "GET",
        "/admin/rooms",
        &[&format!("Authorization: {TOKEN}")],
        "",
    )
    .await;
    assert_eq!(status, 401);
    let (status, body) = admin(addr, "GET", "/admin/rooms", Some(TOKEN)).await;
    assert_eq!((status, body), (200, json!({"rooms": []})));
}

/// The admin list: room `code` playing, its two seated connections and the spectator's.
/// Returns the game id and red's connection id.
async fn listed(addr: SocketAddr, code: &str) -> (String, u64) {
    // List: the room, its two seated connections and the spectator's.
    let (status, list) = admin(addr, "GET", "/admin/rooms", Some(TOKEN)).await;
    assert_eq!(status, 200, "{list}");
    let rooms = list["rooms"].as_array().expect("rooms");
    assert_eq!(rooms.len(), 1, "{list}");
    let room = &rooms[0];
    assert_eq!(room["code"], code);
    assert_eq!(room["status"], "playing");
    assert_eq!(room["preset"], "online");
    let game_id = room["game_id"].as_str().expect("game id").to_owned();
    let seats = room["seats"].as_array().expect("seats");
    assert_eq!(seats.len(), 2);
    assert_eq!(
        (&seats[0]["colour"], &seats[1]["colour"]),
        (&json!("yellow"), &json!("red"))
    );
    let yellow_conn = seats[0]["conn"].as_u64().expect("yellow is connected");
    let red_conn = seats[1]["conn"].as_u64().expect("red is connected");
    let spectators = room["spectators"].as_array().expect("spectators");
    assert_eq!(spectators.len(), 1);
    let ids = [yellow_conn, red_conn, spectators[0].as_u64().expect("id")];
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2],
        "{ids:?}"
    );

    (game_id, red_conn)
}

/// Disconnects red's connection `red_conn` (4003): refused with a wrong token (red
/// stays), done with the right one, then unknown. Returns red back with its token.
async fn disconnect_and_resume(
    server: &common::Server,
    code: &str,
    red_conn: u64,
    mut red: Client,
) -> Client {
    let addr = server.addr;
    // Disconnect red: refused with a wrong token (red stays), done with the right one.
    let path = format!("/admin/connections/{red_conn}/disconnect");
    let (status, _) = admin(addr, "POST", &path, Some("nope")).await;
    assert_eq!(status, 401);
    let view = server.room(code).await;
    assert_eq!(
        view["seats"][1]["connected"], true,
        "a refused request changes nothing"
    );
    let (status, body) = admin(addr, "POST", &path, Some(TOKEN)).await;
    assert_eq!((status, body), (200, json!({"conn": red_conn})));
    let closing = red.until("closing", |v| v["type"] == "closing").await;
    assert_eq!(closing["code"], 4003, "{closing}");
    assert_eq!(wait_close(&mut red).await["code"], 4003);
    let (status, body) = admin(addr, "POST", &path, Some(TOKEN)).await;
    assert_eq!(status, 404, "the connection is gone: {body}");
    assert_eq!(body["code"], "unknown_connection");
    // The player comes back with its token.
    let token = red.token.clone().expect("red's token");
    let mut red2 = server.client().await;
    red2.resume(code, &token, red.seq).await;

    red2
}

/// Closes room `code`: wrong token first (nothing happens), then the right one; every
/// connection in `clients` is closed (4002) after the seed is revealed, the game stored
/// as closed by the admin, the room gone and not restored.
async fn close_room(server: &common::Server, code: &str, game_id: &str, clients: [&mut Client; 3]) {
    let addr = server.addr;
    // Close the room: wrong token first (nothing happens), then the right one.
    let close = format!("/admin/rooms/{code}/close");
    let (status, _) = admin(addr, "POST", &close, None).await;
    assert_eq!(status, 401);
    assert_eq!(server.room(code).await["status"], "playing");
    let (status, body) = admin(addr, "POST", &close, Some(TOKEN)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"code": code, "game_id": game_id, "connections_closed": 3})
    );
    for c in clients {
        let closed = wait_close(c).await;
        assert_eq!(closed["code"], 4002, "{closed}");
        // Closing ends the game: its server seed is revealed first (docs/FAIR_DICE.md).
        let revealed = c
            .events
            .iter()
            .find(|e| e["event"]["type"] == "dice_revealed")
            .cloned()
            .unwrap_or_else(|| panic!("dice_revealed before the close: {:?}", c.events.last()));
        assert_eq!(
            revealed["event"]["server_seed"].as_str().map(str::len),
            Some(64)
        );
    }
    // The game is stored as ended by the admin; the room is gone and not restored.
    let (status, game) = server
        .http("GET", &format!("/api/games/{game_id}"), None)
        .await;
    assert_eq!(status, 200, "{game}");
    assert_eq!(game["reason"], "closed_by_admin", "{game}");
    assert_eq!(
        game["dice"]["server_seed"].as_str().map(str::len),
        Some(64),
        "the games API reveals the seed of a closed game: {game}"
    );
    assert!(game["finished_at_ms"].as_i64().is_some(), "{game}");
    let (status, _) = server
        .http("GET", &format!("/api/rooms/{code}"), None)
        .await;
    assert_eq!(status, 404);
    assert!(server
        .store
        .load_unfinished()
        .await
        .expect("load")
        .is_empty());
    let (status, body) = admin(addr, "POST", &close, Some(TOKEN)).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["code"], "unknown_room");
    let (_, list) = admin(addr, "GET", "/admin/rooms", Some(TOKEN)).await;
    assert_eq!(list, json!({"rooms": []}));
}
