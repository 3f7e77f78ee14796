//! Operations: readiness follows the real database (a SQLite file moved away and back, a
//! PostgreSQL database refusing connections and accepting them again), and the real
//! server binary's logs (`--log-format json`: every line a JSON object carrying room,
//! game, seat and connection ids; `text`: no ANSI escapes when not on a terminal).

mod common;

use common::{client, get_raw, http_at, Client};
use parchis_store::Store;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

async fn readyz(addr: SocketAddr) -> (u16, Value) {
    http_at(addr, "GET", "/readyz", None).await
}

/// `/readyz` answers 200 `{"status": "ready"}`.
async fn assert_ready(addr: SocketAddr) {
    let (status, body) = readyz(addr).await;
    assert_eq!(
        (status, body.clone()),
        (200, json!({"status": "ready"})),
        "{body}"
    );
}

/// Polls `/readyz` until it answers `want` (at most 15 s); returns the last body.
async fn wait_ready(addr: SocketAddr, want: u16) -> Value {
    let mut last = Value::Null;
    for _ in 0..150 {
        let (status, body) = readyz(addr).await;
        if status == want {
            return body;
        }
        last = body;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("/readyz never answered {want}; last body {last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_follows_the_sqlite_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("parchis.db");
    let store: Arc<dyn Store> = Arc::new(
        parchis_store::SqliteStore::open(&path)
            .await
            .expect("open sqlite"),
    );
    let server = common::start_on(common::test_config(), store).await;
    assert_ready(server.addr).await;

    // The file is moved away under the running server: it would write to an inode no
    // restart will read.
    let moved = dir.path().join("parchis.db.moved");
    std::fs::rename(&path, &moved).expect("move the database file");
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "unavailable", "{body}");
    let reason = body["reason"].as_str().expect("a reason");
    assert!(reason.contains("is gone"), "{reason}");
    // Liveness is not readiness.
    let (status, text) = get_raw(server.addr, "/healthz", &[]).await;
    assert_eq!((status, text.as_str()), (200, "ok"));

    std::fs::rename(&moved, &path).expect("move the database file back");
    assert_ready(server.addr).await;

    // Another file in its place is not the database the server has open.
    std::fs::rename(&path, &moved).expect("move the database file");
    std::fs::copy(&moved, &path).expect("copy it back as a new file");
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body["reason"].as_str().unwrap_or("").contains("replaced"),
        "{body}"
    );
    server.shutdown.cancel();
    let _ = server.task.await;
}

