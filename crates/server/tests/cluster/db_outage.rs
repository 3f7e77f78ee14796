//! The database taken away under a running cluster, then given back (docs/CLUSTER.md,
//! "Ownership": a node that could not renew for a whole TTL stops all its rooms; the
//! sweeper claims expired leases). PostgreSQL itself is shared by other tests and keeps
//! running: every node reaches it through a proxy ([`crate::proxy::Proxy`]) that the test
//! cuts (every connection closed, new ones closed at once) and restores. Also a single
//! node on PostgreSQL through the same proxy: a command whose write finds the database
//! gone is answered `room_unavailable`, and goes through once it is back.

use crate::checks::{check_game, clients_summary};
use crate::common::{get_raw, Client};
use crate::driver::{play_all, Player};
use crate::harness::{Cluster, Opts};
use crate::setup::two_player_game;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// The text of a command refused because its write found the database out of reach
/// (`room::effect::STORE_UNREACHABLE`).
const STORE_UNREACHABLE: &str =
    "the server cannot reach its database right now: nothing was applied; send it again in a moment";

/// Longest a probe (HTTP request, WebSocket reply) may take before it counts as a hang.
const PROBE: Duration = Duration::from_secs(12);

/// `(status, body)` of `GET path` on `addr`, or a failure after [`PROBE`].
async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    tokio::time::timeout(PROBE, get_raw(addr, path, &[]))
        .await
        .unwrap_or_else(|_| panic!("GET {path} on {addr}: no answer within {PROBE:?}"))
}

/// The value of gauge `name` in `addr`'s `/metrics` (0 when absent).
async fn gauge(addr: SocketAddr, name: &str) -> f64 {
    let (status, text) = get(addr, "/metrics").await;
    assert_eq!(status, 200, "/metrics on {addr}");
    text.lines()
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with([' ', '{']))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// A new socket on `addr` that sends `watch` for `room`: its reply (within [`PROBE`]).
async fn watch_reply(addr: SocketAddr, room: &str) -> Value {
    let (ws, _) = tokio::time::timeout(
        PROBE,
        tokio_tungstenite::connect_async(format!("ws://{addr}/ws")),
    )
    .await
    .unwrap_or_else(|_| panic!("connect to {addr}: no answer within {PROBE:?}"))
    .expect("ws connect");
    let mut c = Client::new(ws);
    let req = c.cmd(json!({"type": "watch", "room": room})).await;
    let until = Instant::now() + PROBE;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let v = tokio::time::timeout(left, c.next())
            .await
            .unwrap_or_else(|_| panic!("watch {room} on {addr}: no reply within {PROBE:?}"))
            .unwrap_or_else(|| panic!("watch {room} on {addr}: socket closed without a reply"));
        if v["req"].as_u64() == Some(req) {
            return v;
        }
    }
}

/// Every node runs and answers `/healthz`.
async fn alive(cluster: &mut Cluster, what: &str) {
    for i in 0..cluster.opts.nodes {
        let exited = cluster.wait_exit(i, Duration::ZERO).await;
        assert!(
            exited.is_none(),
            "{what}: node {} exited ({exited:?}):\n{}",
            cluster.id(i),
            cluster.log_tail(i, 30)
        );
        let (status, body) = get(cluster.addr(i), "/healthz").await;
        assert_eq!(
            status,
            200,
            "{what}: /healthz of node {}: {body}",
            cluster.id(i)
        );
    }
}

