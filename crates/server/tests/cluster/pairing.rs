//! Quick pairing in a cluster (issue 26, docs/ACCOUNTS.md "Quick pairing in a cluster"):
//! the pool lives in the database (`pairing_tickets`) and one node at a time runs the
//! matcher (`pairing_lease`). Two players who queue on different nodes are paired into
//! one room and claim it from their own nodes; the game starts. Then a player waits
//! while the matcher's node is killed (kill -9): a surviving node (of three) takes the
//! lease after its TTL, the ticket is still there (with its wait) and is paired with a
//! newcomer. And a paired room running on a node other than the matcher's has its lobby
//! closed there when its claim wait runs out (the close asked over NATS).

use crate::common::{self, call, logged_in, sign_up_at, Client};
use crate::harness::{Cluster, Opts};
use parchis_telemetry::names::ROOM_REQUESTS;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Enters the `online` 2-seat casual pool on `addr`; the ticket.
async fn enter(addr: SocketAddr, token: &str) -> String {
    let ask = json!({"preset": "online", "seats": 2, "rated": false}).to_string();
    let (status, body) = call(addr, "POST", "/api/pairing", Some(token), &ask).await;
    assert_eq!(status, 201, "{body}");
    body["ticket"].as_str().expect("ticket").to_owned()
}