/// The URL of database `name` on the server of `url`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let (server, _) = base.rsplit_once('/').expect("a database in the URL");
    format!("{server}/{name}{query}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_follows_the_postgres_database() {
    let Some(url) = common::database_url("readyz_follows_the_postgres_database") else {
        return;
    };
    use sqlx::Connection;
    let mut admin = sqlx::PgConnection::connect(&url)
        .await
        .expect("connect to DATABASE_URL");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    // A database of this test's own, so making it unreachable disturbs no other test.
    let db = format!("readyz_{}_{nanos}", std::process::id());
    sqlx::query(&format!("CREATE DATABASE {db}"))
        .execute(&mut admin)
        .await
        .expect("create the test database");
    let store = parchis_store::open_store(Some(&with_database(&url, &db)), "unused".as_ref())
        .await
        .expect("open postgres");
    let server = common::start_on(common::test_config(), store).await;
    assert_ready(server.addr).await;

    // The database goes away: it refuses new connections and the server's are terminated.
    sqlx::query(&format!("ALTER DATABASE {db} ALLOW_CONNECTIONS false"))
        .execute(&mut admin)
        .await
        .expect("refuse connections");
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1")
        .bind(&db)
        .execute(&mut admin)
        .await
        .expect("terminate the server's connections");
    let body = wait_ready(server.addr, 503).await;
    assert_eq!(body["status"], "unavailable", "{body}");
    assert!(
        body["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("store: ")),
        "{body}"
    );
    let (status, _) = get_raw(server.addr, "/healthz", &[]).await;
    assert_eq!(status, 200, "liveness stays up");

    // It comes back.
    sqlx::query(&format!("ALTER DATABASE {db} ALLOW_CONNECTIONS true"))
        .execute(&mut admin)
        .await
        .expect("accept connections again");
    let body = wait_ready(server.addr, 200).await;
    assert_eq!(body, json!({"status": "ready"}));
    let code = server.create_room(json!({})).await;
    assert_eq!(code.len(), 10, "the store takes writes again");

    server.shutdown.cancel();
    let _ = server.task.await;
    sqlx::query(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .execute(&mut admin)
        .await
        .expect("drop the test database");
}

// ----- logs of the real binary ---------------------------------------------------------------

const ADMIN_TOKEN: &str = "log-test-admin-token";

/// A running server; dropping it kills the process (a failed assertion must not leave a
/// child holding the test's output pipe open). `child` is `None` once [`stop`] took it.
struct Proc {
    child: Option<std::process::Child>,
    addr: SocketAddr,
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// Starts the binary with `args`, stdout piped, and waits for `/healthz`.
async fn spawn(data_dir: &std::path::Path, args: &[&str]) -> Proc {
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_parchis-server"))
        .arg("--port")
        .arg(port.to_string())
        .arg("--data-dir")
        .arg(data_dir)
        .arg("--dice-seed")
        .arg("7")
        .args(args)
        .env("PARCHIS_LOG", "info")
        .env("PARCHIS_ADMIN_TOKEN", ADMIN_TOKEN)
        .env_remove("DATABASE_URL")
        .env_remove("PARCHIS_NATS_URL")
        .env_remove("PARCHIS_LOG_FORMAT")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the server binary");
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            return Proc {
                child: Some(child),
                addr,
            };
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("server did not come up on {addr}");
}

/// Stops the server with SIGTERM (graceful) and returns everything it wrote to stdout.
fn stop(mut p: Proc) -> String {
    let child = p.child.take().expect("a running server");
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let out = child.wait_with_output().expect("server output");
    String::from_utf8(out.stdout).expect("UTF-8 logs")
}

/// The log lines whose message is `message`.
fn lines<'a>(logs: &'a [Value], message: &str) -> Vec<&'a Value> {
    logs.iter().filter(|l| l["message"] == message).collect()
}

fn one<'a>(logs: &'a [Value], message: &str, pred: impl Fn(&Value) -> bool) -> &'a Value {
    let found: Vec<_> = lines(logs, message)
        .into_iter()
        .filter(|l| pred(l))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {message:?} line expected, got {found:?}"
    );
    found[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_carry_room_game_seat_and_connection_ids() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = spawn(dir.path(), &["--log-format", "json"]).await;
    let (code, lobby) = a_logged_room(server.addr).await;
    let out = stop(server);
    assert!(!out.contains('\u{1b}'), "no ANSI escapes in JSON logs");
    let logs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(logs.len() > 10, "{out}");
    for l in &logs {
        assert!(l["timestamp"].is_string() && l["level"].is_string(), "{l}");
    }
    check_seat_logs(&logs, &code);
    check_game_logs(&logs, &code);
    check_admin_and_access_logs(&logs, &out, &lobby);
}

