//! Quick pairing in a cluster (issue 26, docs/ACCOUNTS.md "Quick pairing in a cluster"):
//! the pool lives in the database (`pairing_tickets`) and one node at a time runs the
//! matcher (`pairing_lease`). Two players who queue on different nodes are paired into
//! one room and claim it from their own nodes; the game starts. Then a player waits
//! while the matcher's node is killed (kill -9): a surviving node (of three) takes the
//! lease after its TTL, the ticket is still there (with its wait) and is paired with a
//! newcomer.

use crate::common::{call, logged_in, sign_up_at, Client};
use crate::harness::{Cluster, Opts};
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
