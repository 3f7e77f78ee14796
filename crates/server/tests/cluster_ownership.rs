//! Ownership in cluster mode (docs/CLUSTER.md, "Ownership", "Placement", "Failover",
//! "Drain"), with real `parchis-server` processes, one real NATS server and a fresh
//! PostgreSQL database per test (the fixture of `tests/cluster/`, shared by path):
//!
//! * a write refused by the room's fence (another owner took the lease) stops the room at
//!   once and nothing of the refused step reaches anyone or the log;
//! * after `kill -9` of the owner, the other node's sweeper takes the room over within
//!   5 s with the default timings, the turn clock given back in full, and the clock then
//!   fires on the new owner;
//! * SIGTERM hands the room to the other node at once (no lease expiry waited for);
//! * a node at `--max-rooms` places a new room on the other node;
//! * with every connection of a node's main pool stuck behind a lock (game traffic on a
//!   saturated database), its renewals still go through on the lease connections: no
//!   lease is lost, no room stops, the game goes on;
//! * a node whose main runtime does nothing for two whole TTLs (every worker thread
//!   blocked) keeps its leases: the renewer runs on the lease thread (issue #13);
//! * a node whose writer is stuck sheds load: `/readyz` says so (503) and a new room is
//!   refused with 503 `server_full` and `Retry-After` when no other node takes it;
//! * a node that sheds load leaves a killed node's rooms to a node that does not, and
//!   still takes them over (a few per sweep) when it is the only live node;
//! * a node that sheds load refuses a drain's adoption, and claims the released room
//!   with its sweeper when it is the only other node.
//!
//! Without NATS or PostgreSQL each test prints `SKIPPED <test>: …`; with `CI` set it fails.
//! Clients connect to the node that runs the room (the relaying of other nodes is the
//! routing's, tested in `tests/cluster/`).
//!
//! Why one file over 600 lines: a list of independent ownership scenarios, one test each,
//! sharing the helpers here and one test binary (each cluster test binary is a long build).

// The shared fixture has more than these tests use.
#![allow(dead_code)]

#[path = "cluster/audit.rs"]
mod audit;
mod common;
#[path = "cluster/db.rs"]
mod db;
#[path = "cluster/env.rs"]
mod env;
#[path = "cluster/harness.rs"]
mod harness;
#[path = "cluster/nats.rs"]
mod nats;
#[path = "cluster/proxy.rs"]
mod proxy;

use common::{client, Client};
use harness::{Cluster, Opts};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Creates a room on node `i` with `settings`, seats red (the creator) and yellow on
/// the same node and starts the game. Returns the code, the two clients, and the colour
/// of the first `turn` event (every client has read up to it).
async fn two_player_game(
    cluster: &Cluster,
    i: usize,
    settings: Value,
) -> (String, Vec<Client>, String) {
    let code = cluster.create_room(i, &settings).await;
    let mut clients = Vec::new();
    for (n, colour) in ["red", "yellow"].into_iter().enumerate() {
        let mut c = client(cluster.addr(i)).await;
        c.join(&code, &format!("p{n}"), Some(colour)).await;
        clients.push(c);
    }
    // Everyone catches up with the joins, then the creator starts.
    let last = clients.last().map_or(0, |c| c.seq);
    for c in clients.iter_mut() {
        while c.seq < last {
            c.next().await;
        }
    }
    clients[0].ok(json!({"type": "start"})).await;
    let mut first = String::new();
    let is_turn = |v: &Value| v["type"] == "event" && v["event"]["type"] == "turn";
    for c in clients.iter_mut() {
        // The creator may have read it already, before the start's `ok`.
        if !c.events.iter().any(is_turn) {
            c.until("the first turn", is_turn).await;
        }
        let turn = c.events.iter().rev().find(|v| is_turn(v)).expect("turn");
        first = turn["event"]["colour"].as_str().expect("colour").to_owned();
    }
    (code, clients, first)
}

/// Starts a game on node a ([`two_player_game`] with a 60 s turn clock: no turn times
/// out during a test). Returns the code, the clients, the colour to act first, the events
/// stored by then and the room's lease epoch.
async fn game_on_a(cluster: &Cluster) -> (String, Vec<Client>, String, Vec<Value>, i64) {
    let (code, clients, first) =
        two_player_game(cluster, 0, json!({"seats": 2, "turn_clock_secs": 60})).await;
    let before = stored(cluster, &code).await;
    let epoch = cluster.lease(&code).await.expect("lease").epoch;
    (code, clients, first, before, epoch)
}