/// Joins, a colour change, a departure, a spectator, a seat taken over by a second
/// connection, a game started and ended by a timeout and a departure; then admin
/// requests, one refused, and a lobby closed. Returns the room's and the lobby's codes.
async fn a_logged_room(addr: SocketAddr) -> (String, String) {
    let (status, body) = http_at(
        addr,
        "POST",
        "/api/rooms",
        Some(r#"{"seats":3,"turn_clock_secs":1,"bot_think_ms":0}"#),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let code = body["code"].as_str().expect("code").to_owned();

    let mut a = client(addr).await;
    a.join(&code, "Ana", Some("yellow")).await;
    let mut b = client(addr).await;
    b.join(&code, "Bea", Some("red")).await;
    let mut c = client(addr).await;
    c.join(&code, "Cai", Some("blue")).await;
    a.seq = c.seq;
    a.ok(json!({"type": "choose_colour", "colour": "green"}))
        .await;
    c.seq = a.seq;
    c.ok(json!({"type": "leave"})).await;
    let mut s = client(addr).await;
    s.watch(&code).await;

    // Bea's seat is taken over by a second connection: the first is kicked (4000).
    let token = b.token.clone().expect("token");
    let mut b2 = client(addr).await;
    b2.resume(&code, &token, 0).await;
    b.until("close 4000", |v| v["type"] == "ws_close").await;

    a.seq = s.seq;
    a.ok(json!({"type": "start"})).await;
    // Nobody acts: the first throw's 1 s clock runs out.
    s.until("a timeout", |v| {
        Client::is_game_event(v, "timed_out") || Client::is_game_event(v, "timeout")
    })
    .await;
    a.seq = s.seq;
    a.cmd(json!({"type": "leave"})).await;
    s.until("game_won", |v| Client::is_game_event(v, "game_won"))
        .await;
    drop((a, b, b2, c, s));
    // Admin actions are logged, refused attempts too.
    let (status, _) = get_raw(addr, "/admin/rooms", &["Authorization: Bearer wrong"]).await;
    assert_eq!(status, 401);
    let bearer = format!("Authorization: Bearer {ADMIN_TOKEN}");
    let (status, _) = get_raw(addr, "/admin/rooms", &[&bearer]).await;
    assert_eq!(status, 200);
    let (_, lobby) = http_at(addr, "POST", "/api/rooms", Some("{}")).await;
    let lobby = lobby["code"].as_str().expect("code").to_owned();
    let close = format!("/admin/rooms/{lobby}/close");
    let (status, _) = common::request_raw(addr, "POST", &close, &[&bearer], "").await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(200)).await;

    (code, lobby)
}

/// Seat lines carry the room, the seat and the connection.
fn check_seat_logs(logs: &[Value], code: &str) {
    let in_room = |l: &Value| l["room"] == code;
    let joined = lines(logs, "player joined");
    assert_eq!(joined.len(), 3, "{joined:?}");
    let mut conns = Vec::new();
    for (l, seat) in joined.iter().zip(["yellow", "red", "blue"]) {
        assert!(in_room(l), "{l}");
        assert_eq!(l["seat"], seat, "{l}");
        conns.push(l["conn"].as_u64().expect("conn id"));
    }
    conns.dedup();
    assert_eq!(conns.len(), 3, "three connections: {conns:?}");
    assert_eq!(joined[0]["creator"], true);
    let changed = one(logs, "colour changed", in_room);
    assert_eq!(
        (&changed["from"], &changed["seat"]),
        (&json!("yellow"), &json!("green"))
    );
    assert_eq!(changed["conn"].as_u64(), Some(conns[0]));
    let left = one(logs, "player left", in_room);
    assert_eq!(
        (&left["seat"], &left["why"]),
        (&json!("blue"), &json!("left"))
    );
    assert_eq!(left["conn"].as_u64(), Some(conns[2]));
    one(logs, "spectator joined", in_room);
    let resumed = one(logs, "player resumed", in_room);
    assert_eq!(resumed["seat"], "red");
    let kicked = one(logs, "connection kicked", in_room);
    assert_eq!(kicked["code"], 4000);
    assert_eq!(
        kicked["conn"].as_u64(),
        Some(conns[1]),
        "the first connection of Bea"
    );
}

/// Game lines carry the room, the game and the seat.
fn check_game_logs(logs: &[Value], code: &str) {
    let in_room = |l: &Value| l["room"] == code;
    let started = one(logs, "game started", in_room);
    let game = started["game"].as_str().expect("game id").to_owned();
    assert!(uuid::Uuid::parse_str(&game).is_ok(), "{game}");
    let with_game = |l: &Value| in_room(l) && l["game"] == game.as_str();
    assert!(!lines(logs, "turn timed out").is_empty());
    for l in lines(logs, "turn timed out") {
        assert!(with_game(l) && l["seat"].is_string(), "{l}");
        // Logged in the room's span, which names the game.
        assert_eq!(
            (&l["span"]["name"], &l["span"]["game"]),
            (&json!("room"), &json!(game)),
            "{l}"
        );
    }
    let abandoned = one(logs, "player abandoned", with_game);
    assert_eq!(
        (&abandoned["seat"], &abandoned["reason"]),
        (&json!("green"), &json!("left"))
    );
    let finished = one(logs, "game finished", with_game);
    assert_eq!(
        (&finished["reason"], &finished["winner"]),
        (&json!("abandoned"), &json!("red"))
    );
}

/// Admin actions are logged (refused attempts too, the token never), and one access
/// line per HTTP request carries the request in its span.
fn check_admin_and_access_logs(logs: &[Value], out: &str, lobby: &str) {
    let refused = one(logs, "admin request refused", |_| true);
    assert_eq!(
        (&refused["action"], &refused["why"]),
        (&json!("list_rooms"), &json!("wrong token"))
    );
    assert!(
        !out.contains("log-test-admin-token"),
        "the token is never logged"
    );
    one(logs, "admin listed rooms", |l| l["rooms"].is_u64());
    one(logs, "admin closed a room", |l| l["room"] == lobby);

    // One access line per HTTP request, with the request in its span.
    let access: Vec<_> = lines(logs, "finished processing request")
        .into_iter()
        .filter(|l| l["span"]["uri"] == "/api/rooms" && l["span"]["method"] == "POST")
        .collect();
    assert_eq!(access.len(), 2, "{access:?}");
    assert_eq!(access[0]["status"], 201);
    assert!(access[0]["latency"].is_string(), "{}", access[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_logs_have_no_ansi_escapes_and_a_rooms_lines_stand_in_its_own_span() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = spawn(dir.path(), &[]).await;
    let (status, _) = get_raw(server.addr, "/readyz", &[]).await;
    assert_eq!(status, 200);
    // A room created by a request: its lines are in the room's span only, not nested
    // in the creating request's for the room's whole life.
    let (status, created) = http_at(server.addr, "POST", "/api/rooms", Some("{}")).await;
    assert_eq!(status, 201, "{created}");
    let code = created["code"].as_str().expect("code").to_owned();
    let mut ana = client(server.addr).await;
    ana.join(&code, "Ana", Some("yellow")).await;
    drop(ana);
    let out = stop(server);
    assert!(
        !out.contains('\u{1b}'),
        "ANSI escape in piped text logs:\n{out}"
    );
    let joined: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("player joined"))
        .collect();
    assert_eq!(joined.len(), 1, "{out}");
    assert!(
        joined[0].contains(&format!("room{{room={code}")) && !joined[0].contains("request{"),
        "a room's line in its own span only: {}",
        joined[0]
    );
    let access: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("finished processing request") && l.contains("/readyz"))
        .collect();
    assert_eq!(access.len(), 1, "{out}");
    assert!(access[0].contains("status=200"), "{}", access[0]);
    assert!(out.lines().any(|l| l.contains("listening")), "{out}");
}

/// `--ops-reserved` reaches the listener of the real binary: over the per-address
/// connection limit `/readyz` gets its real answer with the default reserve and the 429
/// with a reserve of 0, while `/healthz` answers either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ops_reserve_flag_decides_whether_readyz_is_served_over_a_limit() {
    for (reserve, want) in [(None, 200), (Some("0"), 429)] {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut args = vec!["--max-connections-per-address", "1"];
        if let Some(r) = reserve {
            args.extend(["--ops-reserved", r]);
        }
        let server = spawn(dir.path(), &args).await;
        // This address's one connection; every request below is over the limit.
        let _held = admitted_connection(server.addr).await;
        let (health, body) = get_raw(server.addr, "/healthz", &[]).await;
        assert_eq!((health, body.as_str()), (200, "ok"), "reserve {reserve:?}");
        let (status, body) = get_raw(server.addr, "/readyz", &[]).await;
        assert_eq!(status, want, "reserve {reserve:?}: {body}");
        let body: Value = serde_json::from_str(&body).expect("JSON");
        if want == 200 {
            assert_eq!(body["status"], "ready", "{body}");
        } else {
            assert_eq!(body["code"], "rate_limited", "{body}");
        }
        stop(server);
    }
}

