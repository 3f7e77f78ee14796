//! The public lobby across nodes, and room codes unique across the cluster.

use crate::driver::Player;
use crate::harness::{Cluster, Opts};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

/// The codes listed by `GET /api/rooms{query}` on node `i`.
async fn listed(cluster: &Cluster, i: usize, query: &str) -> BTreeSet<String> {
    let (status, body) = cluster
        .http(i, "GET", &format!("/api/rooms{query}"), None)
        .await;
    assert_eq!(status, 200, "node {i}: {body}");
    body["rooms"]
        .as_array()
        .unwrap_or_else(|| panic!("node {i}: no rooms list: {body}"))
        .iter()
        .filter_map(|r| r["code"].as_str().map(str::to_owned))
        .collect()
}

/// Many public rooms created on all three nodes at once: every code is distinct, each
/// room is owned by the node that got its `POST`, and every node's lobby lists all of
/// them (and no private room). A game started on one node leaves every lobby and is
/// listed as playing by every node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_of_every_node_lists_the_rooms_of_all_nodes() {
    let test = "the_lobby_of_every_node_lists_the_rooms_of_all_nodes";
    let Some(cluster) = Cluster::start(test, Opts::default()).await else {
        return;
    };
    const PER_NODE: usize = 20;
    let creations = (0..3 * PER_NODE).map(|k| {
        let cluster = &cluster;
        async move {
            let node = k % 3;
            let code = cluster
                .create_room(node, &json!({"seats": 2, "public": true}))
                .await;
            (node, code)
        }
    });
    let created: Vec<(usize, String)> = futures_util::future::join_all(creations).await;
    let codes: BTreeSet<String> = created.iter().map(|(_, c)| c.clone()).collect();
    assert_eq!(
        codes.len(),
        created.len(),
        "room codes are unique: {created:?}"
    );
    let private = cluster
        .create_room(1, &json!({"seats": 2, "public": false}))
        .await;

    // Placed on the node that was asked (none is draining or full).
    let mut per_owner: HashMap<String, usize> = HashMap::new();
    for (node, code) in &created {
        let lease = cluster.lease(code).await.expect("a lease per room");
        assert_eq!(lease.owner, cluster.id(*node), "room {code}: {lease:?}");
        assert_eq!(lease.epoch, 1, "room {code}: {lease:?}");
        *per_owner.entry(lease.owner).or_default() += 1;
    }
    assert_eq!(per_owner.len(), 3, "{per_owner:?}");

    for i in 0..3 {
        let lobby = listed(&cluster, i, "").await;
        let missing: Vec<&String> = codes.difference(&lobby).collect();
        assert!(missing.is_empty(), "node {i} does not list {missing:?}");
        assert!(!lobby.contains(&private), "node {i} lists the private room");
        assert_eq!(lobby.len(), codes.len(), "node {i}: {lobby:?}");
    }

    // A game starts in a room of node c, its players on a and b: it leaves every lobby
    // and every node lists it as playing.
    let (_, game_room) = created
        .iter()
        .find(|(node, _)| *node == 2)
        .cloned()
        .expect("a room of node c");
    let roster = cluster.roster.clone();
    let mut ana = Player::join(&roster, 0, &game_room, "Ana", None).await;
    let mut bruno = Player::join(&roster, 1, &game_room, "Bruno", None).await;
    ana.wait_seq(2).await;
    bruno.wait_seq(2).await;
    let ok = ana.command(json!({"type": "start"})).await;
    assert_eq!(ok["type"], "ok", "{ok}");
    for i in 0..3 {
        let until = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let lobby = listed(&cluster, i, "").await;
            let playing = listed(&cluster, i, "?status=playing").await;
            if !lobby.contains(&game_room) && playing.contains(&game_room) {
                assert_eq!(lobby.len(), codes.len() - 1, "node {i}");
                break;
            }
            assert!(
                std::time::Instant::now() < until,
                "node {i}: the started room is still in the lobby or not playing: {playing:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let (status, body): (u16, Value) = cluster.http(2, "GET", "/api/rooms?status=nope", None).await;
    assert_eq!(status, 400, "{body}");
}