/// Polls `ticket` on `addr` until it is paired (30 s at most, any node failing in
/// between is retried); the answer.
async fn paired(addr: SocketAddr, ticket: &str) -> Value {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = call(addr, "GET", &format!("/api/pairing/{ticket}"), None, "").await;
        assert_eq!(status, 200, "{body}");
        if body["status"] == "paired" {
            return body;
        }
        assert!(Instant::now() < end, "{ticket} not paired: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Claims `room` by account and waits for the game to start.
async fn claim_and_start(clients: &mut [Client], room: &str) {
    for c in clients.iter_mut() {
        let req = c.cmd(json!({"type": "claim", "room": room})).await;
        let welcome = c.reply(req).await;
        assert_eq!(welcome["type"], "welcome", "{welcome}");
    }
    for c in clients.iter_mut() {
        let started = c
            .until("game_started", |v| {
                v["type"] == "event" && v["event"]["type"] == "game_started"
            })
            .await;
        assert_eq!(started["event"]["type"], "game_started", "{started}");
    }
}

async fn matcher(cluster: &Cluster) -> Option<(String, i64)> {
    sqlx::query_as::<_, (String, i64)>(
        "SELECT owner, epoch FROM pairing_lease WHERE name = 'pairing' AND expires_at > now()",
    )
    .fetch_optional(&cluster.db)
    .await
    .expect("read the pairing lease")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_on_two_nodes_are_paired_and_the_pool_outlives_the_matchers_node() {
    let Some(mut cluster) = Cluster::start("pairing_cluster", Opts::default()).await else {
        return;
    };
    let (a, b) = (cluster.addr(0), cluster.addr(1));
    let ana = sign_up_at(a, "Ana_1").await;
    let bea = sign_up_at(b, "Bea_2").await;
    let ta = enter(a, &ana).await;
    let tb = enter(b, &bea).await;
    // Each ticket is read on the other node.
    let pa = paired(b, &ta).await;
    let pb = paired(a, &tb).await;
    assert_eq!(pa["room"], pb["room"], "{pa} {pb}");
    assert_ne!(pa["colour"], pb["colour"], "{pa} {pb}");
    let room = pa["room"].as_str().expect("room").to_owned();
    let mut clients = [logged_in(a, &ana).await, logged_in(b, &bea).await];
    claim_and_start(&mut clients, &room).await;

    // One matcher in the cluster; a ticket is cancelled on any node.
    let (owner, epoch) = matcher(&cluster).await.expect("a matcher");
    let m = cluster.index_of(&owner).expect("the matcher is a node");
    let other = (m + 1) % cluster.roster.len();
    let cris = sign_up_at(cluster.addr(other), "Cris_3").await;
    let dani = sign_up_at(cluster.addr(other), "Dani_4").await;
    let gone = enter(cluster.addr(m), &dani).await;
    let (status, _) = call(
        cluster.addr(other),
        "DELETE",
        &format!("/api/pairing/{gone}"),
        None,
        "",
    )
    .await;
    assert_eq!(status, 204);
    let (status, body) = call(
        cluster.addr(m),
        "GET",
        &format!("/api/pairing/{gone}"),
        None,
        "",
    )
    .await;
    assert_eq!(
        (status, body["code"].clone()),
        (404, json!("unknown_ticket")),
        "{body}"
    );

    // Cris waits alone, entered on the matcher's node; it is killed.
    let tc = enter(cluster.addr(m), &cris).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    cluster.kill(m);
    let s = cluster.addr(other);
    let (status, body) = call(s, "GET", &format!("/api/pairing/{tc}"), None, "").await;
    assert_eq!(
        (status, body["status"].clone()),
        (200, json!("waiting")),
        "{body}"
    );
    assert!(
        body["waiting_ms"].as_i64().expect("waiting_ms") >= 700,
        "{body}"
    );
    // Dani comes on the survivor, which runs the matcher once the lease expired.
    let td = enter(s, &dani).await;
    let pc = paired(s, &tc).await;
    let pd = paired(s, &td).await;
    assert_eq!(pc["room"], pd["room"], "{pc} {pd}");
    let (owner2, epoch2) = matcher(&cluster).await.expect("a matcher");
    // A surviving node runs the matcher now, under a higher epoch.
    assert_ne!(owner2, owner);
    assert!(epoch2 > epoch, "{epoch2} after {epoch}");
    let room = pc["room"].as_str().expect("room").to_owned();
    let mut clients = [logged_in(s, &cris).await, logged_in(s, &dani).await];
    claim_and_start(&mut clients, &room).await;
}

/// Polls `ticket` on `addr` until it is no longer `paired` (10 s at most); the answer.
async fn settled(addr: SocketAddr, ticket: &str) -> Value {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, body) = call(addr, "GET", &format!("/api/pairing/{ticket}"), None, "").await;
        assert_eq!(status, 200, "{body}");
        if body["status"] != "paired" {
            return body;
        }
        assert!(Instant::now() < end, "{ticket} still paired: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The claim wait (2 s here) of a room running on a node other than the matcher's: Ana
/// and Bea are paired into a room opened on the matcher's node `m`; the test then hands
/// the pairing lease to node `b` (an SQL update, as a failover would, epoch + 1). Ana
/// claims from the third node (relayed to `m`), Bea never does. When the wait runs out
/// `b`'s matcher asks `m` over NATS to close the lobby (`close_lobby`): Ana's connection
/// is closed 4006, both tickets answer `expired` with the room, Ana's with a new ticket
/// on which she waits again, Bea's with none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lobby_on_another_node_than_the_matchers_is_closed_when_its_claim_wait_runs_out() {
    let opts = Opts {
        env: vec![("PARCHIS_PAIRING_CLAIM_WAIT_MS", "2000".to_owned())],
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start("pairing_claim_wait_cluster", opts).await else {
        return;
    };
    let a = cluster.addr(0);
    let ana = sign_up_at(a, "Ana_1").await;
    let bea = sign_up_at(a, "Bea_2").await;
    let ta = enter(a, &ana).await;
    let tb = enter(a, &bea).await;
    let pa = paired(a, &ta).await;
    let (owner, _) = matcher(&cluster).await.expect("a matcher");
    let m = cluster.index_of(&owner).expect("the matcher is a node");
    let b = (m + 1) % cluster.roster.len();
    let c = (m + 2) % cluster.roster.len();
    // The lease moves to b before the wait runs out; m no longer runs the matcher.
    sqlx::query(
        "UPDATE pairing_lease SET owner = $1, epoch = epoch + 1, \
         expires_at = now() + interval '10 seconds' WHERE name = 'pairing'",
    )
    .bind(cluster.id(b))
    .execute(&cluster.db)
    .await
    .expect("move the pairing lease");
    let room = pa["room"].as_str().expect("room").to_owned();
    let lease = cluster.lease(&room).await.expect("the room's lease");
    assert_eq!(lease.owner, owner, "the room runs on the matcher's node");
    let mut ana_ws = logged_in(cluster.addr(c), &ana).await;
    let req = ana_ws.cmd(json!({"type": "claim", "room": room})).await;
    let welcome = ana_ws.reply(req).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    assert_eq!(welcome["colour"], pa["colour"], "{welcome}");

    assert_eq!(common::close_code(&mut ana_ws).await, Some(4006));
    let body = settled(cluster.addr(b), &ta).await;
    assert_eq!(
        (body["status"].clone(), body["room"].clone()),
        (json!("expired"), json!(room)),
        "{body}"
    );
    let again = body["ticket"].as_str().expect("a new ticket").to_owned();
    let body = settled(cluster.addr(c), &tb).await;
    assert_eq!(
        (
            body["status"].clone(),
            body["room"].clone(),
            body["ticket"].clone()
        ),
        (json!("expired"), json!(room), Value::Null),
        "{body}"
    );
    let (status, body) = call(a, "GET", &format!("/api/pairing/{again}"), None, "").await;
    assert_eq!(
        (status, body["status"].clone()),
        (200, json!("waiting")),
        "{body}"
    );
    assert!(
        body["waiting_ms"].as_i64().expect("waiting_ms") >= 2000,
        "the original wait is kept: {body}"
    );
    // b ran the matcher throughout, and m's room service answered its close.
    let (now_owner, _) = matcher(&cluster).await.expect("a matcher");
    assert_eq!(now_owner, cluster.id(b));
    let asked = cluster
        .metric(m, ROOM_REQUESTS, &[r#"op="close_lobby""#])
        .await;
    assert!(asked >= 1.0, "close_lobby requests answered by m: {asked}");
    // The room is stored finished, without a game.
    let (status,): (String,) = sqlx::query_as("SELECT status FROM rooms WHERE code = $1")
        .bind(&room)
        .fetch_one(&cluster.db)
        .await
        .expect("read the room");
    assert_eq!(status, "finished");
    assert!(cluster.games_of(&room).await.is_empty());
}
