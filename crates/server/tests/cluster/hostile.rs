//! Hostile clients against a cluster (docs/CLUSTER.md, "Hostile clients"): the attacks of
//! `tests/hostile.rs` aimed at the path a single node does not have, a socket on an edge
//! node whose room runs on another node (commands forwarded over NATS, frames relayed
//! back), and at the limits a client meets on every node. Each test asserts the defence
//! and that honest clients of the same room, on other nodes, are served in full.
//!
//! Why one file of ~800 lines: a list of independent attacks sharing the helpers at its
//! top, as `tests/hostile.rs` (the helpers both need are in `tests/common`, the cluster's
//! games in `setup.rs`).

use crate::common::{
    assert_answers_ping, assert_read_it_all, client, close_code, ip, read_to_the_end, Client,
};
use crate::harness::{metric_at as metric, Cluster, Opts};
use crate::setup::seated_with_a_spectator;
use futures_util::SinkExt;
use serde_json::{json, Value};
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

/// A client whose connection comes from source address `from` (127.0.0.x), optionally
/// with a tiny receive buffer (a reader that stalls fills it at once).
async fn client_from(addr: SocketAddr, from: IpAddr, small_buffer: bool) -> Client {
    crate::common::client_from(addr, Some(from), small_buffer).await
}

/// Plays the game of `players` (each rolls or plays its first legal action on its
/// `your_turn`) until every one has seen event `until`. Every command must be answered
/// `ok` and every player's events must be gap-free. Returns the players and how many
/// commands they sent.
async fn play_until(players: Vec<Client>, until: u64) -> (Vec<Client>, u64) {
    let tasks: Vec<_> = players
        .into_iter()
        .map(|mut c| {
            tokio::spawn(async move {
                let mut sent = 0u64;
                let mut waiting: Option<u64> = None;
                while c.seq < until || waiting.is_some() {
                    let v = c.next().await.expect("socket closed mid-game");
                    match v["type"].as_str() {
                        Some("your_turn") if v["seq"].as_u64() == Some(c.seq) => {
                            let cmd = if v["must_roll"] == true {
                                json!({"type": "roll"})
                            } else {
                                json!({"type": "play", "action": v["legal"][0]})
                            };
                            waiting = Some(c.cmd(cmd).await);
                            sent += 1;
                        }
                        Some("ok") if v["req"].as_u64() == waiting => waiting = None,
                        Some("error" | "closing" | "ws_close") => {
                            panic!("honest player refused or dropped: {v}")
                        }
                        _ => {}
                    }
                    assert!(
                        !Client::is_game_event(&v, "game_won"),
                        "the game ended before seq {until}"
                    );
                }
                (c, sent)
            })
        })
        .collect();
    let mut out = Vec::new();
    let mut sent = 0;
    for t in tasks {
        let (c, n) = tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .expect("play_until: 60 s")
            .expect("player task");
        gap_free(&c);
        out.push(c);
        sent += n;
    }
    (out, sent)
}

/// `c`'s event seqs are consecutive.
fn gap_free(c: &Client) {
    let seqs: Vec<u64> = c.events.iter().filter_map(|e| e["seq"].as_u64()).collect();
    for w in seqs.windows(2) {
        assert_eq!(
            w[1],
            w[0] + 1,
            "{:?}: seq {} follows {}",
            c.colour,
            w[1],
            w[0]
        );
    }
}

/// A two-seat game on node 0 (the owner), Ana on node 2 and Bruno on node 1 (both
/// relayed), started. Every client has read up to the start.
async fn relayed_game(cluster: &Cluster) -> (String, Client, Client) {
    let code = cluster
        .create_room(
            0,
            &json!({"seats": 2, "turn_clock_secs": 600, "disconnect_grace_secs": 600}),
        )
        .await;
    let mut ana = client(cluster.addr(2)).await;
    ana.join(&code, "Ana", Some("yellow")).await;
    let mut bruno = client(cluster.addr(1)).await;
    bruno.join(&code, "Bruno", Some("blue")).await;
    while ana.seq < bruno.seq {
        ana.next().await;
    }
    ana.ok(json!({"type": "start"})).await;
    (code, ana, bruno)
}

