//! Test harness: the real server on port 0 over a `MemoryStore`, a tiny HTTP client, and a
//! tokio-tungstenite WebSocket client that tracks the room's event seq.
//!
//! Why one file over 600 lines: it is the shared harness of every server test binary
//! (and of the CLI's, which includes it by path), one helper after another; one file keeps
//! those includes to one line each.
#![allow(dead_code)]

pub mod tour;

use futures_util::{SinkExt, StreamExt};
use parchis_server::{AppState, ServerConfig};
use parchis_store::{EventRecord, GameRecord, MemoryStore, Store};
use serde_json::{json, Value};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;

/// How long a test waits for any one expected message.
pub const WAIT: Duration = Duration::from_secs(10);

/// A running server.
pub struct Server {
    pub addr: SocketAddr,
    pub shutdown: CancellationToken,
    pub store: Arc<dyn Store>,
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// The test configuration: fixed dice seed, generous rate limit, no per-address limits
/// (every test client comes from 127.0.0.1).
pub fn test_config() -> ServerConfig {
    ServerConfig {
        dice_seed: Some(7),
        commands_per_second: 2000,
        limits: parchis_server::config::Limits::unlimited_per_address(),
        // Tests play bot games unwatched at full speed (one test checks the minimum).
        min_unwatched_bot_think: Duration::ZERO,
        ..ServerConfig::default()
    }
}

/// Starts the real server on 127.0.0.1:0.
pub async fn start(config: ServerConfig) -> Server {
    start_on(config, Arc::new(MemoryStore::new())).await
}

/// Starts the real server on 127.0.0.1:0 over `store`.
pub async fn start_on(config: ServerConfig, store: Arc<dyn Store>) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let state = AppState::new(config, store.clone());
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(parchis_server::run(listener, state, shutdown.clone()));
    Server {
        addr,
        shutdown,
        store,
        task,
    }
}

/// As [`start_on`], after bringing back the store's unfinished rooms first, as the
/// binary does at its start; also returns how many rooms were restored.
pub async fn start_recovered(config: ServerConfig, store: Arc<dyn Store>) -> (Server, usize) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let state = AppState::new(config, store.clone());
    let restored = parchis_server::recover(&state).await.expect("recover");
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(parchis_server::run(listener, state, shutdown.clone()));
    let server = Server {
        addr,
        shutdown,
        store,
        task,
    };
    (server, restored)
}

impl Server {
    /// `(status, JSON body)` of an HTTP request.
    pub async fn http(&self, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
        http_at(self.addr, method, path, body).await
    }
}

pub async fn http_at(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, Value) {
    try_http_at(addr, method, path, body)
        .await
        .expect("an HTTP answer")
}

