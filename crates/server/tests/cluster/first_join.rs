//! A room is served on `P.room.<CODE>` before its creation is answered (docs/CLUSTER.md,
//! "Routing"): node a reaches NATS through a proxy that holds everything a sends for
//! 300 ms, so a subscription made after the answer would reach NATS long after the
//! client's first request through b. Every first `join`, `watch` and room view through
//! b right after `POST /api/rooms` on a is answered by the room (never
//! `room_unavailable`, and nothing is sent twice).

use crate::common::client;
use crate::harness::{Cluster, Opts};
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_join_through_another_node_finds_a_new_room() {
    let test = "the_first_join_through_another_node_finds_a_new_room";
    let opts = Opts {
        nodes: 2,
        slow_nats: Some((0, Duration::from_millis(300))),
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let b = cluster.addr(1);
    // Sockets on b opened beforehand: the join goes out the moment the room exists.
    for round in 0..3 {
        let mut bruno = client(b).await;
        let mut eve = client(b).await;
        let code = cluster
            .create_room(0, &json!({"seats": 2, "public": false}))
            .await;
        let req = bruno
            .cmd(json!({"type": "join", "room": code, "name": "Bruno", "colour": "blue"}))
            .await;
        let w = bruno.reply(req).await;
        assert_eq!(w["type"], "welcome", "round {round}: join through b: {w}");
        let req = eve.cmd(json!({"type": "watch", "room": code})).await;
        let w = eve.reply(req).await;
        assert_eq!(w["type"], "welcome", "round {round}: watch through b: {w}");
        let code2 = cluster.create_room(0, &json!({"seats": 2})).await;
        let (status, view) = cluster
            .http(1, "GET", &format!("/api/rooms/{code2}"), None)
            .await;
        assert_eq!(status, 200, "round {round}: room view through b: {view}");
    }
}