/// The stored events of the room's (only) game.
async fn stored(cluster: &Cluster, code: &str) -> Vec<Value> {
    let games = cluster.games_of(code).await;
    assert_eq!(games.len(), 1, "one game in {code}");
    cluster.stored_events(&games[0]).await
}

/// The value of an unlabelled counter or gauge in node `i`'s `/metrics` (0 when absent).
async fn metric(cluster: &Cluster, i: usize, name: &str) -> f64 {
    let (status, body) = common::get_raw(cluster.addr(i), "/metrics", &[]).await;
    assert_eq!(status, 200, "{body}");
    body.lines()
        .find_map(|l| {
            let (n, v) = l.split_once(' ')?;
            (n == name).then(|| v.trim().parse().ok()).flatten()
        })
        .unwrap_or(0.0)
}

/// Resumes `old`'s seat on node `i` after its socket was lost; the new client.
async fn resume_at(cluster: &Cluster, i: usize, code: &str, old: &Client) -> Client {
    let mut c = client(cluster.addr(i)).await;
    c.seq = old.seq;
    c.colour = old.colour.clone();
    let token = old.token.clone().expect("token");
    c.resume(code, &token, old.seq).await;
    c
}

/// The index in `clients` of the player seated as `colour` (the one to act first).
fn seat_of(clients: &[Client], colour: &str) -> usize {
    clients
        .iter()
        .position(|c| c.colour.as_deref() == Some(colour))
        .expect("the first player")
}

/// Asserts that node `i`'s `/metrics` shows `value` for the unlabelled `name`.
async fn assert_metric(cluster: &Cluster, i: usize, name: &str, value: f64) {
    let got = metric(cluster, i, name).await;
    assert_eq!(got, value, "{name} on node {}", cluster.id(i));
}

/// The game goes on on its owner: `actor` rolls, the roll is answered `ok` and stored
/// after the events `before`, which the log still starts with.
async fn roll_is_stored_after(cluster: &Cluster, code: &str, actor: &mut Client, before: &[Value]) {
    actor.ok(json!({"type": "roll"})).await;
    let after = stored(cluster, code).await;
    assert_eq!(after[..before.len()], before[..]);
    assert!(after.len() > before.len(), "the roll is stored");
}

/// Begins a transaction on the test's pool that holds `table` in ACCESS EXCLUSIVE mode
/// (every node's reads and writes of it wait) until it is rolled back.
async fn lock_table(cluster: &Cluster, table: &str) -> sqlx::Transaction<'static, sqlx::Postgres> {
    let mut lock = cluster.db.begin().await.expect("begin");
    sqlx::query(&format!("LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"))
        .execute(&mut *lock)
        .await
        .unwrap_or_else(|e| panic!("lock {table}: {e}"));
    lock
}