/// As [`http_at`], but `None` when the connection fails or closes without an answer.
pub async fn try_http_at(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Option<(u16, Value)> {
    let mut s = TcpStream::connect(addr).await.ok()?;
    let body = body.unwrap_or("");
    let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
    s.write_all(req.as_bytes()).await.ok()?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.ok()?;
    let text = String::from_utf8_lossy(&buf).to_string();
    let status: u16 = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    Some((status, json_body(head, body)))
}

/// The body of an HTTP answer whose head is `head`, as JSON (a JSON string holding the
/// text when it is not JSON). Of a chunked body only the JSON lines are kept.
pub fn json_body(head: &str, body: &str) -> Value {
    let text = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body.lines()
            .filter(|l| l.starts_with('{') || l.starts_with('['))
            .collect::<String>()
    } else {
        body.to_owned()
    };
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

impl Server {
    /// Creates a room with `settings` (JSON object), returns its code.
    pub async fn create_room(&self, settings: Value) -> String {
        let (status, body) = self
            .http("POST", "/api/rooms", Some(&settings.to_string()))
            .await;
        assert_eq!(status, 201, "{body}");
        body["code"].as_str().expect("code").to_owned()
    }

    /// `GET /api/rooms/{code}`.
    pub async fn room(&self, code: &str) -> Value {
        let (status, body) = self.http("GET", &format!("/api/rooms/{code}"), None).await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// The stored record and events of the game whose id (a UUID) is `game_id`; panics
    /// when the id is no UUID or the game is not stored.
    /// Its events are read back in whichever format they were stored (a packed log is
    /// unpacked) and given as the JSON rows of the format before it.
    pub async fn stored_game(&self, game_id: &str) -> (GameRecord, Vec<EventRecord>) {
        let id = game_id.parse().expect("uuid");
        let stored = self
            .store
            .get_game_log(id)
            .await
            .ok()
            .flatten()
            .expect("game stored");
        let events = parchis_room_core::persist::game_events(&stored).expect("stored log reads");
        (stored.game, parchis_room_core::persist::records_of(&events))
    }

    /// A connected WebSocket client.
    pub async fn client(&self) -> Client {
        client(self.addr).await
    }

    /// A client whose socket has a tiny receive buffer (for slow-reader tests).
    pub async fn small_buffer_client(&self) -> Client {
        client_from(self.addr, None, true).await
    }
}

/// A WebSocket client connected to the server at `addr` (`ws://{addr}/ws`).
pub async fn client(addr: SocketAddr) -> Client {
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .expect("ws connect");
    Client::new(ws)
}

/// A TCP connection to `addr`, from source address `from` when given (a loopback
/// address 127.0.0.x: the tests tell client addresses apart so), with a tiny receive
/// buffer (2 KB) when `small_buffer` (a reader that stalls fills it at once).
pub async fn connect_from(addr: SocketAddr, from: Option<IpAddr>, small_buffer: bool) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    if let Some(from) = from {
        socket.bind(SocketAddr::new(from, 0)).expect("bind source");
    }
    if small_buffer {
        socket.set_recv_buffer_size(2048).expect("rcvbuf");
    }
    socket.connect(addr).await.expect("connect")
}

/// A WebSocket client to the server at `addr` over [`connect_from`]`(addr, from,
/// small_buffer)`.
pub async fn client_from(addr: SocketAddr, from: Option<IpAddr>, small_buffer: bool) -> Client {
    let tcp = connect_from(addr, from, small_buffer).await;
    let (ws, _) =
        tokio_tungstenite::client_async(format!("ws://{addr}/ws"), MaybeTlsStream::Plain(tcp))
            .await
            .expect("ws handshake");
    Client::new(ws)
}

/// The loopback address 127.0.0.`n` (a client address of its own, for [`client_from`]).
pub fn ip(n: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, n])
}

/// Reads `c`, a spectator of a fast game, to the game's last event (`dice_revealed`,
/// after `game_won`) in a task of its own; the task fails if `c` is dropped
/// (`closing` or a close). Its answer: the seqs of the events read, and the client.
pub fn read_to_the_end(mut c: Client) -> tokio::task::JoinHandle<(Vec<u64>, Client)> {
    tokio::spawn(async move {
        let mut seqs = Vec::new();
        loop {
            let v = c.next().await.expect("reader disconnected");
            assert!(
                v["type"] != "ws_close" && v["type"] != "closing",
                "reader dropped: {v}"
            );
            if v["type"] == "event" {
                seqs.push(v["seq"].as_u64().expect("seq"));
                if v["event"]["type"] == "dice_revealed" {
                    return (seqs, c);
                }
            }
        }
    })
}

/// Waits (at most 120 s) for a [`read_to_the_end`] reader and asserts that it read a
/// burst (over 100 events), every one in order with none missing, and still answers a
/// ping. Returns the client.
pub async fn assert_read_it_all(reader: tokio::task::JoinHandle<(Vec<u64>, Client)>) -> Client {
    let (seqs, mut c) = tokio::time::timeout(Duration::from_secs(120), reader)
        .await
        .expect("the game did not end within 120 s")
        .expect("reader");
    assert!(seqs.len() > 100, "only {} events: no burst", seqs.len());
    let first = seqs[0];
    assert_eq!(seqs, (first..first + seqs.len() as u64).collect::<Vec<_>>());
    assert_answers_ping(&mut c).await;
    c
}

/// A WebSocket client that remembers the latest room seq and its own token.
pub struct Client {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    pub seq: u64,
    pub next_req: u64,
    pub room: String,
    pub colour: Option<String>,
    pub token: Option<String>,
    /// Every `event` frame received, in order.
    pub events: Vec<Value>,
}

impl Client {
    pub fn new(ws: WebSocketStream<MaybeTlsStream<TcpStream>>) -> Client {
        Client {
            ws,
            seq: 0,
            next_req: 1,
            room: String::new(),
            colour: None,
            token: None,
            events: Vec::new(),
        }
    }

    /// Sends a raw text frame.
    pub async fn send_text(&mut self, text: &str) {
        self.ws
            .send(Message::Text(text.to_owned().into()))
            .await
            .expect("send");
    }