/// A connection the server admitted: a keep-alive `/healthz` on it is answered without
/// `Connection: close` (a refusal closes). Retried while the connection of `spawn`'s
/// probe may still be counted against the address.
async fn admitted_connection(addr: SocketAddr) -> tokio::net::TcpStream {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    for _ in 0..100 {
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
            .await
            .expect("write");
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
        if head.starts_with("http/1.1 200") && !head.contains("connection: close") {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the server admitted no connection from this address");
}

/// A setting that cannot work stops the binary at start with exit code 2 and says why.
#[test]
fn nonsense_limits_are_refused_at_start_with_exit_code_2() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["--admin-token", "letmein"],
            "--admin-token (PARCHIS_ADMIN_TOKEN) must be at least 16 characters, not 7",
        ),
        (
            &["--max-refusals", "0"],
            "--max-refusals must be at least 1",
        ),
        (
            &["--max-refusals", "3", "--ops-reserved", "4"],
            "--ops-reserved (4) must not exceed --max-refusals (3)",
        ),
        (
            &["--sqlite-truncate-wait-ms", "0"],
            "TRUNCATE checkpoint wait must be 1 to 10000 ms, not 0 ms",
        ),
        (
            &["--sqlite-truncate-wait-ms", "10001"],
            "TRUNCATE checkpoint wait must be 1 to 10000 ms, not 10001 ms",
        ),
        (
            &["--ops-reserved=-1"],
            "invalid value '-1' for '--ops-reserved",
        ),
    ];
    for (args, message) in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = Command::new(env!("CARGO_BIN_EXE_parchis-server"))
            .arg("--port")
            .arg("0")
            .arg("--data-dir")
            .arg(dir.path())
            .args(args)
            .env_remove("DATABASE_URL")
            .env_remove("PARCHIS_NATS_URL")
            .env("NO_COLOR", "1")
            .output()
            .expect("run parchis-server");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(
            std::fs::read_dir(dir.path()).expect("dir").next().is_none(),
            "{args:?}: nothing opened before the check"
        );
    }
}
