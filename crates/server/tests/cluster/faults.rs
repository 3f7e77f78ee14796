//! Faults between the nodes (issue 25, docs/CLUSTER.md "Partitions" and "Routing"): each
//! node reaches NATS through a TCP proxy of its own that the test cuts or stalls, or the
//! nodes share a nats-server of the test's own that it restarts; the nodes reach
//! PostgreSQL through a proxy the test cuts. After each: no acknowledged action lost,
//! every client's events equal to the stored log, no client silent for longer than the
//! documented bound.

use crate::checks::{check_game, clients_summary};
use crate::common::client;
use crate::driver::{play_all, Player};
use crate::harness::{Cluster, Opts};
use crate::setup::two_player_game;
use serde_json::json;
use std::time::{Duration, Instant};

/// The longest a client of a running game may go without an event once the fault heals
/// (docs/CLUSTER.md, "Partitions": NATS back within its reconnect delay, 0.5 s, then a
/// reattach; a takeover within lease TTL + a sweep + the restore).
const AFTER_HEAL: Duration = Duration::from_secs(4);

/// The longest gap between two events `p` saw after `from` (counting from `from` to
/// its first), and where it ended.
fn longest_silence(p: &Player, from: Instant) -> Duration {
    let mut last = from;
    let mut worst = Duration::ZERO;
    for at in p.arrivals.values().filter(|at| **at >= from) {
        worst = worst.max(at.duration_since(last));
        last = *at;
    }
    worst
}

/// Node a owns a two-player game; its second player's socket and a spectator's are on
/// node b (relayed). The game runs; after 2 s `fault` is applied, and healed after
/// `down`. The game is played to its end. Returns the players and when the fault began.
async fn a_game_through_a_fault(
    cluster: &mut Cluster,
    down: Duration,
    fault: impl FnOnce(&mut Cluster),
    heal: impl AsyncFnOnce(&mut Cluster),
) -> (String, Vec<Player>, Instant) {
    let (code, mut players) = two_player_game(cluster, 0, "p", 15).await;
    let mut spectator = Player::watch(&cluster.roster, 1, &code, "eve").await;
    spectator.wait_seq(3).await;
    for (j, p) in players.iter_mut().enumerate() {
        p.think = Duration::from_millis(30);
        p.seed(j as u64 + 5);
    }
    players.push(spectator);
    let deadline = Instant::now() + Duration::from_secs(180);
    let game = tokio::spawn(play_all(players, deadline));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let began = Instant::now();
    fault(cluster);
    tokio::time::sleep(down).await;
    heal(cluster).await;
    let players = match game.await {
        Ok(p) => p,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    };
    (code, players, began)
}

/// Every check after a fault: the log is what each client saw, every acknowledged action
/// is stored, nobody ran out of time, and no client went silent for longer than `bound`.
async fn after_the_fault(
    cluster: &Cluster,
    test: &str,
    code: &str,
    players: &[Player],
    began: Instant,
    bound: Duration,
) {
    let refs: Vec<&Player> = players.iter().collect();
    let stored = check_game(cluster, code, &refs, true).await;
    assert!(stored.finished(), "the game was played to its end");
    assert_eq!(
        stored.timeouts(),
        0,
        "nobody lost a turn to the fault: {}",
        clients_summary(refs.iter().copied())
    );
    for p in players {
        let silent = longest_silence(p, began);
        eprintln!(
            "{test}: {} longest silence from the fault on {silent:?}",
            p.name
        );
        assert!(
            silent <= bound,
            "{}: no event for {silent:?} (bound {bound:?})",
            p.name
        );
        assert_eq!(p.unanswered, 0, "{}: every command was answered", p.name);
    }
    eprintln!("{test}: clients: {}", clients_summary(refs));
}

/// Issue 25, 1: the edge b loses NATS for 4 s (its proxy cut). The owner a finds b gone
/// and detaches its links (the `end` is lost); when b's connection is back it reattaches
/// every relayed connection, so its player and spectator carry on: nobody is silent for
/// longer than the cut plus [`AFTER_HEAL`], and nobody loses a turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edge_cut_from_nats_for_4_s_brings_its_relayed_clients_back() {
    let test = "an_edge_cut_from_nats_for_4_s_brings_its_relayed_clients_back";
    let opts = Opts {
        nodes: 2,
        nats_proxies: true,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let down = Duration::from_secs(4);
    let (code, players, began) = a_game_through_a_fault(
        &mut cluster,
        down,
        |c| c.nats_proxy(1).cut(),
        async |c| c.nats_proxy(1).restore(),
    )
    .await;
    after_the_fault(&cluster, test, &code, &players, began, down + AFTER_HEAL).await;
    let lease = cluster.lease(&code).await.expect("lease");
    assert_eq!(
        (lease.owner.as_str(), lease.epoch),
        ("a", 1),
        "the owner kept its room"
    );
}