    /// Sends a command: fills in `req` (fresh), `room` and `seq` unless present.
    /// Returns the request id.
    pub async fn cmd(&mut self, msg: Value) -> u64 {
        self.try_cmd(msg).await.expect("send")
    }

    /// As [`Client::cmd`], but a socket that is gone is an error, not a panic.
    pub async fn try_cmd(
        &mut self,
        mut msg: Value,
    ) -> Result<u64, tokio_tungstenite::tungstenite::Error> {
        let req = self.next_req;
        self.next_req += 1;
        let obj = msg.as_object_mut().expect("object");
        obj.entry("req").or_insert(json!(req));
        obj.entry("room").or_insert(json!(self.room));
        obj.entry("seq").or_insert(json!(self.seq));
        let req = obj["req"].as_u64().unwrap_or(req);
        self.ws.send(Message::Text(msg.to_string().into())).await?;
        Ok(req)
    }

    /// The next message (panics after [`WAIT`]); `None` when the socket closed. A close
    /// frame is returned as `{"type":"ws_close","code":N,"reason":…}`.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            let frame = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("timed out waiting for a message")?;
            match frame {
                Ok(Message::Text(t)) => {
                    let v: Value = serde_json::from_str(t.as_str()).expect("server sent JSON");
                    if let Some(seq) = v.get("seq").and_then(Value::as_u64) {
                        if v["type"] != "error" {
                            self.seq = self.seq.max(seq);
                        }
                    }
                    if v["type"] == "event" {
                        self.events.push(v.clone());
                    }
                    if v["type"] == "welcome" {
                        self.room = v["room"].as_str().unwrap_or_default().to_owned();
                        if let Some(c) = v["colour"].as_str() {
                            self.colour = Some(c.to_owned());
                        }
                        if let Some(t) = v["token"].as_str() {
                            self.token = Some(t.to_owned());
                        }
                    }
                    return Some(v);
                }
                Ok(Message::Close(frame)) => {
                    let (code, reason) = frame
                        .map(|f| (u16::from(f.code), f.reason.to_string()))
                        .unwrap_or((1005, String::new()));
                    return Some(json!({"type": "ws_close", "code": code, "reason": reason}));
                }
                Ok(_) => continue,
                Err(_) => return None,
            }
        }
    }

    /// Reads until a message satisfies `pred`; returns it.
    pub async fn until(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            match self.next().await {
                Some(v) if pred(&v) => return v,
                Some(_) => continue,
                None => panic!("socket closed while waiting for {what}"),
            }
        }
    }

    /// Reads until the reply (`ok` or `error`) to request `req`.
    pub async fn reply(&mut self, req: u64) -> Value {
        self.until(&format!("reply to {req}"), |v| {
            (v["type"] == "ok" || v["type"] == "error" || v["type"] == "welcome")
                && v["req"].as_u64() == Some(req)
        })
        .await
    }

    /// Reads until an error with `code`.
    pub async fn error(&mut self, code: &str) -> Value {
        self.until(&format!("error {code}"), |v| {
            v["type"] == "error" && v["code"] == code
        })
        .await
    }

    /// Sends a command and expects `ok`.
    pub async fn ok(&mut self, msg: Value) -> Value {
        let req = self.cmd(msg).await;
        let r = self.reply(req).await;
        assert_eq!(r["type"], "ok", "{r}");
        r
    }

    /// Sends a command and expects an error with `code`.
    pub async fn refused(&mut self, msg: Value, code: &str) -> Value {
        let req = self.cmd(msg).await;
        let r = self.reply(req).await;
        assert_eq!(r["type"], "error", "{r}");
        assert_eq!(r["code"], code, "{r}");
        r
    }

    /// Joins `room` as a player, returns the welcome.
    pub async fn join(&mut self, room: &str, name: &str, colour: Option<&str>) -> Value {
        let req = self
            .cmd(json!({"type": "join", "room": room, "name": name, "colour": colour}))
            .await;
        let w = self.reply(req).await;
        assert_eq!(w["type"], "welcome", "{w}");
        w
    }

    /// Resumes the seat of `token` in `room`, from after `last_seq`; returns the welcome.
    pub async fn resume(&mut self, room: &str, token: &str, last_seq: u64) -> Value {
        let req = self
            .cmd(json!({"type": "resume", "room": room, "token": token, "last_seq": last_seq}))
            .await;
        let w = self.reply(req).await;
        assert_eq!(w["type"], "welcome", "{w}");
        w
    }

    /// Watches `room`, returns the welcome.
    pub async fn watch(&mut self, room: &str) -> Value {
        let req = self.cmd(json!({"type": "watch", "room": room})).await;
        let w = self.reply(req).await;
        assert_eq!(w["type"], "welcome", "{w}");
        w
    }

    /// Waits for this player's `your_turn`.
    pub async fn my_turn(&mut self) -> Value {
        self.until("your_turn", |v| v["type"] == "your_turn").await
    }

    /// Whether an event frame holds the engine event `kind` (e.g. `game_won`).
    pub fn is_game_event(v: &Value, kind: &str) -> bool {
        v["type"] == "event" && v["event"]["type"] == "game" && v["event"]["event"]["type"] == kind
    }
}

