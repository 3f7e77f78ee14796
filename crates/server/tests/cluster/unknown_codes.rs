//! The negative cache of unknown room codes (docs/CLUSTER.md, "Hostile clients"): a
//! flood of lookups of one code that no room has costs its node one store read per
//! cache TTL, not one NATS request and one store read per lookup; rooms that exist are
//! found through it as before.

use crate::harness::{Cluster, Opts};
use serde_json::json;
use std::time::{Duration, Instant};

/// The cache's TTL (`cluster::routing::unknown::TTL`).
const TTL: Duration = Duration::from_secs(5);
const LOOKUPS: &str = "parchis_cluster_unknown_code_lookups_total";

/// Node b is asked ten times over HTTP for a code no room has, then a `roll` before
/// joining, a `join`, a `watch` and a `resume` name it: every answer is `unknown_room`,
/// and b read the store once (`answer="read"`) and answered the other 13 from its cache
/// (`answer="cached"`; if the machine was so slow that the lookups outlasted the TTL, one
/// more read per TTL). Rooms created on a and b right after the misses are found through
/// b, by view and by `join`, and touch the cache's counts not at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lookups_of_an_unknown_code_read_the_store_once_per_ttl() {
    let test = "lookups_of_an_unknown_code_read_the_store_once_per_ttl";
    let opts = Opts {
        nodes: 2,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let code = "ZZZZZZZZZZ";
    let started = Instant::now();
    for _ in 0..10 {
        let (status, body) = cluster
            .http(1, "GET", &format!("/api/rooms/{code}"), None)
            .await;
        assert_eq!(
            (status, &body["code"]),
            (404, &json!("unknown_room")),
            "{body}"
        );
    }
    let mut guesser = crate::common::client(cluster.addr(1)).await;
    for msg in [
        json!({"type": "roll", "room": code, "seq": 0}),
        json!({"type": "join", "room": code, "name": "Guess"}),
        json!({"type": "watch", "room": code}),
        json!({"type": "resume", "room": code, "token": "0123abcd", "last_seq": 0}),
    ] {
        guesser.refused(msg, "unknown_room").await;
    }
    let elapsed = started.elapsed();
    let read = cluster.metric(1, LOOKUPS, &[r#"answer="read""#]).await;
    let cached = cluster.metric(1, LOOKUPS, &[r#"answer="cached""#]).await;
    eprintln!("{test}: 14 lookups in {elapsed:?}: {read} read, {cached} cached");
    if elapsed < TTL {
        assert_eq!((read, cached), (1.0, 13.0));
    } else {
        let windows = (elapsed.as_millis() / TTL.as_millis()) as f64 + 1.0;
        assert!(
            (1.0..=windows).contains(&read),
            "{read} reads in {elapsed:?}"
        );
        assert!(read + cached >= 13.0, "{read} + {cached}");
    }

    // Rooms created right after the misses, on either node, are found through b.
    for node in [0, 1] {
        let room = cluster.create_room(node, &json!({"seats": 2})).await;
        let (status, body) = cluster
            .http(1, "GET", &format!("/api/rooms/{room}"), None)
            .await;
        assert_eq!(status, 200, "{room} created on {node}: {body}");
        assert_eq!(body["code"], json!(room), "{body}");
        let mut player = crate::common::client(cluster.addr(1)).await;
        player.join(&room, "Ana", None).await;
    }
    assert_eq!(cluster.metric(1, LOOKUPS, &[]).await, read + cached);
}

/// Texts that cannot be room codes (4,100 characters, a NUL, a dot or a newline, which
/// would go into a NATS subject: one over NATS's 4 KB line limit made it drop the node's
/// connection, every time) are `unknown_room` at once over HTTP and the WebSocket: never
/// looked up (the lookups' counter stays at 0), and a player relayed through that node
/// joins a real room right after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn texts_that_cannot_be_codes_are_unknown_without_a_lookup() {
    let test = "texts_that_cannot_be_codes_are_unknown_without_a_lookup";
    let opts = Opts {
        nodes: 2,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let long = "B".repeat(4100);
    for path_code in [long.as_str(), "AB%00CD", "AB.CD"] {
        let (status, body) = cluster
            .http(1, "GET", &format!("/api/rooms/{path_code}"), None)
            .await;
        assert_eq!(
            (status, &body["code"]),
            (404, &json!("unknown_room")),
            "{}",
            &path_code[..path_code.len().min(16)]
        );
        assert!(body.to_string().len() < 200, "not echoed whole: {body}");
    }
    let mut guesser = crate::common::client(cluster.addr(1)).await;
    for code in [long.as_str(), "AB\u{0}CD", "AB\nCD", "P.room.X"] {
        for msg in [
            json!({"type": "watch", "room": code}),
            json!({"type": "join", "room": code, "name": "Guess"}),
            json!({"type": "roll", "room": code, "seq": 0}),
        ] {
            guesser.refused(msg, "unknown_room").await;
        }
    }
    assert_eq!(cluster.metric(1, LOOKUPS, &[]).await, 0.0, "no lookup");
    let room = cluster.create_room(0, &json!({"seats": 2})).await;
    let mut player = crate::common::client(cluster.addr(1)).await;
    player.join(&room, "Ana", None).await;
}