/// A write refused by the fence stops the room on its old owner: node a runs a game; the
/// lease is moved to another owner at epoch + 1 in the database (right after one of a's
/// renewals, so that its next renewal is 10 s away and the refused write is what stops
/// the room); the player to act rolls. The roll is neither stored nor broadcast, a
/// counts the fenced write and no longer runs the room, and the lease stays the new
/// owner's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_ownership_fenced_write_stops_the_room() {
    let test = "cluster_ownership_fenced_write_stops_the_room";
    let opts = Opts {
        nodes: 1,
        lease_ttl_ms: 20_000,
        lease_renew_ms: 10_000,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let (code, mut clients, first, before, _) = game_on_a(&cluster).await;
    let last = before.last().expect("events")["seq"].as_u64().expect("seq");
    let lease = cluster
        .wait_lease(&code, Duration::from_secs(15), "just renewed by a", |l| {
            l.owner == "a" && l.ms_left > 19_000
        })
        .await;
    sqlx::query(
        "UPDATE room_leases SET owner = 'thief', epoch = epoch + 1, \
         expires_at = now() + interval '60 seconds' WHERE room_code = $1",
    )
    .bind(&code)
    .execute(&cluster.db)
    .await
    .expect("steal the lease");
    let actor = seat_of(&clients, &first);
    clients[actor].cmd(json!({"type": "roll"})).await;

    // Nothing of the roll reaches anyone: each socket closes (the room moved) or stays
    // silent.
    for c in clients.iter_mut() {
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until {
            let frame = tokio::time::timeout(Duration::from_millis(200), c.next()).await;
            match frame {
                Ok(Some(v)) if v["type"] == "ws_close" => break,
                Ok(Some(v)) => {
                    assert_ne!(v["type"], "event", "a refused step was broadcast: {v}");
                    assert_ne!(v["type"], "ok", "a refused step was acknowledged: {v}");
                }
                Ok(None) => break,
                Err(_) => {}
            }
        }
    }
    let after = stored(&cluster, &code).await;
    assert_eq!(after, before, "the log did not move");
    assert_eq!(
        after.last().expect("events")["seq"].as_u64(),
        Some(last),
        "nothing after seq {last}"
    );
    assert_metric(&cluster, 0, "parchis_cluster_fenced_writes_total", 1.0).await;
    assert_metric(&cluster, 0, "parchis_cluster_rooms_owned", 0.0).await;
    let now = cluster.lease(&code).await.expect("lease");
    assert_eq!((now.owner.as_str(), now.epoch), ("thief", lease.epoch + 1));
    assert!(
        cluster
            .log_tail(0, 200)
            .contains("write refused by the room's fence"),
        "{}",
        cluster.log_tail(0, 40)
    );
}