/// Reads until the socket's close frame or its end: the close code (`None`: no close
/// frame, e.g. a reset after the server closed).
pub async fn close_code(c: &mut Client) -> Option<u64> {
    loop {
        match c.next().await {
            Some(v) if v["type"] == "ws_close" => return v["code"].as_u64(),
            Some(_) => continue,
            None => return None,
        }
    }
}

/// The connection still works: a `ping` (with a request id of its own, past the
/// client's) gets its `pong`.
pub async fn assert_answers_ping(c: &mut Client) {
    let req = c.next_req + 10_000;
    c.next_req += 1;
    c.send_text(&json!({"type": "ping", "req": req}).to_string())
        .await;
    let pong = c
        .until("pong", |v| v["type"] == "pong" || v["type"] == "ws_close")
        .await;
    assert_eq!(pong, json!({"type": "pong", "req": req}));
}

/// The room events of kind `kind` (`opening_roll`, `game_started`…) a client saw.
pub fn room_events(c: &Client, kind: &str) -> Vec<Value> {
    c.events
        .iter()
        .filter(|e| e["type"] == "event" && e["event"]["type"] == kind)
        .map(|e| e["event"].clone())
        .collect()
}

/// Drives every client until the game is won: each player rolls or plays the first legal
/// action whenever it gets `your_turn`. Returns the `game_won` engine event, once each
/// client has also read the game's last event, `dice_revealed`.
pub async fn play_to_end(clients: Vec<Client>) -> (Value, Vec<Client>) {
    play_to_end_by(clients, |legal| legal[0].clone()).await
}

/// As [`play_to_end`], but each player plays the entry of `legal` (a non-empty JSON
/// array) that `pick` returns.
pub async fn play_to_end_by(
    clients: Vec<Client>,
    pick: fn(&Value) -> Value,
) -> (Value, Vec<Client>) {
    let mut tasks = Vec::new();
    for mut c in clients {
        tasks.push(tokio::spawn(async move {
            loop {
                let v = c.next().await.expect("socket closed mid-game");
                if Client::is_game_event(&v, "game_won") {
                    c.until("dice_revealed", |v| {
                        v["type"] == "event" && v["event"]["type"] == "dice_revealed"
                    })
                    .await;
                    return (v["event"]["event"].clone(), c);
                }
                if v["type"] == "error" {
                    panic!("unexpected error mid-game: {v}");
                }
                if v["type"] == "your_turn" && v["seq"].as_u64() == Some(c.seq) {
                    if v["must_roll"] == true {
                        c.cmd(json!({"type": "roll"})).await;
                    } else {
                        let action = pick(&v["legal"]);
                        c.cmd(json!({"type": "play", "action": action})).await;
                    }
                }
            }
        }));
    }
    let mut won = Value::Null;
    let mut out = Vec::new();
    for t in tasks {
        let (w, c) = tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .expect("game did not end in 60 s")
            .expect("player task panicked");
        won = w;
        out.push(c);
    }
    (won, out)
}

/// Creates a room, seats `colours` (first is the creator), starts the game. Returns the
/// code and the clients in seat order; each has consumed up to its first messages.
pub async fn seated_game(
    server: &Server,
    settings: Value,
    colours: &[&str],
) -> (String, Vec<Client>) {
    let code = server.create_room(settings).await;
    let mut clients = Vec::new();
    for (i, c) in colours.iter().enumerate() {
        let mut cl = server.client().await;
        cl.join(&code, &format!("p{i}"), Some(c)).await;
        clients.push(cl);
    }
    // Let everyone catch up with the joins, then the creator starts.
    let last = clients.last().map(|c| c.seq).unwrap_or(0);
    for c in clients.iter_mut() {
        while c.seq < last {
            c.next().await;
        }
    }
    clients[0].ok(json!({"type": "start"})).await;
    (code, clients)
}

