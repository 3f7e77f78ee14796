//! Accounts in a cluster (issue 26): sessions and bearer tokens live in the database, so
//! a session made on node a works on node b (HTTP and the WebSocket), and a log-out on b
//! ends it on a too; a seat taken through b in a room a owns shows the account's rating.

use crate::harness::{Cluster, Opts};
use serde_json::{json, Value};
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// `(status, head as sent, JSON body or null)`.
async fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    header: &str,
    body: &str,
) -> (u16, String, Value) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let extra = if header.is_empty() {
        String::new()
    } else {
        format!("{header}\r\n")
    };
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.expect("read");
    let text = String::from_utf8_lossy(&buf).to_string();
    let (head, body) = text.split_once("\r\n\r\n").expect("head");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let json = if body.trim().is_empty() {
        Value::Null
    } else {
        crate::common::json_body(head, body)
    };
    (status, head.to_owned(), json)
}

fn session_cookie(head: &str) -> String {
    head.lines()
        .find_map(|l| {
            let (name, v) = l.split_once(": ")?;
            let pair = v.split(';').next()?.trim();
            (name.eq_ignore_ascii_case("set-cookie") && pair.starts_with("parchis_session="))
                .then(|| pair.to_owned())
        })
        .expect("a session cookie")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_made_on_one_node_works_on_another() {
    let test = "a_session_made_on_one_node_works_on_another";
    let opts = Opts {
        nodes: 2,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let (a, b) = (cluster.addr(0), cluster.addr(1));
    let creds = json!({"username": "Nodo_A", "password": "correct horse battery"}).to_string();
    let (status, head, body) = call(a, "POST", "/api/accounts", "", &creds).await;
    assert_eq!(status, 201, "{body}");
    let cookie = format!("Cookie: {}", session_cookie(&head));
    let token = body["token"].as_str().expect("token").to_owned();

    let (status, _, me) = call(b, "GET", "/api/me", &cookie, "").await;
    assert_eq!(
        (status, me["username"].clone()),
        (200, json!("Nodo_A")),
        "cookie on b"
    );
    let bearer = format!("Authorization: Bearer {token}");
    let (status, _, me) = call(b, "GET", "/api/me", &bearer, "").await;
    assert_eq!(
        (status, me["username"].clone()),
        (200, json!("Nodo_A")),
        "token on b"
    );

    // An `online` rating of μ 30, σ 5 (display 1000 + 40·(30 − 3·5) = 1600), stored as a
    // rated game would.
    let id = me["id"].as_str().expect("id").to_owned();
    sqlx::query(
        "INSERT INTO ratings (account_id, pool, mu, sigma, games, updated_at_ms) \
         VALUES ($1::uuid, 'online', 30.0, 5.0, 3, 0)",
    )
    .bind(&id)
    .execute(&cluster.db)
    .await
    .expect("insert rating");

    // The cookie identifies the player on b's WebSocket, for a room a owns; the seat
    // shows the rating b read, carried to a with the join.
    let code = cluster
        .create_room(0, &json!({"seats": 2, "preset": "online"}))
        .await;
    let mut request = format!("ws://{b}/ws")
        .into_client_request()
        .expect("request");
    let cookie_value = cookie.trim_start_matches("Cookie: ");
    request
        .headers_mut()
        .insert("cookie", cookie_value.parse().expect("cookie"));
    let (ws, _) = tokio_tungstenite::connect_async(request).await.expect("ws");
    let mut c = crate::common::Client::new(ws);
    let w = c.join(&code, "whoever", Some("yellow")).await;
    assert_eq!(w["snapshot"]["seats"][0]["name"], "Nodo_A", "{w}");
    assert_eq!(w["snapshot"]["seats"][0]["rating"], 1600, "{w}");

    // Logging out on b ends the session and the token on a.
    let both = format!("{cookie}\r\n{bearer}");
    let (status, _, _) = call(b, "DELETE", "/api/session", &both, "").await;
    assert_eq!(status, 204);
    assert_eq!(call(a, "GET", "/api/me", &cookie, "").await.0, 401);
    assert_eq!(call(a, "GET", "/api/me", &bearer, "").await.0, 401);
}