/// Issue 25, 1: the nats-server itself restarts (down 5 s, longer than the lease TTL):
/// every node loses NATS, gives its rooms up after a TTL ("Partitions"), and when NATS is
/// back a sweeper takes the room again; every relayed connection reattaches or is closed
/// with 1012 and resumes. The game goes on to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nats_server_restart_brings_every_client_back() {
    let test = "a_nats_server_restart_brings_every_client_back";
    let opts = Opts {
        nodes: 2,
        own_nats: true,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let down = Duration::from_secs(5);
    let (code, players, began) = a_game_through_a_fault(
        &mut cluster,
        down,
        |c| c.nats_server.as_mut().expect("own nats").stop(),
        async |c| c.nats_server.as_mut().expect("own nats").up().await,
    )
    .await;
    // Back: NATS reconnect (0.5 s), a sweep (0.25 s), a restore, the clients' resumes.
    after_the_fault(
        &cluster,
        test,
        &code,
        &players,
        began,
        down + AFTER_HEAL * 2,
    )
    .await;
}

/// The partition rule (docs/CLUSTER.md, "Partitions"): the owner a loses NATS but keeps
/// PostgreSQL. After one lease TTL it gives its rooms up (stops them, releases their
/// leases), b takes the room over, and the relayed clients on b get their events again
/// within the documented bound, long before the cut ends; a's own player is closed with
/// 1012 at once and resumes through b.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_cut_from_nats_gives_its_rooms_up_within_the_bound() {
    let test = "an_owner_cut_from_nats_gives_its_rooms_up_within_the_bound";
    let opts = Opts {
        nodes: 2,
        nats_proxies: true,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let down = Duration::from_secs(10);
    let (code, players, began) = a_game_through_a_fault(
        &mut cluster,
        down,
        |c| c.nats_proxy(0).cut(),
        async |c| c.nats_proxy(0).restore(),
    )
    .await;
    // TTL (1.5 s) + a sweep (0.25 s) + the restore and the reattaches.
    let bound = Duration::from_millis(1500) + AFTER_HEAL;
    after_the_fault(&cluster, test, &code, &players, began, bound).await;
    let lease = cluster.lease(&code).await.expect("lease");
    assert!(
        lease.epoch >= 2,
        "the room was taken over by b while a was cut: {lease:?}"
    );
}

/// Issue 25, 3: a relayed player's command that reaches the owner after the edge answered
/// it is not applied. The owner's NATS link stalls for 2.5 s (bytes held both ways, the
/// connection kept): the edge answers the `roll` `outcome_unknown` after 1.5 s; when the
/// stall ends the owner gets the command past its deadline and refuses it; the log has no
/// roll of that player, and the player rolls again (`ok`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_late_after_a_stalled_owner_link_is_not_applied() {
    let test = "a_command_late_after_a_stalled_owner_link_is_not_applied";
    let opts = Opts {
        nodes: 2,
        nats_proxies: true,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let code = cluster
        .create_room(
            0,
            &json!({"seats": 2, "turn_clock_secs": 60, "public": false}),
        )
        .await;
    // Bruno on b joins first: the creator, who starts and (under `online`) rolls first.
    let mut bruno = client(cluster.addr(1)).await;
    bruno.join(&code, "Bruno", Some("red")).await;
    let mut ana = client(cluster.addr(0)).await;
    ana.join(&code, "Ana", Some("yellow")).await;
    while bruno.seq < 2 {
        bruno.next().await;
    }
    bruno.ok(json!({"type": "start"})).await;
    bruno
        .until("Bruno's turn", |v| {
            v["type"] == "your_turn" && v["must_roll"] == true
        })
        .await;
    let seq = bruno.seq;
    cluster.nats_proxy(0).stall();
    let req = bruno
        .cmd(json!({"type": "roll", "room": code, "seq": seq}))
        .await;
    let answered = bruno.reply(req).await;
    assert_eq!(answered["code"], "outcome_unknown", "{answered}");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    cluster.nats_proxy(0).unstall();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let rolls: i64 = sqlx::query_scalar(
        "SELECT (SELECT count(*) FROM game_log_tail t JOIN games g ON g.id = t.game_id \
         WHERE g.room_code = $1 AND t.last_seq > $2) \
         + (SELECT count(*) FROM games g WHERE g.room_code = $1 AND g.log_seq > $2)",
    )
    .bind(&code)
    .bind(i64::try_from(seq).unwrap_or(i64::MAX))
    .fetch_one(&cluster.db)
    .await
    .expect("read events");
    assert_eq!(
        rolls, 0,
        "the late roll was not applied: nothing stored after seq {seq}"
    );
    let again = bruno
        .ok(json!({"type": "roll", "room": code, "seq": seq}))
        .await;
    assert_eq!(again["type"], "ok", "{again}");
}