/// A spectator on edge node b floods its room (owned by a) with commands, at the
/// production rate limit (10 a second, burst 20). The edge limits it before anything is
/// forwarded: it gets `rate_limited` and is closed with 1008 after too many errors; the
/// owner receives at most its burst and refill of commands (all refused as a spectator's).
/// The honest players, one on b (the flooder's edge) and one on c, play on meanwhile:
/// every command `ok`, every event seen in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_over_a_relayed_socket_is_limited_at_the_edge() {
    let test = "a_flood_over_a_relayed_socket_is_limited_at_the_edge";
    let opts = Opts {
        commands_per_second: 10,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let owner = cluster.addr(0);
    let (code, ana, bruno) = relayed_game(&cluster).await;
    let mut flooder = client(cluster.addr(1)).await;
    flooder.watch(&code).await;
    let commands_before = metric(
        owner,
        "parchis_cluster_room_requests_total",
        &[r#"op="command""#],
    )
    .await;
    let started = Instant::now();
    let flood = tokio::spawn(async move {
        let mut sent = 0u32;
        for _ in 0..400 {
            if flooder.try_cmd(json!({"type": "roll"})).await.is_err() {
                break;
            }
            sent += 1;
        }
        let (mut limited, mut by_owner, mut close) = (0u32, 0u32, None);
        while let Some(v) = flooder.next().await {
            match (v["type"].as_str(), v["code"].as_str()) {
                (Some("error"), Some("rate_limited")) => limited += 1,
                (Some("error"), Some("spectator_cannot_act")) => by_owner += 1,
                (Some("ws_close"), _) => {
                    close = v["code"].as_u64();
                    break;
                }
                _ => {}
            }
        }
        (sent, limited, by_owner, close)
    });
    let target = ana.seq.max(bruno.seq) + 30;
    let (players, honest) = play_until(vec![ana, bruno], target).await;
    let (sent, limited, by_owner, close) = flood.await.expect("flooder");
    let elapsed = started.elapsed().as_secs_f64();
    let commands = metric(
        owner,
        "parchis_cluster_room_requests_total",
        &[r#"op="command""#],
    )
    .await
        - commands_before;
    eprintln!("{test}: flooder sent {sent}, {limited} rate_limited, {by_owner} refused by the owner, close {close:?}; owner took {commands} commands ({honest} honest) in {elapsed:.1} s");
    assert!(limited >= 1, "the edge limited the flood: {limited}");
    assert!(
        close.is_none_or(|c| c == 1008),
        "closed as abuse: {close:?}"
    );
    // What reached the owner: the burst (20) and the refill (10 a second) at most.
    let allowed = 20.0 + 10.0 * elapsed.ceil() + 2.0;
    assert!(
        f64::from(by_owner) <= allowed,
        "{by_owner} flood commands reached the owner"
    );
    assert!(
        commands <= honest as f64 + allowed,
        "the owner took {commands} commands, {honest} of them honest"
    );
    assert!(commands >= honest as f64, "{commands} < {honest}");
    for mut p in players {
        assert_answers_ping(&mut p).await;
    }
    drop(code);
}

/// Malformed input on a relayed socket is answered by the edge as a single node answers
/// it (binary frame, frame over the soft limit, not JSON, another room's command), and the
/// socket stays usable; a frame over the hard limit closes it with 1009. Session tokens
/// through a node that does not own the room: a forged one and one of another room are
/// `bad_token`; a negative or overflowing `last_seq` is refused before anything is
/// forwarded; a resume claiming a `last_seq` far in the future gets a snapshot and then
/// every new event (the edge does not drop them as already seen).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_frames_and_forged_tokens_through_a_node_that_is_not_the_owner() {
    let test = "malformed_frames_and_forged_tokens_through_a_node_that_is_not_the_owner";
    let Some(cluster) = Cluster::start(test, Opts::default()).await else {
        return;
    };
    let code = cluster
        .create_room(0, &json!({"seats": 4, "turn_clock_secs": 600}))
        .await;
    let other = cluster.create_room(0, &json!({"seats": 2})).await;
    let mut ana = client(cluster.addr(0)).await;
    ana.join(&code, "Ana", Some("yellow")).await;
    let mut bruno = client(cluster.addr(1)).await;
    bruno.join(&code, "Bruno", Some("blue")).await;
    let token = bruno.token.clone().expect("token");
    while ana.seq < bruno.seq {
        ana.next().await;
    }

    bruno
        .ws
        .send(Message::Binary(vec![1u8, 2, 3].into()))
        .await
        .expect("send");
    assert_eq!(bruno.error("binary_frame").await["code"], "binary_frame");
    bruno.send_text(&"x".repeat(20 * 1024)).await;
    bruno.error("frame_too_large").await;
    bruno.send_text("{\"type\": \"roll\", \"req\": 9").await;
    bruno.error("bad_json").await;
    bruno
        .refused(json!({"type": "roll", "room": other}), "wrong_room")
        .await;
    assert_answers_ping(&mut bruno).await;

    // Tokens and last_seq through c, which owns neither room.
    let mut c = client(cluster.addr(2)).await;
    let forged = "0".repeat(64);
    c.refused(
        json!({"type": "resume", "room": code, "token": forged, "last_seq": 0}),
        "bad_token",
    )
    .await;
    c.refused(
        json!({"type": "resume", "room": other, "token": token, "last_seq": 0}),
        "bad_token",
    )
    .await;
    for bad in ["-1", "18446744073709551616", "\"7\"", "1e3"] {
        let req = c.next_req;
        c.next_req += 1;
        c.send_text(&format!(
            r#"{{"type":"resume","req":{req},"room":"{code}","token":"{token}","last_seq":{bad}}}"#
        ))
        .await;
        let r = c.reply(req).await;
        assert_eq!(r["type"], "error", "last_seq {bad}: {r}");
        assert_eq!(r["code"], "bad_request", "last_seq {bad}: {r}");
    }
    // Far in the future: a snapshot at the room's seq, then the new events.
    let room_seq = ana.seq.max(bruno.seq);
    let req = c
        .cmd(json!({"type": "resume", "room": code, "token": token, "last_seq": u64::MAX}))
        .await;
    let w = c.reply(req).await;
    assert_eq!(w["type"], "welcome", "{w}");
    assert_eq!(w["colour"], "blue", "{w}");
    assert!(w["snapshot"].is_object(), "a snapshot: {w}");
    assert!(w["seq"].as_u64() >= Some(room_seq), "{w}");
    // The socket on b that held the seat is closed (4000).
    assert_eq!(close_code(&mut bruno).await, Some(4000));
    let before = c.seq;
    ana.ok(json!({"type": "choose_colour", "colour": "red"}))
        .await;
    let e = c.until("the colour change", |v| v["type"] == "event").await;
    assert_eq!(e["seq"].as_u64(), Some(before + 1), "{e}");
    c.ok(json!({"type": "choose_colour", "colour": "green"}))
        .await;

    // Beyond the hard limit (64 KiB): closed with 1009; the room and Ana are fine.
    let _ = c.ws.send(Message::Text("y".repeat(70 * 1024).into())).await;
    assert_eq!(close_code(&mut c).await, Some(1009));
    assert_answers_ping(&mut ana).await;
    let (status, view) = cluster
        .http(1, "GET", &format!("/api/rooms/{code}"), None)
        .await;
    assert_eq!(status, 200, "{view}");
    let colours: Vec<&str> = view["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .filter_map(|s| s["colour"].as_str())
        .collect();
    assert_eq!(colours, vec!["red", "green"], "{view}");
}

/// Joins racing from three nodes for one colour, and for the last seat: exactly one wins
/// each race (the owner decides in order); the others get `colour_taken` / `room_full`.
/// Then rapid join/leave from two edge nodes on one room leaves nothing behind: the seats
/// and the spectator count are back to the creator alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joins_racing_across_nodes_have_one_winner_and_join_leave_churn_leaks_nothing() {
    let test = "joins_racing_across_nodes_have_one_winner_and_join_leave_churn_leaks_nothing";
    let Some(cluster) = Cluster::start(test, Opts::default()).await else {
        return;
    };
    for round in 0..4 {
        let seats = if round % 2 == 0 { 4 } else { 2 };
        let code = cluster.create_room(0, &json!({"seats": seats})).await;
        let mut ana = client(cluster.addr(0)).await;
        ana.join(&code, "Ana", Some("yellow")).await;
        let mut racers = Vec::new();
        for node in 0..3 {
            racers.push(client(cluster.addr(node)).await);
        }
        // Four seats: all want red. Two seats: one seat left, any colour.
        let colour = (seats == 4).then_some("red");
        let room = &code;
        let answers = futures_util::future::join_all(racers.iter_mut().enumerate().map(
            |(i, c)| async move {
                let req = c
                    .cmd(json!({"type": "join", "room": room, "name": format!("R{i}"), "colour": colour}))
                    .await;
                c.reply(req).await
            },
        ))
        .await;
        let won: Vec<&Value> = answers.iter().filter(|a| a["type"] == "welcome").collect();
        assert_eq!(won.len(), 1, "round {round}: {answers:?}");
        let lost = if seats == 4 {
            "colour_taken"
        } else {
            "room_full"
        };
        for a in answers.iter().filter(|a| a["type"] != "welcome") {
            assert_eq!(a["code"], lost, "round {round}: {answers:?}");
        }
        let (_, view) = cluster
            .http(2, "GET", &format!("/api/rooms/{code}"), None)
            .await;
        assert_eq!(view["seats"].as_array().map(Vec::len), Some(2), "{view}");
    }

    let code = cluster.create_room(0, &json!({"seats": 4})).await;
    let mut ana = client(cluster.addr(0)).await;
    ana.join(&code, "Ana", Some("yellow")).await;
    let churn = (1..3).map(|node| {
        let code = code.clone();
        let addr = cluster.addr(node);
        async move {
            let mut c = client(addr).await;
            for k in 0..15 {
                if k % 3 == 2 {
                    c.watch(&code).await;
                } else {
                    c.join(&code, &format!("C{node}"), None).await;
                }
                c.ok(json!({"type": "leave"})).await;
            }
            // And once more, closed without `leave`.
            c.join(&code, &format!("C{node}"), None).await;
            drop(c);
        }
    });
    futures_util::future::join_all(churn).await;
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, view) = cluster
            .http(1, "GET", &format!("/api/rooms/{code}"), None)
            .await;
        let seats = view["seats"].as_array().map(Vec::len);
        let connected = view["seats"]
            .as_array()
            .map(|s| s.iter().filter(|s| s["connected"] == true).count());
        if (seats, connected, view["spectators"].as_u64()) == (Some(3), Some(1), Some(0))
            || Instant::now() > until
        {
            // The two last joins keep their seats (a lobby seat waits out its grace),
            // disconnected; nobody watches.
            assert_eq!(
                (seats, connected, view["spectators"].as_u64()),
                (Some(3), Some(1), Some(0)),
                "{view}"
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_answers_ping(&mut ana).await;
}

/// Spectators of one room spread over the three nodes: the room's cap counts every node's
/// spectators (the owner admits them all), a spectator over it is refused on any node,
/// a place freed on one node is taken from another, and every spectator sees each event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_spectator_cap_of_a_room_holds_across_nodes() {
    let test = "the_spectator_cap_of_a_room_holds_across_nodes";
    let Some(cluster) = Cluster::start(test, Opts::default()).await else {
        return;
    };
    const PER_NODE: usize = 100;
    let code = cluster
        .create_room(
            0,
            &json!({"seats": 2, "turn_clock_secs": 600, "max_spectators": 3 * PER_NODE}),
        )
        .await;
    let mut ana = client(cluster.addr(0)).await;
    ana.join(&code, "Ana", Some("yellow")).await;
    let mut crowd: Vec<Client> = Vec::new();
    for batch in 0..PER_NODE / 25 {
        let joins = (0..75).map(|k| {
            let code = code.clone();
            let addr = cluster.addr(k % 3);
            async move {
                let mut c = client(addr).await;
                c.watch(&code).await;
                (k % 3, c)
            }
        });
        let joined = futures_util::future::join_all(joins).await;
        crowd.extend(joined.into_iter().map(|(_, c)| c));
        eprintln!("{test}: batch {batch}: {} spectators", crowd.len());
    }
    assert_eq!(crowd.len(), 3 * PER_NODE);
    for node in 0..3 {
        let mut late = client(cluster.addr(node)).await;
        late.refused(
            json!({"type": "watch", "room": code}),
            "too_many_spectators",
        )
        .await;
    }
    // One on b goes; one on c takes its place (once the owner heard of the detach).
    let gone = crowd.remove(1);
    drop(gone);
    let until = Instant::now() + Duration::from_secs(5);
    let newcomer = loop {
        let mut c = client(cluster.addr(2)).await;
        let req = c.cmd(json!({"type": "watch", "room": code})).await;
        let r = c.reply(req).await;
        if r["type"] == "welcome" {
            break c;
        }
        assert_eq!(r["code"], "too_many_spectators", "{r}");
        assert!(Instant::now() < until, "the freed place was not given back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    crowd.push(newcomer);
    let (_, view) = cluster
        .http(1, "GET", &format!("/api/rooms/{code}"), None)
        .await;
    assert_eq!(
        view["spectators"].as_u64(),
        Some(3 * PER_NODE as u64),
        "{view}"
    );
    // One event reaches every spectator, wherever its socket is.
    ana.ok(json!({"type": "choose_colour", "colour": "red"}))
        .await;
    let seq = ana.seq;
    let reads = crowd.into_iter().map(|mut c| async move {
        c.until("the colour change", |v| {
            v["type"] == "event" && v["event"]["type"] == "colour_changed"
        })
        .await["seq"]
            .as_u64()
    });
    let seen = futures_util::future::join_all(reads).await;
    assert!(seen.iter().all(|s| *s == Some(seq)), "{seen:?}");
}

/// A spectator on edge node b that never reads: the edge drops it as a slow consumer
/// (within the write timeout, 1 s here) without holding back the relay of anyone else:
/// a spectator on the same edge node reads every event of a fast bot game in order to
/// its end, as does one on c.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_reader_on_an_edge_node_does_not_hold_back_the_relay() {
    let test = "a_stalled_reader_on_an_edge_node_does_not_hold_back_the_relay";
    let opts = Opts {
        env: vec![
            ("PARCHIS_WRITE_TIMEOUT_SECS", "1".into()),
            ("PARCHIS_SEND_BUFFER_BYTES", "4096".into()),
        ],
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let code = cluster
        .create_room(
            0,
            &json!({"seats": 4, "bots": "greedy", "bot_think_ms": 0, "turn_clock_secs": 600}),
        )
        .await;
    let mut me = client(cluster.addr(0)).await;
    me.join(&code, "Ana", Some("yellow")).await;
    let mut stalled = client_from(cluster.addr(1), ip(20), true).await;
    stalled.watch(&code).await;
    let mut readers = Vec::new();
    for node in [1, 2] {
        let mut c = client(cluster.addr(node)).await;
        c.watch(&code).await;
        readers.push(c);
    }
    me.ok(json!({"type": "start"})).await;
    me.ok(json!({"type": "leave"})).await;
    drop(me);
    let started = Instant::now();
    let reading: Vec<_> = readers.into_iter().map(read_to_the_end).collect();
    // The stalled spectator goes (the view counts the two readers only).
    let mut dropped = None;
    while started.elapsed() < Duration::from_secs(20) {
        let (_, view) = cluster
            .http(0, "GET", &format!("/api/rooms/{code}"), None)
            .await;
        if view["spectators"] == 2 {
            dropped = Some(started.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let dropped = dropped.expect("the stalled spectator on b was still attached after 20 s");
    eprintln!("{test}: stalled spectator dropped after {dropped:?}");
    let end = close_code(&mut stalled).await;
    assert!(end.is_none() || end == Some(4001), "{end:?}");
    for r in reading {
        assert_read_it_all(r).await;
    }
}

/// A command sent before joining tells `not_joined` (the code exists) from
/// `unknown_room`: it answers what a lookup by code answers, and on a node that does not
/// run the room it costs a request on NATS. It counts as a lookup by code
/// (`--lookups-per-minute`, per address and node), like `join`, `watch`, `resume` and
/// `GET /api/rooms/{code}`: past the limit it is refused `rate_limited` and nothing is
/// asked. The limit is each node's own: the same address on another node has its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_before_joining_count_as_lookups_by_code() {
    let test = "commands_before_joining_count_as_lookups_by_code";
    let opts = Opts {
        env: vec![("PARCHIS_LOOKUPS_PER_MINUTE", "5".into())],
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let code = cluster.create_room(0, &json!({"seats": 2})).await;
    let mut guesser = client_from(cluster.addr(1), ip(30), false).await;
    let mut answers = Vec::new();
    for k in 0..8 {
        let room = if k % 2 == 0 {
            code.clone()
        } else {
            format!("GUESS{k:05}")
        };
        let req = guesser
            .cmd(json!({"type": "roll", "room": room, "seq": 0}))
            .await;
        let r = guesser.reply(req).await;
        answers.push(r["code"].as_str().unwrap_or("?").to_owned());
    }
    assert_eq!(
        answers,
        [
            "not_joined",
            "unknown_room",
            "not_joined",
            "unknown_room",
            "not_joined"
        ]
        .iter()
        .chain(&["rate_limited"; 3])
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
    );
    // The same budget as a lookup: the address cannot watch through b either.
    guesser
        .refused(json!({"type": "watch", "room": code}), "rate_limited")
        .await;
    // Another address on b, and the same address on c, are not limited.
    let mut other = client_from(cluster.addr(1), ip(31), false).await;
    other
        .refused(
            json!({"type": "roll", "room": code, "seq": 0}),
            "not_joined",
        )
        .await;
    let mut elsewhere = client_from(cluster.addr(2), ip(30), false).await;
    elsewhere
        .refused(
            json!({"type": "roll", "room": code, "seq": 0}),
            "not_joined",
        )
        .await;
}
/// `(status, JSON body)` of an HTTP request to `addr` from source address `from`.
async fn http_from(
    addr: SocketAddr,
    from: IpAddr,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = crate::common::connect_from(addr, Some(from), false).await;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.expect("read");
    let text = String::from_utf8_lossy(&buf).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (
        status,
        serde_json::from_str(body).unwrap_or(Value::String(body.to_owned())),
    )
}

/// An address's open lobbies (`--max-lobbies-per-address`) are counted by the node that
/// runs them. A node that is full (or draining, or shedding load) places a new room on
/// another node; that node counts it for the address too (the placement names the
/// client), so the address cannot open lobbies without limit through a full node. Here
/// every node holds three rooms at most and an address two lobbies: node a is full, an
/// address's creations through a go to b and c, two each, and its fifth is refused
/// `rate_limited` (b and c have room, but not for its lobbies).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lobbies_placed_on_other_nodes_count_for_their_creator() {
    let test = "lobbies_placed_on_other_nodes_count_for_their_creator";
    let opts = Opts {
        max_rooms: Some(3),
        env: vec![("PARCHIS_MAX_LOBBIES_PER_ADDRESS", "2".into())],
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let a = cluster.addr(0);
    // Node a is full with rooms of other addresses.
    for n in 0..3 {
        let (status, body) = http_from(a, ip(41 + n), "POST", "/api/rooms", "{}").await;
        assert_eq!(status, 201, "{body}");
    }
    // Where placement puts them depends on which nodes shed load: none, here.
    for i in 1..3 {
        cluster.wait_not_shedding(i).await;
    }
    let mut owners = Vec::new();
    for _ in 0..4 {
        let (status, body) = http_from(a, ip(40), "POST", "/api/rooms", "{}").await;
        assert_eq!(status, 201, "{body}");
        let code = body["code"].as_str().expect("code");
        owners.push(cluster.lease(code).await.expect("lease").owner);
    }
    owners.sort();
    assert_eq!(
        owners,
        vec![cluster.id(1), cluster.id(1), cluster.id(2), cluster.id(2)]
    );
    let (status, body) = http_from(a, ip(40), "POST", "/api/rooms", "{}").await;
    assert_eq!(
        (status, body["code"].clone()),
        (429, json!("rate_limited")),
        "{body}"
    );
    // Another address still creates (on b or c).
    let (status, body) = http_from(a, ip(44), "POST", "/api/rooms", "{}").await;
    assert_eq!(status, 201, "{body}");
}

/// `GET /api/rooms` in cluster mode asks every other node for its public rooms
/// (`P.lobby`) and the store for the live nodes. A flood of listings on one node costs
/// every node (and the database) a bounded amount: concurrent and back-to-back requests
/// within half a second share one gather of the other nodes' rooms, so 300 listings on b
/// send a few asks, not 300. The node's own rooms are always fresh, the others' at most
/// half a second old.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_lobby_listings_costs_the_other_nodes_a_bounded_number_of_asks() {
    use futures_util::StreamExt;
    let test = "a_flood_of_lobby_listings_costs_the_other_nodes_a_bounded_number_of_asks";
    let Some(cluster) = Cluster::start(test, Opts::default()).await else {
        return;
    };
    let on_a = cluster
        .create_room(0, &json!({"seats": 2, "public": true}))
        .await;
    let nats_url = std::env::var("PARCHIS_NATS_URL").expect("NATS (checked by the harness)");
    let nats = async_nats::connect(nats_url)
        .await
        .expect("connect to NATS");
    let mut asks = nats
        .subscribe(format!("{}.lobby", cluster.prefix))
        .await
        .expect("subscribe");
    nats.flush().await.expect("flush");
    let b = cluster.addr(1);
    let started = Instant::now();
    for _ in 0..15 {
        let listings = (0..20).map(|_| crate::common::http_at(b, "GET", "/api/rooms", None));
        for (status, body) in futures_util::future::join_all(listings).await {
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["rooms"][0]["code"], on_a.as_str(), "{body}");
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    // b's own new room is listed at once; c's within the window.
    let on_b = cluster
        .create_room(1, &json!({"seats": 2, "public": true}))
        .await;
    let listed = |body: &Value| -> Vec<String> {
        let mut codes: Vec<String> = body["rooms"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|r| r["code"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        codes.sort();
        codes
    };
    let (_, body) = cluster.http(1, "GET", "/api/rooms", None).await;
    let mut expected = vec![on_a.clone(), on_b];
    expected.sort();
    assert_eq!(listed(&body), expected, "{body}");
    let on_c = cluster
        .create_room(2, &json!({"seats": 2, "public": true}))
        .await;
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        let (_, body) = cluster.http(1, "GET", "/api/rooms", None).await;
        if body["rooms"].as_array().map(Vec::len) == Some(3) {
            expected.push(on_c.clone());
            expected.sort();
            assert_eq!(listed(&body), expected, "{body}");
            break;
        }
        assert!(Instant::now() < until, "c's room not listed by b: {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut sent = 0u32;
    while let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(300), asks.next()).await {
        let ask: Value = serde_json::from_slice(&m.payload).unwrap_or_default();
        if ask["from"] == cluster.id(1) && ask["playing"] == false {
            sent += 1;
        }
    }
    eprintln!("{test}: 300 listings in {elapsed:.2} s, b sent {sent} asks");
    // One gather per half second (and the few listings after the flood).
    let bound = (elapsed / 0.5).ceil() as u32 + 1 + 8;
    assert!(
        sent <= bound,
        "b asked the other nodes {sent} times (bound {bound})"
    );
}

/// An edge node that dies (`kill -9`) cannot detach its relayed connections: the owner
/// forgets them once the node's heartbeat is older than a TTL. Its spectator stops
/// counting (the room's place is free again) and its player's seat shows disconnected,
/// its grace period running, as if the socket had closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_relayed_connections_of_a_dead_edge_node_are_forgotten_by_the_owner() {
    let test = "the_relayed_connections_of_a_dead_edge_node_are_forgotten_by_the_owner";
    let Some(mut cluster) = Cluster::start(test, Opts::default()).await else {
        return;
    };
    let code = cluster
        .create_room(
            0,
            &json!({"seats": 2, "max_spectators": 1, "disconnect_grace_secs": 600}),
        )
        .await;
    let mut clients = seated_with_a_spectator(&cluster, &code, 0, 1).await;
    cluster.kill(1);
    let killed = Instant::now();
    let until = killed + Duration::from_secs(10);
    let view = loop {
        let (_, view) = cluster
            .http(0, "GET", &format!("/api/rooms/{code}"), None)
            .await;
        let connected: Vec<bool> = view["seats"]
            .as_array()
            .map(|s| s.iter().map(|s| s["connected"] == true).collect())
            .unwrap_or_default();
        if view["spectators"] == 0 && connected == vec![true, false] {
            break view;
        }
        assert!(
            Instant::now() < until,
            "the dead node's connections still count: {view}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    eprintln!("{test}: forgotten after {:?}: {view}", killed.elapsed());
    // Its place is free: a spectator on c gets it.
    let mut zoe = client(cluster.addr(2)).await;
    zoe.watch(&code).await;
    assert_answers_ping(&mut clients[0]).await;
}
