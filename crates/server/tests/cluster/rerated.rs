//! A rated game's new ratings reach a live room on another node (issue 26,
//! docs/ACCOUNTS.md): the game runs in room A on node a, and the players also sit in the
//! lobby of room B on node b, watched by a spectator on b. When A's game ends node a
//! publishes the accounts on `P.rerated`; node b's room B reads their ratings again and
//! its spectator gets `rating` for each seat, equal to the profile's display rating.

use crate::common::{call, logged_in, sign_up_at, Client};
use crate::harness::{Cluster, Opts};
use serde_json::{json, Value};

/// The display rating of `name` in `online`, read through the node at `addr`.
async fn online_display(addr: std::net::SocketAddr, name: &str) -> Value {
    let (status, body) = call(addr, "GET", &format!("/api/players/{name}"), None, "").await;
    assert_eq!(status, 200, "{body}");
    let display = body["ratings"]["online"]["display"].clone();
    assert!(display.is_i64(), "{name}: {body}");
    display
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_games_end_on_one_node_shows_the_new_ratings_in_a_room_on_another() {
    let opts = Opts {
        nodes: 2,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start("rerated_across_nodes", opts).await else {
        return;
    };
    let (a, b) = (cluster.addr(0), cluster.addr(1));
    let ana = sign_up_at(a, "Ana").await;
    let luis = sign_up_at(a, "Luis").await;

    // Room B on node b: both players sit in its lobby (no rating yet), a guest watches.
    let room_b = cluster
        .create_room(1, &json!({"preset": "online", "seats": 2, "rated": true}))
        .await;
    let mut ana_b = logged_in(b, &ana).await;
    ana_b.join(&room_b, "ignored", Some("yellow")).await;
    let mut luis_b = logged_in(b, &luis).await;
    let welcome = luis_b.join(&room_b, "ignored", Some("red")).await;
    let unrated: Vec<Value> = welcome["snapshot"]["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .map(|s| s["rating"].clone())
        .collect();
    assert_eq!(unrated, [Value::Null, Value::Null], "{welcome}");
    let mut watcher = crate::common::client(b).await;
    watcher.watch(&room_b).await;

    // Room A on node a: a rated game that red (Luis) leaves at once.
    let room_a = cluster
        .create_room(0, &json!({"preset": "online", "seats": 2, "rated": true}))
        .await;
    let mut y = logged_in(a, &ana).await;
    y.join(&room_a, "ignored", Some("yellow")).await;
    let mut r = logged_in(a, &luis).await;
    r.join(&room_a, "ignored", Some("red")).await;
    while y.seq < r.seq {
        y.next().await;
    }
    y.ok(json!({"type": "start"})).await;
    while r.seq < y.seq {
        r.next().await;
    }
    r.ok(json!({"type": "leave"})).await;
    let won = y
        .until("game_won", |v| Client::is_game_event(v, "game_won"))
        .await;
    assert_eq!(won["event"]["event"]["winner"], "yellow", "{won}");
    let after = [
        online_display(a, "Ana").await,
        online_display(a, "Luis").await,
    ];

    let mut got = std::collections::BTreeMap::new();
    while got.len() < 2 {
        let m = watcher.until("rating", |v| v["type"] == "rating").await;
        assert_eq!(m["room"], room_b.as_str(), "{m}");
        got.insert(
            m["colour"].as_str().unwrap_or_default().to_owned(),
            m["rating"].clone(),
        );
    }
    assert_eq!(got["yellow"], after[0]);
    assert_eq!(got["red"], after[1]);
    let m = ana_b
        .until("rating", |v| {
            v["type"] == "rating" && v["colour"] == "yellow"
        })
        .await;
    assert_eq!(m["rating"], after[0], "{m}");
    let (status, view) = call(b, "GET", &format!("/api/rooms/{room_b}"), None, "").await;
    assert_eq!(status, 200, "{view}");
    let shown: Vec<Value> = view["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .map(|s| s["rating"].clone())
        .collect();
    assert_eq!(shown, after.to_vec(), "{view}");
}