/// The colours of room `code`'s seats as node `i` shows them (asked again while it
/// answers 503: a room just taken over), and as stored.
async fn seats(cluster: &Cluster, i: usize, code: &str) -> (Vec<String>, Vec<String>) {
    let until = Instant::now() + Duration::from_secs(5);
    let view = loop {
        let (status, view) = cluster
            .http(i, "GET", &format!("/api/rooms/{code}"), None)
            .await;
        if status == 200 {
            break view;
        }
        assert!(status == 503 && Instant::now() < until, "{status}: {view}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let shown = view["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .map(|s| s["colour"].as_str().unwrap_or("?").to_owned())
        .collect();
    let stored: Vec<String> =
        sqlx::query_scalar("SELECT colour FROM seats WHERE room_code = $1 ORDER BY colour")
            .bind(code)
            .fetch_all(&cluster.db)
            .await
            .expect("read seats");
    (shown, stored)
}

/// Issue 25, 2 and 3: the owner's PostgreSQL link is cut as a relayed player sends
/// `leave` in a lobby. The seat's delete fails, so the leave is refused (never `ok`), the
/// other player sees no `player_left`, and the relayed session stays joined (as on the
/// owner's node): once the database is back its next `leave` is `ok`. The owner is then
/// killed; the node that takes the room over shows the seat gone, as stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relayed_leave_is_acknowledged_only_once_stored_and_survives_a_takeover() {
    let test = "a_relayed_leave_is_acknowledged_only_once_stored_and_survives_a_takeover";
    // Leases of 5 s: the cut (every node's database link) stays well under a TTL.
    let opts = Opts {
        nodes: 2,
        db_proxy: true,
        lease_ttl_ms: 5000,
        lease_renew_ms: 1000,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let code = cluster
        .create_room(0, &json!({"seats": 4, "public": false}))
        .await;
    let mut ana = client(cluster.addr(0)).await;
    ana.join(&code, "Ana", Some("yellow")).await;
    let mut bruno = client(cluster.addr(1)).await;
    bruno.join(&code, "Bruno", Some("blue")).await;
    while ana.seq < 2 || bruno.seq < 2 {
        let c = if ana.seq < 2 { &mut ana } else { &mut bruno };
        c.next().await;
    }
    let proxy = cluster.db_proxy.as_ref().expect("db proxy");
    proxy.cut();
    let req = bruno.cmd(json!({"type": "leave"})).await;
    let refused = bruno.reply(req).await;
    proxy.restore();
    eprintln!("{test}: leave during the cut: {refused}");
    assert_eq!(
        refused["type"], "error",
        "never ok while unstored: {refused}"
    );
    assert_eq!(refused["code"], "room_unavailable", "{refused}");
    let (shown, stored) = seats(&cluster, 1, &code).await;
    assert_eq!(shown, ["yellow", "blue"], "the seat stays");
    assert_eq!(stored, ["blue", "yellow"], "the seat stays stored");
    // Still joined: the leave goes through once the database is back (the pool may still
    // hold a connection the cut closed: retry as a client would).
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let req = bruno.cmd(json!({"type": "leave"})).await;
        let answer = bruno.reply(req).await;
        if answer["type"] == "ok" {
            break;
        }
        assert_eq!(answer["code"], "room_unavailable", "still joined: {answer}");
        assert!(Instant::now() < until, "the leave never went through");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let left = ana
        .until("Bruno's player_left", |v| v["type"] == "event")
        .await;
    assert_eq!(left["event"]["type"], "player_left", "{left}");
    assert_eq!(left["seq"], 3, "the first event after the joins: {left}");
    // The acknowledged leave survives the owner.
    cluster.kill(0);
    cluster
        .wait_lease(&code, Duration::from_secs(15), "taken over by b", |l| {
            l.owner == "b" && l.epoch >= 2
        })
        .await;
    let (shown, stored) = seats(&cluster, 1, &code).await;
    assert_eq!(shown, ["yellow"], "b shows the seat gone");
    assert_eq!(stored, ["yellow"], "and it is stored gone");
}

/// Issue 25, owner epochs: the owner a is paused (SIGSTOP) for 3 s, twice its lease; b,
/// the edge of a player and a spectator, takes the room over at epoch 2 and its relayed
/// connections follow it. When a resumes (SIGCONT) it still believes it owns the room
/// for a moment and sends its late notices (frames, the `end`s of its links, each naming
/// epoch 1 and an old link generation) before its renewal finds the room lost: none of
/// them detaches or closes anything. Nobody reconnects (a's own player is rehomed to b),
/// nobody loses a turn, every client's events equal the stored log, and no write of a
/// after the takeover is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_owners_late_notices_detach_nothing() {
    let test = "a_paused_owners_late_notices_detach_nothing";
    let opts = Opts {
        nodes: 2,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let down = Duration::from_secs(3);
    let (code, players, began) = a_game_through_a_fault(
        &mut cluster,
        down,
        |c| c.signal(0, "STOP"),
        async |c| {
            c.wait_lease(&code_of(c).await, Duration::from_secs(5), "b", |l| {
                l.owner == "b"
            })
            .await;
            c.signal(0, "CONT");
        },
    )
    .await;
    after_the_fault(&cluster, test, &code, &players, began, down + AFTER_HEAL).await;
    let lease = cluster.lease(&code).await.expect("lease");
    assert_eq!(
        (lease.owner.as_str(), lease.epoch),
        ("b", 2),
        "one takeover, no owner since"
    );
    for p in &players {
        assert_eq!(p.sessions.len(), 1, "{} never reconnected", p.name);
    }
    let (known, unknown) = cluster.check_writers().await;
    eprintln!("{test}: writes by the owner: {known} (writer unknown: {unknown})");
    assert!(known > 0, "the writers were identified");
}

/// The code of the one room the test's database holds.
async fn code_of(cluster: &Cluster) -> String {
    sqlx::query_scalar("SELECT code FROM rooms")
        .fetch_one(&cluster.db)
        .await
        .expect("one room")
}

/// Issue 25, seats and the log (docs/CLUSTER.md, "Stored seats and the log"): red
/// abandons a three-player game on a (it leaves mid-game), the two others play it to the
/// end and ask for a rematch: its start deletes red's seat row in the same transaction.
/// The owner is then killed: the node that takes the room over shows the rematch's two
/// seats, as stored, and the rematch's game running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rematch_without_an_abandoned_seat_survives_a_takeover() {
    let test = "a_rematch_without_an_abandoned_seat_survives_a_takeover";
    let opts = Opts {
        nodes: 2,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let code = cluster
        .create_room(
            0,
            &json!({"seats": 3, "turn_clock_secs": 60, "disconnect_grace_secs": 300,
                    "public": false}),
        )
        .await;
    let roster = cluster.roster.clone();
    let mut ana = Player::join(&roster, 0, &code, "ana", Some("yellow")).await;
    let mut bruno = Player::join(&roster, 1, &code, "bruno", Some("blue")).await;
    let mut carla = Player::join(&roster, 1, &code, "carla", Some("red")).await;
    for p in [&mut ana, &mut bruno, &mut carla] {
        p.wait_seq(3).await;
    }
    assert_eq!(ana.command(json!({"type": "start"})).await["type"], "ok");
    let left = carla.command(json!({"type": "leave"})).await;
    assert_eq!(left["type"], "ok", "{left}");
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut players = play_all(vec![ana, bruno], deadline).await;
    let (shown, stored) = seats(&cluster, 1, &code).await;
    assert_eq!(shown, ["yellow", "blue", "red"], "red shows abandoned");
    assert_eq!(stored, ["blue", "red", "yellow"], "and keeps its row");
    for p in &mut players {
        let ok = p.command(json!({"type": "rematch"})).await;
        assert_eq!(ok["type"], "ok", "{}: {ok}", p.name);
    }
    let (shown, stored) = seats(&cluster, 1, &code).await;
    assert_eq!(shown, ["yellow", "blue"]);
    assert_eq!(
        stored,
        ["blue", "yellow"],
        "the rematch's start deleted red's row"
    );
    cluster.kill(0);
    cluster
        .wait_lease(&code, Duration::from_secs(10), "taken over by b", |l| {
            l.owner == "b" && l.epoch >= 2
        })
        .await;
    let (shown, stored) = seats(&cluster, 1, &code).await;
    assert_eq!(
        shown,
        ["yellow", "blue"],
        "the new owner shows the rematch's seats"
    );
    assert_eq!(stored, ["blue", "yellow"]);
    let (status, view) = cluster
        .http(1, "GET", &format!("/api/rooms/{code}"), None)
        .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["status"], "playing", "the rematch runs on: {view}");
}