/// `kill -9` of the owner: with the default timings (TTL 3 s, renewal 1 s, sweep 0.5 s)
/// the other node claims the room within 5 s at epoch + 1. The turn clock, which ran
/// out while nobody owned the room, is given back in full (a new `turn` event of the
/// same colour, written by the new owner, with no timeout before it), the players resume
/// on the new owner and see it, and the clock then fires there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_ownership_sweeper_takes_over_a_killed_nodes_room() {
    let test = "cluster_ownership_sweeper_takes_over_a_killed_nodes_room";
    let opts = Opts {
        nodes: 2,
        lease_ttl_ms: 3000,
        lease_renew_ms: 1000,
        sweep_ms: 500,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let (code, clients, first) = two_player_game(
        &cluster,
        0,
        json!({"seats": 2, "turn_clock_secs": 2, "bot_think_ms": 0}),
    )
    .await;
    let before = stored(&cluster, &code).await;
    let turn = before.last().expect("events").clone();
    assert_eq!(turn["event"]["type"], "turn", "{turn}");
    let deadline = turn["event"]["deadline_ms"].as_i64().expect("deadline");
    let killed_at_seq = turn["seq"].as_u64().expect("seq");
    let epoch = cluster.lease(&code).await.expect("lease").epoch;

    let killed = Instant::now();
    cluster.kill(0);
    let lease = cluster
        .wait_lease(&code, Duration::from_secs(5), "taken over by b", |l| {
            l.owner == "b" && l.epoch == epoch + 1
        })
        .await;
    let took = killed.elapsed();
    eprintln!("{test}: b owns the room {took:?} after the kill");
    assert!(!lease.retired);

    // The clock ran out (2 s) while nobody owned the room: a fresh full clock.
    let mut events = Vec::new();
    for _ in 0..100 {
        events = stored(&cluster, &code).await;
        if events.len() > before.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let next = events
        .get(before.len())
        .expect("an event after the takeover");
    assert_eq!(next["seq"].as_u64(), Some(killed_at_seq + 1), "{next}");
    assert_eq!(
        next["event"]["type"], "turn",
        "the clock is given back: {next}"
    );
    assert_eq!(next["event"]["colour"], first.as_str(), "{next}");
    let fresh = next["event"]["deadline_ms"].as_i64().expect("deadline");
    assert!(
        fresh >= deadline + 1000,
        "a full new clock: {fresh} after {deadline}"
    );

    // The players resume on b and see the new turn; nobody acts: the clock fires on b.
    let mut resumed = Vec::new();
    for old in &clients {
        resumed.push(resume_at(&cluster, 1, &code, old).await);
    }
    for c in resumed.iter_mut() {
        let v = c
            .until("the restored turn", |v| {
                v["type"] == "event" && v["event"]["type"] == "turn"
            })
            .await;
        assert_eq!(v["seq"].as_u64(), Some(killed_at_seq + 1), "{v}");
        let v = c
            .until("the clock firing on b", |v| {
                Client::is_game_event(v, "timed_out")
            })
            .await;
        assert_eq!(v["seq"].as_u64(), Some(killed_at_seq + 2), "{v}");
    }
    let events = stored(&cluster, &code).await;
    let timed_out = &events[before.len() + 1];
    assert_eq!(
        timed_out["event"]["event"]["type"], "timed_out",
        "{timed_out}"
    );
    assert!(
        timed_out["at_ms"].as_i64().expect("at") >= fresh,
        "the clock fired at its new deadline"
    );
    assert_metric(&cluster, 1, "parchis_cluster_takeovers_total", 1.0).await;
    let lease = cluster.lease(&code).await.expect("lease");
    assert_eq!((lease.owner.as_str(), lease.epoch), ("b", epoch + 1));
}

/// SIGTERM hands the room to the other node at once: with a 20 s lease, node b owns the
/// room at epoch + 1 well before the old lease could have expired; a exits cleanly; the
/// game goes on on b (a roll after resuming there is stored at the next seq).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_ownership_sigterm_hands_rooms_over_without_a_lease_wait() {
    let test = "cluster_ownership_sigterm_hands_rooms_over_without_a_lease_wait";
    let opts = Opts {
        nodes: 2,
        lease_ttl_ms: 20_000,
        lease_renew_ms: 2000,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let (code, clients, first, before, epoch) = game_on_a(&cluster).await;
    let last = before.last().expect("events")["seq"].as_u64().expect("seq");

    let sent = Instant::now();
    cluster.signal(0, "TERM");
    let lease = cluster
        .wait_lease(&code, Duration::from_secs(8), "adopted by b", |l| {
            l.owner == "b" && l.epoch == epoch + 1
        })
        .await;
    let took = sent.elapsed();
    eprintln!("{test}: b owns the room {took:?} after SIGTERM");
    assert!(lease.ms_left > 10_000, "a fresh lease of b's: {lease:?}");
    let status = cluster
        .wait_exit(0, Duration::from_secs(15))
        .await
        .expect("a exits after the drain");
    assert!(status.success(), "{status}");
    // Adopted, or claimed first by b's sweeper (a released lease is claimable at once).
    let adopted = metric(&cluster, 1, "parchis_cluster_adoptions_total").await;
    let claimed = metric(&cluster, 1, "parchis_cluster_takeovers_total").await;
    assert_eq!(
        adopted + claimed,
        1.0,
        "adopted {adopted}, claimed {claimed}"
    );

    // The first player resumes on b and throws: stored at the next seq, by b.
    let old = &clients[seat_of(&clients, &first)];
    let mut c = resume_at(&cluster, 1, &code, old).await;
    c.ok(json!({"type": "roll"})).await;
    let events = stored(&cluster, &code).await;
    assert_eq!(
        events[..before.len()],
        before[..],
        "the log before the hand-off"
    );
    assert_eq!(
        events[before.len()]["seq"].as_u64(),
        Some(last + 1),
        "the throw follows the log"
    );
    assert!(
        cluster.log_tail(0, 400).contains("room handed off"),
        "b answered the adoption: {}",
        cluster.log_tail(0, 40)
    );
}

/// Placement: a node at `--max-rooms` creates the room on the other node (its answer
/// has the same shape, with this node's invite URL); once every node is full the
/// creation is refused with 503 `server_full`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_ownership_placement_when_a_node_is_full() {
    let test = "cluster_ownership_placement_when_a_node_is_full";
    let opts = Opts {
        nodes: 2,
        max_rooms: Some(2),
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let settings = json!({"seats": 2}).to_string();
    for _ in 0..2 {
        let code = cluster.create_room(0, &json!({"seats": 2})).await;
        assert_eq!(cluster.lease(&code).await.expect("lease").owner, "a");
    }
    let (status, body) = cluster.http(0, "POST", "/api/rooms", Some(&settings)).await;
    assert_eq!(status, 201, "{body}");
    let code = body["code"].as_str().expect("code").to_owned();
    assert_eq!(cluster.lease(&code).await.expect("lease").owner, "b");
    assert_eq!(
        body["invite_url"].as_str(),
        Some(format!("http://{}/?room={code}", cluster.addr(0)).as_str()),
        "{body}"
    );
    assert_eq!(body["settings"]["seats"], 2, "{body}");
    let (status, view) = cluster
        .http(1, "GET", &format!("/api/rooms/{code}"), None)
        .await;
    assert_eq!(status, 200, "{view}");

    // b fills up too: nobody can take a room.
    let (status, body) = cluster.http(1, "POST", "/api/rooms", Some(&settings)).await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = cluster.http(0, "POST", "/api/rooms", Some(&settings)).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (503, Some("server_full")),
        "{body}"
    );
}

