//! One game played across three nodes.

use crate::checks::check_game;
use crate::driver::{play_all, Player};
use crate::harness::{Cluster, Opts};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A room created on node a, its four players' sockets on a, b, c and c and a
/// spectator's on b, played to the end with seeded dice (each player plays a random legal
/// action): every client saw the same gap-free events, exactly those stored, the room
/// never changed owner, and every node serves the room and the game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_game_across_three_nodes_is_the_same_for_every_client() {
    let test = "one_game_across_three_nodes_is_the_same_for_every_client";
    let Some(cluster) = Cluster::start(test, Opts::default()).await else {
        return;
    };
    let code = cluster
        .create_room(
            0,
            &json!({"seats": 4, "turn_clock_secs": 60, "public": false}),
        )
        .await;
    let lease = cluster
        .wait_lease(&code, Duration::from_secs(5), "owned by a", |l| {
            l.owner == "a"
        })
        .await;
    assert_eq!(lease.epoch, 1, "a new room's first lease: {lease:?}");
    let roster = cluster.roster.clone();
    let mut players = Vec::new();
    for (k, node) in [0, 1, 2, 2].into_iter().enumerate() {
        let mut p = Player::join(&roster, node, &code, &format!("p{k}"), None).await;
        p.seed(k as u64 + 11);
        players.push(p);
    }
    let mut spectator = Player::watch(&roster, 1, &code, "spectator").await;
    for p in players.iter_mut() {
        p.wait_seq(4).await;
    }
    let started = players[0].command(json!({"type": "start"})).await;
    assert_eq!(started["type"], "ok", "{started}");
    spectator.wait_seq(5).await;
    players.push(spectator);

    let deadline = Instant::now() + Duration::from_secs(240);
    let all = play_all(players, deadline).await;
    let refs: Vec<&Player> = all.iter().collect();
    let stored = check_game(&cluster, &code, &refs, true).await;
    assert!(stored.finished(), "the game was played to its end");
    assert_eq!(stored.timeouts(), 0, "nobody ran out of time");
    eprintln!(
        "{test}: {} events, {} throws",
        stored.events.len(),
        stored.engine_events("dice_rolled")
    );

    // The same events, seq for seq, for every client from the last join on.
    let reference = &all[0].events;
    for p in &all {
        assert_eq!(p.sessions.len(), 1, "{}: never reconnected", p.name);
        assert_eq!(
            p.snapshots + p.repeats,
            0,
            "{}: no snapshot, no repeat",
            p.name
        );
        assert!(
            p.errors.is_empty() && p.unanswered == 0 && p.reprompts == 0,
            "{}: every command answered ok: {:?}",
            p.name,
            p.errors
        );
        let mine: Vec<(&u64, &Value)> = p.events.range(5..).collect();
        let theirs: Vec<(&u64, &Value)> = reference.range(5..).collect();
        assert_eq!(mine, theirs, "{} saw what p0 saw", p.name);
    }
    for p in &all[..4] {
        assert_eq!(
            p.acks.len() as u64,
            p.sent,
            "{}: each action acknowledged",
            p.name
        );
    }

    // One owner from start to end; every node serves the room view and the stored game.
    let lease = cluster.lease(&code).await.expect("lease");
    assert_eq!((lease.owner.as_str(), lease.epoch), ("a", 1), "{lease:?}");
    let mut views = Vec::new();
    for i in 0..3 {
        let (status, view) = cluster
            .http(i, "GET", &format!("/api/rooms/{code}"), None)
            .await;
        assert_eq!(status, 200, "node {i}: {view}");
        assert_eq!(view["status"], "finished", "node {i}: {view}");
        views.push(view["seats"].clone());
        let (status, game) = cluster
            .http(i, "GET", &format!("/api/games/{}", stored.id), None)
            .await;
        assert_eq!(status, 200, "node {i}: {game}");
        assert_eq!(
            game["events"].as_array().map(Vec::len),
            Some(stored.events.len()),
            "node {i} serves the whole game"
        );
    }
    assert!(views.windows(2).all(|w| w[0] == w[1]), "{views:?}");
    let (known, unknown) = cluster.check_writers().await;
    eprintln!("{test}: writes by the owner: {known} (writer unknown: {unknown})");
}