/// A game on node a with players on a and b and a spectator on c. With the database
/// gone for twice the lease TTL: no node exits and each answers `/healthz`; after a TTL
/// every node answers `/readyz` 503 and owns no room, the room's lease has expired, a
/// `watch` of the room through each node is answered `room_unavailable` (not silence),
/// and nothing is stored; the commands sent meanwhile are answered `room_unavailable`
/// (some with "the server cannot reach its database"), never `internal`. With the database back: another epoch of the lease is taken by a
/// node of the cluster, every node is ready again (once it stops shedding load), and the
/// game is played to its end.
/// The stored log is sound (gap-free, replays, throws once each: nothing doubled), what
/// was stored before the cut is unchanged, every acknowledged action is in it, every
/// client saw exactly the stored stream, and no command went unanswered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_stops_its_rooms_without_the_database_and_resumes_after() {
    let test = "the_cluster_stops_its_rooms_without_the_database_and_resumes_after";
    let opts = Opts {
        db_proxy: true,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let ttl = Duration::from_millis(cluster.opts.lease_ttl_ms);
    let (code, mut players) = two_player_game(&cluster, 0, "o", 60).await;
    let mut spectator = Player::watch(&cluster.roster, 2, &code, "spectator").await;
    spectator.wait_seq(3).await;
    assert_eq!((players[0].node(), players[1].node()), (0, 1));
    for (j, p) in players.iter_mut().enumerate() {
        p.think = Duration::from_millis(10);
        p.seed(j as u64 + 11);
    }
    let first = cluster.lease(&code).await.expect("lease");
    assert_eq!((first.owner.as_str(), first.epoch), ("a", 1), "{first:?}");
    players.push(spectator);
    let game = tokio::spawn(play_all(players, Instant::now() + Duration::from_secs(240)));
    let id = cluster.games_of(&code).await.pop().expect("game");
    let until = Instant::now() + Duration::from_secs(30);
    while cluster.stored_events(&id).await.len() < 30 {
        assert!(Instant::now() < until, "the game did not get going");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The database goes away.
    let proxy = cluster
        .db_proxy
        .as_ref()
        .expect("the nodes' database proxy");
    proxy.cut();
    let cut_at = Instant::now();
    // A write in flight at the cut may still commit; after that nothing more can.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let at_cut = cluster.stored_events(&id).await;
    alive(&mut cluster, "just after the cut").await;
    // Longer than a TTL: every node has stopped its rooms.
    let lease = cluster
        .wait_lease(&code, ttl * 3, "expired", |l| l.ms_left < 0)
        .await;
    assert_eq!(lease.epoch, first.epoch, "nobody took the room: {lease:?}");
    tokio::time::sleep(ttl / 2).await;
    for i in 0..cluster.opts.nodes {
        let addr = cluster.addr(i);
        let (status, body) = get(addr, "/readyz").await;
        assert_eq!(status, 503, "node {} is not ready: {body}", cluster.id(i));
        let owned = gauge(addr, "parchis_cluster_rooms_owned").await;
        assert_eq!(owned, 0.0, "node {} stopped its rooms", cluster.id(i));
        let w = watch_reply(addr, &code).await;
        assert_eq!(
            (w["type"].as_str(), w["code"].as_str()),
            (Some("error"), Some("room_unavailable")),
            "watch through node {}: retry in a moment: {w}",
            cluster.id(i)
        );
        eprintln!(
            "{test}: watch through {} during the outage: {w}",
            cluster.id(i)
        );
    }
    // The outage lasts at least two TTLs.
    tokio::time::sleep((cut_at + ttl * 2).saturating_duration_since(Instant::now())).await;
    alive(&mut cluster, "during the outage").await;
    let during = cluster.stored_events(&id).await;
    assert_eq!(
        during, at_cut,
        "nothing is stored while the database is gone"
    );
    let lease = cluster.lease(&code).await.expect("lease");
    assert_eq!(lease.epoch, first.epoch, "nobody took the room: {lease:?}");

    // The database comes back.
    cluster.db_proxy.as_ref().expect("proxy").restore();
    let restored_at = Instant::now();
    let taken = cluster
        .wait_lease(&code, Duration::from_secs(20), "taken again", |l| {
            l.epoch > first.epoch && l.ms_left > 0
        })
        .await;
    eprintln!(
        "{test}: outage {:?}; {taken:?} {:?} after the restore",
        restored_at - cut_at,
        restored_at.elapsed()
    );
    assert!(
        cluster.index_of(&taken.owner).is_some(),
        "a node of the cluster took the room: {taken:?}"
    );
    // Ready again once the node stops shedding load: two TTLs after its renewals are on
    // time again (docs/CLUSTER.md, "Load shedding"). While the game goes on: a node that
    // stops writing after a slow group commit keeps that commit's time as its load
    // (crates/store/src/writer/mod.rs, Gauge::commit) and may shed until it writes again.
    for i in 0..cluster.opts.nodes {
        let until = restored_at + ttl * 4 + Duration::from_secs(10);
        loop {
            let (status, body) = get(cluster.addr(i), "/readyz").await;
            if status == 200 {
                break;
            }
            assert!(
                Instant::now() < until,
                "node {} is ready again: {body}",
                cluster.id(i)
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let players = game
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    alive(&mut cluster, "after the game").await;
    let refs: Vec<&Player> = players.iter().collect();
    let stored = check_game(&cluster, &code, &refs, true).await;
    assert!(stored.finished(), "the game went on to its end");
    assert!(
        stored.events.len() > at_cut.len() + 10,
        "the game went on after the outage"
    );
    // Read as `at_cut` was (`stored.events` has no `positioned` marks): the marks are
    // unchanged too.
    let now = cluster.stored_events(&id).await;
    assert_eq!(
        &now[..at_cut.len()],
        &at_cut[..],
        "what was stored before the outage is unchanged"
    );
    for p in &players {
        eprintln!(
            "{test}: {}: {} sent, {} acknowledged, longest reply {:?}, errors {:?}",
            p.name,
            p.sent,
            p.acks.len(),
            p.longest_reply,
            p.errors
        );
    }
    for p in &players {
        assert_eq!(p.unanswered, 0, "{}: every command was answered", p.name);
        assert!(
            p.unreplied.is_empty(),
            "{}: commands never answered (req → sent): {:?}",
            p.name,
            p.unreplied
        );
        assert_eq!(p.snapshots, 0, "{}: no events skipped", p.name);
    }
    // The commands sent while the database was gone were refused with a retryable error,
    // never `internal`: a write that found the database out of reach or a room that
    // stopped (`room_unavailable`: nothing applied, send it again), or an action on a turn
    // already gone (`stale_seq`).
    let codes: Vec<&str> = players
        .iter()
        .flat_map(|p| &p.errors)
        .map(|e| e["code"].as_str().unwrap_or("?"))
        .collect();
    let messages: std::collections::BTreeSet<&str> = players
        .iter()
        .flat_map(|p| &p.errors)
        .filter_map(|e| e["message"].as_str())
        .collect();
    eprintln!("{test}: errors {codes:?}, messages {messages:?}");
    assert!(
        codes.contains(&"room_unavailable"),
        "the outage was answered room_unavailable: {codes:?}"
    );
    // The room runs on for a TTL after the cut: the player on its node acts every 10 ms,
    // and its commands' writes find the database out of reach.
    assert!(
        messages.contains(STORE_UNREACHABLE),
        "a write that found the database out of reach says so: {messages:?}"
    );
    // `outcome_unknown`: a relayed command whose owner stopped the room (a TTL without
    // renewals) after taking it, before answering (the edge cannot tell).
    assert!(
        codes
            .iter()
            .all(|c| matches!(*c, "room_unavailable" | "outcome_unknown" | "stale_seq")),
        "errors while the database was gone: {codes:?} ({messages:?})"
    );
    eprintln!("{test}: clients: {}", clients_summary(&players));
}

/// A single node (no cluster mode) on PostgreSQL, through the cuttable proxy: a game
/// runs; with the database gone, the roll of the player to act is answered
/// `room_unavailable` ("the server cannot reach its database right now: nothing was
/// applied; send it again in a moment"), not `internal`, the socket stays open and
/// nothing is stored; with the database back, the same roll sent again is applied and
/// stored at the next seq. A single node keeps its rooms through an outage (no leases),
/// so the failed write is what answers the command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_node_answers_room_unavailable_while_its_database_is_gone() {
    let test = "a_single_node_answers_room_unavailable_while_its_database_is_gone";
    let Some(url) = crate::common::database_url(test) else {
        return;
    };
    let (mut admin, db_name, db_url) = crate::env::create_database(&url).await;
    let proxy = crate::proxy::Proxy::start(crate::env::pg_hostport(&db_url), Duration::ZERO).await;
    let store =
        parchis_store::PostgresStore::connect(&crate::env::with_hostport(&db_url, proxy.addr))
            .await
            .expect("connect through the proxy");
    let store: std::sync::Arc<dyn parchis_store::Store> = std::sync::Arc::new(store);
    let server = crate::common::start_on(crate::common::test_config(), store).await;
    let (code, mut clients) = crate::common::seated_game(
        &server,
        json!({"seats": 2, "turn_clock_secs": 120}),
        &["yellow", "red"],
    )
    .await;
    let direct = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(&db_url)
        .await
        .expect("connect to the test database");
    let events = || async {
        // The events stored, in either format: each game's last stored seq, summed.
        let (n,): (i64,) = sqlx::query_as(
            "SELECT COALESCE(SUM(GREATEST(COALESCE(g.log_seq, 0), \
             COALESCE((SELECT MAX(t.last_seq) FROM game_log_tail t WHERE t.game_id = g.id), 0), \
             COALESCE((SELECT MAX(e.seq) FROM game_events e WHERE e.game_id = g.id), 0))), 0)::BIGINT \
             FROM games g",
        )
            .fetch_one(&direct)
            .await
            .expect("count events");
        n
    };
    let view = server.room(&code).await;
    let turn = view["game"]["position"]["turn"]
        .as_str()
        .expect("turn")
        .to_owned();
    let actor = clients
        .iter_mut()
        .find(|c| c.colour.as_deref() == Some(turn.as_str()))
        .expect("the player to act");
    let seq = view["seq"].as_u64().expect("seq");
    if actor.seq < seq {
        actor
            .until("the first turn", |v| v["seq"].as_u64() == Some(seq))
            .await;
    }
    let before = events().await;

    proxy.cut();
    let req = actor.cmd(json!({"type": "roll"})).await;
    let answer = tokio::time::timeout(Duration::from_secs(30), actor.reply(req))
        .await
        .expect("the roll is answered during the outage");
    eprintln!("{test}: roll during the outage: {answer}");
    assert_eq!(answer["type"], "error", "{answer}");
    assert_eq!(answer["code"], "room_unavailable", "{answer}");
    assert_eq!(answer["message"], STORE_UNREACHABLE, "{answer}");
    assert_eq!(events().await, before, "nothing stored during the outage");
    let view = server.room(&code).await;
    assert_eq!(view["seq"].as_u64(), Some(seq), "nothing applied: {view}");

    proxy.restore();
    // The pool may still hold a connection the cut closed: retry until the roll is
    // applied, as a client would.
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let req = actor.cmd(json!({"type": "roll"})).await;
        let answer = actor.reply(req).await;
        if answer["type"] == "ok" {
            break;
        }
        assert_eq!(answer["code"], "room_unavailable", "{answer}");
        assert!(
            Instant::now() < until,
            "the roll never went through: {answer}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        events().await > before,
        "the roll is stored after the outage"
    );
    server.shutdown.cancel();
    let _ = server.task.await;
    direct.close().await;
    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {db_name} WITH (FORCE)"))
        .execute(&mut admin)
        .await;
}