/// Connections of node `i`'s main pool (`parchis-store`) waiting for a lock held by
/// `holder` (a backend pid).
async fn stuck_behind(cluster: &Cluster, holder: i32) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'parchis-store' \
         AND pg_blocking_pids(pid) @> ARRAY[$1::int]",
    )
    .bind(holder)
    .fetch_one(&cluster.db)
    .await
    .expect("read pg_stat_activity")
}

/// The whole raw HTTP answer (head and body) to a request.
async fn raw_answer(addr: SocketAddr, method: &str, path: &str, body: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.expect("read");
    String::from_utf8_lossy(&buf).into_owned()
}

/// Renewals have connections of their own: node a runs a game; a lock on `games` makes
/// every connection of a's main pool wait (twelve `GET /api/games` for its eight
/// connections) for two whole lease TTLs. The lease is renewed all along (still a's,
/// same epoch, not expired, although a TTL passed twice), a still owns the room, no
/// lease was lost, and once the lock goes the game goes on (a roll is stored next).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_ownership_renewals_outlast_an_exhausted_pool() {
    let test = "cluster_ownership_renewals_outlast_an_exhausted_pool";
    let opts = Opts {
        nodes: 1,
        lease_ttl_ms: 1500,
        lease_renew_ms: 500,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts.clone()).await else {
        return;
    };
    let (code, mut clients, first, before, epoch) = game_on_a(&cluster).await;

    let mut lock = lock_table(&cluster, "games").await;
    let holder: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut *lock)
        .await
        .expect("pid");
    let addr = cluster.addr(0);
    let readers: Vec<_> = (0..12)
        .map(|_| tokio::spawn(async move { common::get_raw(addr, "/api/games", &[]).await }))
        .collect();
    let until = Instant::now() + Duration::from_secs(30);
    while stuck_behind(&cluster, holder).await < 8 {
        assert!(
            Instant::now() < until,
            "a's main pool never filled up behind the lock"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Two whole TTLs with the main pool exhausted.
    tokio::time::sleep(Duration::from_millis(2 * opts.lease_ttl_ms)).await;
    let lease = cluster.lease(&code).await.expect("lease");
    assert_eq!(stuck_behind(&cluster, holder).await, 8, "still exhausted");
    lock.rollback().await.expect("unlock");
    for r in readers {
        r.await.expect("reader");
    }
    assert_eq!(
        (lease.owner.as_str(), lease.epoch),
        ("a", epoch),
        "{lease:?}"
    );
    assert!(
        lease.ms_left > 0,
        "renewed while the pool was exhausted: {lease:?}"
    );
    assert_metric(&cluster, 0, "parchis_cluster_rooms_owned", 1.0).await;
    let log = cluster.log_tail(0, 400);
    assert!(!log.contains("lease lost"), "{log}");

    // The game goes on: the first player's roll is stored at the next seq.
    let actor = seat_of(&clients, &first);
    roll_is_stored_after(&cluster, &code, &mut clients[actor], &before).await;
}

/// Load shedding: node a (the only node) runs a game; a lock on `game_log_tail` holds a's
/// writer in the group of the next roll. The commit in flight outlasts a sixth of the
/// TTL: a sheds load. `/readyz` answers 503 "overloaded", and `POST /api/rooms` 503
/// `server_full` with `Retry-After` (no other node takes the room). Once the lock goes,
/// the roll is answered and stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_ownership_a_stuck_writer_sheds_new_rooms() {
    let test = "cluster_ownership_a_stuck_writer_sheds_new_rooms";
    let opts = Opts {
        nodes: 1,
        lease_ttl_ms: 12_000,
        lease_renew_ms: 1000,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let (code, mut clients, first, before, _) = game_on_a(&cluster).await;
    let (status, ready) = cluster.http(0, "GET", "/readyz", None).await;
    assert_eq!(status, 200, "{ready}");

    let lock = lock_table(&cluster, "game_log_tail").await;
    let actor = seat_of(&clients, &first);
    let actor = &mut clients[actor];
    let req = actor.cmd(json!({"type": "roll"})).await;
    let until = Instant::now() + Duration::from_secs(10);
    let reason = loop {
        let (status, ready) = cluster.http(0, "GET", "/readyz", None).await;
        if status == 503 {
            break ready["reason"].as_str().unwrap_or_default().to_owned();
        }
        assert!(Instant::now() < until, "a never shed load: {ready}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(reason.starts_with("overloaded"), "{reason}");
    let answer = raw_answer(cluster.addr(0), "POST", "/api/rooms", r#"{"seats":2}"#).await;
    let head = answer.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 503"), "{answer}");
    assert!(head.contains("retry-after: 2"), "{answer}");
    assert!(answer.contains(r#""code":"server_full""#), "{answer}");
    assert_metric(&cluster, 0, "parchis_cluster_shedding", 1.0).await;

    lock.rollback().await.expect("unlock");
    let ok = actor.reply(req).await;
    assert_eq!(ok["type"], "ok", "{ok}");
    let after = stored(&cluster, &code).await;
    assert!(after.len() > before.len(), "the roll is stored");
    assert_metric(&cluster, 0, "parchis_cluster_rooms_owned", 1.0).await;
}

/// `POST /admin/debug/stall` on node `i` (the harness's admin token): every worker thread
/// of its main runtime is blocked for `ms`, from 100 ms after the answer.
async fn stall(cluster: &Cluster, i: usize, ms: u64) {
    debug_hook(cluster, i, "/admin/debug/stall", ms).await;
}

/// `POST path` with `{"ms": ms}` and the harness's admin token on node `i`; asserts 202.
async fn debug_hook(cluster: &Cluster, i: usize, path: &str, ms: u64) {
    let mut s = tokio::net::TcpStream::connect(cluster.addr(i))
        .await
        .expect("connect");
    let body = json!({ "ms": ms }).to_string();
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\
         Authorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        harness::ADMIN_TOKEN,
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.expect("read");
    let answer = String::from_utf8_lossy(&buf);
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
}

/// Issue #13 (a mass disconnect starved the renewer and a node lost all its leases):
/// nodes a and b, a runs a game; every worker thread of a's main runtime is blocked for
/// two whole lease TTLs (the stall hook: none of a's sockets, rooms, timers or main-runtime
/// I/O run, as in a burst of work that never yields). b's sweeper claims any lease that
/// expires meanwhile. a's HTTP does not answer during the stall, yet its lease is renewed
/// all along (the renewer and its connections are on the lease thread): still a's, same
/// epoch, not expired, one TTL into the stall and after it; b took nothing over, a lost no
/// lease, and the game goes on on a (a roll is stored next).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_ownership_a_stalled_main_runtime_keeps_its_leases() {
    let test = "cluster_ownership_a_stalled_main_runtime_keeps_its_leases";
    let opts = Opts {
        nodes: 2,
        lease_ttl_ms: 1500,
        lease_renew_ms: 500,
        sweep_ms: 250,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts.clone()).await else {
        return;
    };
    let (code, mut clients, first, before, epoch) = game_on_a(&cluster).await;

    let ttl = Duration::from_millis(opts.lease_ttl_ms);
    stall(&cluster, 0, 2 * opts.lease_ttl_ms).await;
    let started = Instant::now() + Duration::from_millis(100);
    // The stall is on: a answers nothing.
    tokio::time::sleep_until((started + Duration::from_millis(200)).into()).await;
    let probe = tokio::time::timeout(
        Duration::from_millis(500),
        common::get_raw(cluster.addr(0), "/readyz", &[]),
    )
    .await;
    assert!(probe.is_err(), "a answered during the stall: {probe:?}");
    // One TTL and two sweeps into the stall: an unrenewed lease would be b's by now.
    tokio::time::sleep_until((started + ttl + Duration::from_millis(500)).into()).await;
    let during = cluster.lease(&code).await.expect("lease");
    // The stall is over (and a sweep of b's after it).
    tokio::time::sleep_until((started + 2 * ttl + Duration::from_millis(500)).into()).await;
    let after = cluster.lease(&code).await.expect("lease");
    for lease in [&during, &after] {
        assert_eq!(
            (lease.owner.as_str(), lease.epoch),
            ("a", epoch),
            "the lease stayed a's: {lease:?}"
        );
        assert!(lease.ms_left > 0, "renewed during the stall: {lease:?}");
    }
    assert_metric(&cluster, 1, "parchis_cluster_takeovers_total", 0.0).await;
    assert_metric(&cluster, 0, "parchis_cluster_rooms_owned", 1.0).await;
    let log = cluster.log_tail(0, 400);
    assert!(!log.contains("lease lost"), "{log}");

    // The game goes on: the first player's roll is stored at the next seq.
    let actor = seat_of(&clients, &first);
    roll_is_stored_after(&cluster, &code, &mut clients[actor], &before).await;
}

/// Waits until node `id`'s heartbeat row says it sheds load (`cluster_nodes.shedding`).
async fn wait_heartbeat_shedding(cluster: &Cluster, id: &str) {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let row: Option<(bool,)> =
            sqlx::query_as("SELECT shedding FROM cluster_nodes WHERE node_id = $1")
                .bind(id)
                .fetch_optional(&cluster.db)
                .await
                .expect("read cluster_nodes");
        if row == Some((true,)) {
            return;
        }
        assert!(
            Instant::now() < until,
            "{id} never reported shedding: {row:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Load shedding and failover (docs/CLUSTER.md, "Load shedding"): a runs three games; b
/// is made to shed load (the shedding hook, `POST /admin/debug/shed`), c is not. After
/// `kill -9` of a, c takes over every room at epoch + 1 and b none (its sweeper leaves
/// them to the node that does not shed). Then c is killed too: b, the only live node and
/// still shedding, takes every room over all the same (a few per sweep), and a game goes
/// on there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_ownership_a_shedding_node_leaves_a_dead_nodes_rooms_to_the_others() {
    let test = "cluster_ownership_a_shedding_node_leaves_a_dead_nodes_rooms_to_the_others";
    let opts = Opts {
        nodes: 3,
        lease_ttl_ms: 1500,
        lease_renew_ms: 500,
        sweep_ms: 250,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let mut rooms = Vec::new();
    for _ in 0..3 {
        let (code, clients, first) =
            two_player_game(&cluster, 0, json!({"seats": 2, "turn_clock_secs": 60})).await;
        let epoch = cluster.lease(&code).await.expect("lease").epoch;
        rooms.push((code, clients, first, epoch));
    }
    debug_hook(&cluster, 1, "/admin/debug/shed", 30_000).await;
    wait_heartbeat_shedding(&cluster, "b").await;
    let (status, ready) = cluster.http(1, "GET", "/readyz", None).await;
    assert_eq!(status, 503, "b sheds load: {ready}");
    let (status, ready) = cluster.http(2, "GET", "/readyz", None).await;
    assert_eq!(status, 200, "c does not: {ready}");

    cluster.kill(0);
    for (code, _, _, epoch) in &rooms {
        let lease = cluster
            .wait_lease(code, Duration::from_secs(6), "taken over", |l| {
                l.epoch == epoch + 1
            })
            .await;
        assert_eq!(lease.owner, "c", "the node that does not shed: {lease:?}");
    }
    // Two more sweeps of b's: still nothing taken.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_metric(&cluster, 1, "parchis_cluster_takeovers_total", 0.0).await;
    assert_metric(&cluster, 2, "parchis_cluster_takeovers_total", 3.0).await;

    // Every live node sheds (b is the only one): the rooms still come back.
    let (status, ready) = cluster.http(1, "GET", "/readyz", None).await;
    assert_eq!(status, 503, "b still sheds load: {ready}");
    cluster.kill(2);
    for (code, _, _, epoch) in &rooms {
        let lease = cluster
            .wait_lease(code, Duration::from_secs(8), "taken over again", |l| {
                l.epoch == epoch + 2
            })
            .await;
        assert_eq!(lease.owner, "b", "the only live node: {lease:?}");
    }
    // Claimed, then restored: counted once each is up.
    let until = Instant::now() + Duration::from_secs(5);
    while metric(&cluster, 1, "parchis_cluster_takeovers_total").await < 3.0 {
        assert!(Instant::now() < until, "b brought the three rooms up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_metric(&cluster, 1, "parchis_cluster_takeovers_total", 3.0).await;
    assert_eq!(
        metric(&cluster, 1, "parchis_cluster_shedding").await,
        1.0,
        "b shed load all along"
    );

    // A game goes on on b: the first player resumes there and rolls.
    let (code, clients, first, _) = &rooms[0];
    let before = stored(&cluster, code).await;
    let old = &clients[seat_of(clients, first)];
    let mut actor = resume_at(&cluster, 1, code, old).await;
    let last = before.last().and_then(|e| e["seq"].as_u64()).expect("seq");
    if actor.seq < last {
        actor
            .until("the events of the takeovers", |v| {
                v["seq"].as_u64() == Some(last)
            })
            .await;
    }
    actor.ok(json!({"type": "roll"})).await;
    let after = stored(&cluster, code).await;
    assert!(after.len() > before.len(), "the roll is stored on b");
}

/// A drain does not hand a room to a node that sheds load (docs/CLUSTER.md, "Drain",
/// "Load shedding"): nodes a and b with 20 s leases, a runs a game, b is made to shed.
/// On SIGTERM a asks b to adopt the room; b refuses it (`server_full`, counted in
/// `parchis_cluster_adoptions_shed_total`) and adopts nothing. The room is not lost:
/// its lease stays released, and b's sweeper, b being the only live node and every live
/// node shedding, claims it within a few sweeps, at epoch + 1 and with a fresh lease (no
/// lease expiry waited for); a exits within its drain budget, and the game goes on on b.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_ownership_a_shedding_node_refuses_a_drains_adoption() {
    let test = "cluster_ownership_a_shedding_node_refuses_a_drains_adoption";
    let opts = Opts {
        nodes: 2,
        lease_ttl_ms: 20_000,
        lease_renew_ms: 2000,
        // Seldom: b's sweeper claiming the released lease before a's `adopt` reaches b
        // would answer `adopted` (the room is b's all the same) and not exercise the
        // refusal.
        sweep_ms: 2000,
        drain_timeout_secs: 10,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let (code, clients, first, before, epoch) = game_on_a(&cluster).await;
    debug_hook(&cluster, 1, "/admin/debug/shed", 60_000).await;
    wait_heartbeat_shedding(&cluster, "b").await;

    let sent = Instant::now();
    cluster.signal(0, "TERM");
    let lease = cluster
        .wait_lease(&code, Duration::from_secs(8), "claimed by b", |l| {
            l.owner == "b" && l.epoch == epoch + 1
        })
        .await;
    eprintln!("{test}: b owns the room {:?} after SIGTERM", sent.elapsed());
    assert!(lease.ms_left > 10_000, "a fresh lease of b's: {lease:?}");
    let status = cluster
        .wait_exit(0, Duration::from_secs(15))
        .await
        .expect("a exits after the drain");
    assert!(status.success(), "{status}");
    assert_metric(&cluster, 1, "parchis_cluster_adoptions_shed_total", 1.0).await;
    assert_metric(&cluster, 1, "parchis_cluster_adoptions_total", 0.0).await;
    let until = Instant::now() + Duration::from_secs(5);
    while metric(&cluster, 1, "parchis_cluster_takeovers_total").await < 1.0 {
        assert!(Instant::now() < until, "b brought the room up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        metric(&cluster, 1, "parchis_cluster_shedding").await,
        1.0,
        "b shed load all along"
    );
    let log = cluster.log_tail(0, 400);
    assert!(
        log.contains("adopt refused") && log.contains("it adopts no rooms"),
        "a was told why: {log}"
    );
    assert!(
        log.contains("no node adopted the room"),
        "a left the lease to the sweepers: {log}"
    );

    // The game goes on on b: the first player resumes there and throws, stored next.
    let old = &clients[seat_of(&clients, &first)];
    let mut actor = resume_at(&cluster, 1, &code, old).await;
    let last = before.last().and_then(|e| e["seq"].as_u64()).expect("seq");
    if actor.seq < last + 1 {
        // The takeover's fresh turn clock (a `turn` event) comes first.
        actor
            .until("the takeover's turn", |v| {
                v["seq"].as_u64() == Some(last + 1)
            })
            .await;
    }
    roll_is_stored_after(&cluster, &code, &mut actor, &before).await;
}