/// Ana joins `code` as yellow and Luis as red, and yellow reads until red's join: the
/// two clients `[yellow, red]` of a room not yet started.
pub async fn yellow_and_red(server: &Server, code: &str) -> Vec<Client> {
    let mut yellow = server.client().await;
    yellow.join(code, "Ana", Some("yellow")).await;
    let mut red = server.client().await;
    red.join(code, "Luis", Some("red")).await;
    yellow
        .until("red joined", |v| {
            v["event"]["type"] == "player_joined" && v["event"]["colour"] == "red"
        })
        .await;
    vec![yellow, red]
}

/// The player whose turn it is (per the room view) rolls or plays its first legal action.
pub async fn act_once(server: &Server, code: &str, clients: &mut [Client]) {
    let view = server.room(code).await;
    let turn = view["game"]["position"]["turn"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let seq = view["seq"].as_u64().unwrap_or_default();
    let c = clients
        .iter_mut()
        .find(|c| c.colour.as_deref() == Some(turn.as_str()))
        .expect("a client holds the turn");
    let t = c
        .until("your_turn", |v| {
            v["type"] == "your_turn" && v["seq"].as_u64() == Some(seq)
        })
        .await;
    if t["must_roll"] == true {
        c.ok(json!({"type": "roll"})).await;
    } else {
        c.ok(json!({"type": "play", "action": t["legal"][0].clone()}))
            .await;
    }
}

/// The PostgreSQL URL from `DATABASE_URL`. When it is missing: in CI (`CI` set) the test
/// fails, since CI has PostgreSQL; elsewhere the skip is written straight to the process's
/// stderr (not the captured test output), so `cargo test` shows it.
pub fn database_url(test: &str) -> Option<String> {
    match std::env::var("DATABASE_URL") {
        Ok(url) if url.starts_with("postgres") => Some(url),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{test}: CI is set but DATABASE_URL (postgres://…) is missing: PostgreSQL tests must run in CI")
        }
        _ => {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: DATABASE_URL is not set to postgres://… (PostgreSQL test not run)"
            );
            None
        }
    }
}

/// `(status, raw body)` of a GET with optional extra header lines (`"Authorization: …"`).
pub async fn get_raw(addr: SocketAddr, path: &str, headers: &[&str]) -> (u16, String) {
    request_raw(addr, "GET", path, headers, "").await
}

/// `(status, raw body)` of any request; `headers` are extra header lines.
pub async fn request_raw(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[&str],
    body: &str,
) -> (u16, String) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let mut extra = String::new();
    for h in headers {
        extra.push_str(h);
        extra.push_str("\r\n");
    }
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.expect("read");
    let text = String::from_utf8_lossy(&buf).to_string();
    let status: u16 = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let (head, body) = text.split_once("\r\n\r\n").expect("body");
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    (status, body)
}

/// Decodes an HTTP/1.1 chunked body.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// `(status, JSON)` of a request with a JSON `body` and, when given, an account's bearer
/// `token` (a body that is not JSON comes back as a JSON string).
pub async fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &str,
) -> (u16, Value) {
    let auth = token.map(|t| format!("Authorization: Bearer {t}"));
    let mut headers = vec!["Content-Type: application/json"];
    if let Some(a) = &auth {
        headers.push(a);
    }
    let (status, text) = request_raw(addr, method, path, &headers, body).await;
    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, value)
}

/// Signs `username` up (password "correct horse battery"); its bearer token.
pub async fn sign_up_at(addr: SocketAddr, username: &str) -> String {
    let body = json!({"username": username, "password": "correct horse battery"}).to_string();
    let (status, answer) = call(addr, "POST", "/api/accounts", None, &body).await;
    assert_eq!(status, 201, "{answer}");
    answer["token"].as_str().expect("token").to_owned()
}

/// The real server with accounts' limits off (many sign-ups from one address), for the
/// accounts, ratings and pairing tests.
pub async fn accounts_server() -> Server {
    start(ServerConfig {
        accounts: parchis_server::config::AccountLimits::unlimited(),
        ..test_config()
    })
    .await
}

/// A WebSocket client on `addr` logged in with the account's bearer `token`.
pub async fn logged_in(addr: SocketAddr, token: &str) -> Client {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
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
