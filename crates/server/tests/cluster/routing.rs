//! Routing between nodes (docs/CLUSTER.md, "Routing: relayed connections"): a game
//! created on node a, one player on a, one player and a spectator on b (relayed through
//! NATS to a, the owner): everyone sees the same gap-free `seq` stream; b's lobby lists
//! a's room and b's room view answers for it; replies reach only the sender.

use crate::common::{client, play_to_end, Client};
use crate::harness::{Cluster, Opts};
use crate::setup::a_started_game_with_a_spectator;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Plays every client to the game's end like [`play_to_end`], but through a room moving
/// between nodes: a `room_unavailable` answer is sent again after 200 ms; `stale_seq` and
/// `not_your_turn` (a `your_turn` asked again after a reattach, already answered) are
/// ignored; any other error fails. Every command gets exactly one reply (`ok` or
/// `error`): a reply to a command not sent, or a second one, fails; each client reads
/// on after the game's last event until every command it sent was answered. `progress`
/// follows the last client's seq.
async fn play_through(clients: Vec<Client>, progress: Arc<AtomicU64>) -> Vec<Client> {
    let n = clients.len();
    let mut tasks = Vec::new();
    for (i, mut c) in clients.into_iter().enumerate() {
        let progress = progress.clone();
        tasks.push(tokio::spawn(async move {
            let mut last: Option<Value> = None;
            let (mut sent, mut answered) = (HashSet::new(), HashSet::new());
            let (mut won, mut over) = (false, false);
            while !(over && answered.len() == sent.len()) {
                let v = c.next().await.expect("socket closed mid-game");
                if i + 1 == n {
                    progress.store(c.seq, Ordering::Relaxed);
                }
                if let (Some("ok" | "error"), Some(req)) = (v["type"].as_str(), v["req"].as_u64()) {
                    assert!(sent.contains(&req), "a reply to no command: {v}");
                    assert!(answered.insert(req), "a second reply to {req}: {v}");
                }
                won |= Client::is_game_event(&v, "game_won");
                if won {
                    // The game's last event.
                    over |= v["type"] == "event" && v["event"]["type"] == "dice_revealed";
                    continue;
                }
                match v["type"].as_str() {
                    Some("your_turn") if v["seq"].as_u64() == Some(c.seq) => {
                        let cmd = if v["must_roll"] == true {
                            json!({"type": "roll"})
                        } else {
                            json!({"type": "play", "action": v["legal"][0]})
                        };
                        sent.insert(c.cmd(cmd.clone()).await);
                        last = Some(cmd);
                    }
                    Some("error") => match v["code"].as_str() {
                        // Not applied, or (its link given up) maybe: the same
                        // command again is safe (stale if it was applied).
                        Some("room_unavailable" | "outcome_unknown") => {
                            tokio::time::sleep(Duration::from_millis(200)).await;
                            if let Some(cmd) = &last {
                                sent.insert(c.cmd(cmd.clone()).await);
                            }
                        }
                        Some("stale_seq" | "not_your_turn") => {}
                        _ => panic!("unexpected error mid-game: {v}"),
                    },
                    _ => {}
                }
            }
            c
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        let c = tokio::time::timeout(Duration::from_secs(90), t)
            .await
            .expect("game did not end in 90 s")
            .expect("player task panicked");
        out.push(c);
    }
    out
}

/// Two nodes and a room created on a (two seats, a 120 s turn clock: no turn times out);
/// the room's code. `None` when the services are absent (see [`Cluster::start`]).
async fn two_nodes_and_a_room(test: &str) -> Option<(Cluster, String)> {
    let opts = Opts {
        nodes: 2,
        ..Opts::default()
    };
    let cluster = Cluster::start(test, opts).await?;
    let code = cluster
        .create_room(0, &json!({"seats": 2, "turn_clock_secs": 120}))
        .await;
    Some((cluster, code))
}

/// The seqs of `c`'s event frames must be consecutive (no gap, no repeat).
fn gap_free(name: &str, c: &Client) -> (u64, u64) {
    let seqs: Vec<u64> = c
        .events
        .iter()
        .map(|e| e["seq"].as_u64().expect("an event has a seq"))
        .collect();
    assert!(!seqs.is_empty(), "{name} saw no events");
    for w in seqs.windows(2) {
        assert_eq!(w[1], w[0] + 1, "{name}: seq {} follows {}", w[1], w[0]);
    }
    (seqs[0], seqs[seqs.len() - 1])
}

/// The event frames of `c` with a seq in `from..=to`.
fn frames(c: &Client, from: u64, to: u64) -> Vec<&Value> {
    c.events
        .iter()
        .filter(|e| e["seq"].as_u64().is_some_and(|s| s >= from && s <= to))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_and_a_spectator_on_two_nodes_see_one_stream() {
    let test = "players_and_a_spectator_on_two_nodes_see_one_stream";
    let Some((cluster, code)) = two_nodes_and_a_room(test).await else {
        return;
    };
    let (a, b) = (cluster.addr(0), cluster.addr(1));

    // b's lobby lists a's room; b's room view answers for it; an unknown code is 404.
    let (status, list) = cluster.http(1, "GET", "/api/rooms", None).await;
    assert_eq!(status, 200, "{list}");
    let listed: Vec<&str> = list["rooms"]
        .as_array()
        .expect("rooms")
        .iter()
        .filter_map(|r| r["code"].as_str())
        .collect();
    assert!(listed.contains(&code.as_str()), "b lists {code}: {list}");
    let (status, view) = cluster
        .http(1, "GET", &format!("/api/rooms/{code}"), None)
        .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["code"], code.as_str());
    assert_eq!(view["status"], "lobby");
    let (status, unknown) = cluster.http(1, "GET", "/api/rooms/ZZZZZZZZZZ", None).await;
    assert_eq!(
        (status, unknown["code"].clone()),
        (404, json!("unknown_room"))
    );

    // Ana on a (the owner), Bruno and the spectator Eve on b.
    let mut ana = client(a).await;
    ana.join(&code, "Ana", Some("yellow")).await;
    let mut bruno = client(b).await;
    let welcome = bruno.join(&code, "Bruno", Some("blue")).await;
    assert_eq!(welcome["colour"], "blue", "{welcome}");
    assert!(bruno.token.is_some(), "a relayed join gets its token");
    let mut eve = client(b).await;
    eve.watch(&code).await;
    // A relayed refusal reaches only its sender: Eve cannot act; nobody else hears it.
    eve.refused(json!({"type": "roll"}), "spectator_cannot_act")
        .await;
    // Unknown rooms on b are unknown, not unavailable.
    let mut stray = client(b).await;
    let req = stray
        .cmd(json!({"type": "watch", "room": "ZZZZZZZZZZ"}))
        .await;
    let r = stray.reply(req).await;
    assert_eq!(r["code"], "unknown_room", "{r}");

    // The view on b shows both seats connected (Bruno's socket is on b).
    let (_, view) = cluster
        .http(1, "GET", &format!("/api/rooms/{code}"), None)
        .await;
    let connected: Vec<bool> = view["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .map(|s| s["connected"] == true)
        .collect();
    assert_eq!(connected, vec![true, true], "{view}");

    for c in [&mut ana, &mut bruno, &mut eve] {
        while c.seq < 2 {
            c.next().await;
        }
    }
    // Bruno's own command goes to a, its ok comes back to him only.
    bruno.refused(json!({"type": "start"}), "not_creator").await;
    ana.ok(json!({"type": "start"})).await;
    let (won, clients) = play_to_end(vec![ana, bruno, eve]).await;
    assert!(
        won["winner"] == "yellow" || won["winner"] == "blue",
        "{won}"
    );

    same_stream(&clients, ON_A_AND_B);
}

/// The names of the clients of [`a_started_game_with_a_spectator`] with Ana on a, Bruno
/// and Eve on b.
const ON_A_AND_B: [&str; 3] = ["ana (a)", "bruno (b)", "eve (b)"];

/// Ana, Bruno and Eve (`names`, saying where each is) saw one gap-free stream with the
/// same frames, to the game's last event; each from the event after its welcome (Ana's at
/// seq 1, Bruno's 2).
fn same_stream(clients: &[Client], names: [&str; 3]) {
    let spans: Vec<(u64, u64)> = clients
        .iter()
        .zip(names)
        .map(|(c, n)| gap_free(n, c))
        .collect();
    let last = spans[0].1;
    assert!(last > 20, "a whole game was played: {last} events");
    for (span, name) in spans.iter().zip(names) {
        assert_eq!(span.1, last, "{name} saw the game's last event");
    }
    let from = spans.iter().map(|s| s.0).max().unwrap_or(1);
    let reference = frames(&clients[0], from, last);
    for (c, name) in clients.iter().zip(names).skip(1) {
        // Whole frames, `position` included: a frame sent again from the history of a room
        // rebuilt from its log (after a takeover) carries the position its live frame did
        // (crates/room-core/src/persist.rs, POSITION_KEY).
        assert_eq!(frames(c, from, last), reference, "{name} saw other frames");
    }
    assert_eq!((spans[0].0, spans[1].0, spans[2].0), (2, 3, 3));
}

/// `moved` notices for the room every 100 ms while the game runs (as a new owner would
/// publish, here naming the same owner): b's relayed connections reattach each time,
/// their old links are replaced quietly, and the clients still see one gap-free stream
/// without a duplicate event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relayed_connections_reattach_on_moved_without_gap_or_duplicate() {
    let test = "relayed_connections_reattach_on_moved_without_gap_or_duplicate";
    let Some((cluster, code)) = two_nodes_and_a_room(test).await else {
        return;
    };
    let b = cluster.addr(1);
    let players = a_started_game_with_a_spectator(&cluster, &code, 0, 1).await;

    let nats_url = std::env::var("PARCHIS_NATS_URL").expect("NATS (checked by the harness)");
    let nats = async_nats::connect(nats_url)
        .await
        .expect("connect to NATS");
    let subject = format!("{}.moved", cluster.prefix);
    let notice = json!({"v": 1, "room": code, "node": cluster.id(0), "epoch": 1}).to_string();
    let mover = tokio::spawn(async move {
        let mut sent = 0u32;
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            if nats
                .publish(subject.clone(), notice.clone().into())
                .await
                .is_err()
            {
                return sent;
            }
            let _ = nats.flush().await;
            sent += 1;
        }
    });
    let clients = play_through(players, Arc::default()).await;
    mover.abort();
    same_stream(&clients, ON_A_AND_B);

    let (status, metrics) = crate::common::get_raw(b, "/metrics", &[]).await;
    assert_eq!(status, 200);
    let reattached: f64 = metrics
        .lines()
        .filter(|l| {
            l.starts_with("parchis_cluster_reattaches_total")
                && l.contains(r#"cause="moved""#)
                && l.contains(r#"outcome="ok""#)
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(
        reattached >= 4.0,
        "b reattached on the notices: {reattached}"
    );
}

/// A relayed player: `leave` is answered to it and it can join again on the same socket
/// (a new attach); its seat resumed on the owner's node closes its socket on the edge with
/// 4000, `closing` first; `?status=playing` on b lists a's game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relayed_player_leaves_rejoins_and_is_replaced_from_another_node() {
    let test = "a_relayed_player_leaves_rejoins_and_is_replaced_from_another_node";
    let Some((cluster, code)) = two_nodes_and_a_room(test).await else {
        return;
    };
    let (a, b) = (cluster.addr(0), cluster.addr(1));
    let mut ana = client(a).await;
    ana.join(&code, "Ana", Some("yellow")).await;
    let mut bruno = client(b).await;
    bruno.join(&code, "Bruno", Some("blue")).await;
    bruno.ok(json!({"type": "leave"})).await;
    bruno.refused(json!({"type": "roll"}), "not_joined").await;
    let again = bruno.join(&code, "Bruno", Some("red")).await;
    assert_eq!(again["colour"], "red", "{again}");
    let (_, view) = cluster
        .http(0, "GET", &format!("/api/rooms/{code}"), None)
        .await;
    let seats: Vec<(&str, bool)> = view["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .map(|s| (s["colour"].as_str().unwrap_or(""), s["connected"] == true))
        .collect();
    assert_eq!(seats, vec![("yellow", true), ("red", true)], "{view}");
    while ana.seq < bruno.seq {
        ana.next().await;
    }
    ana.ok(json!({"type": "start"})).await;
    let (status, list) = cluster
        .http(1, "GET", "/api/rooms?status=playing", None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(list["rooms"][0]["code"], code.as_str(), "{list}");

    // Bruno's token resumed on a: his socket on b is told and closed.
    let token = bruno.token.clone().expect("token");
    let mut tab = client(a).await;
    tab.resume(&code, &token, 0).await;
    let closing = bruno.until("closing", |v| v["type"] == "closing").await;
    assert_eq!(closing["code"], 4000, "{closing}");
    let closed = bruno.until("close", |v| v["type"] == "ws_close").await;
    assert_eq!(closed["code"], 4000, "{closed}");
}

/// A `moved` notice naming another node: the node that still serves the room stays
/// silent to the relayed connection (it lost the room, as far as the edge knows), which
/// waits for its new owner and, none answering within 10 s, is closed with 1012 so the
/// client resumes elsewhere. The owner's local socket is not affected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relayed_connection_that_cannot_follow_its_room_is_closed_with_1012() {
    let test = "a_relayed_connection_that_cannot_follow_its_room_is_closed_with_1012";
    let opts = Opts {
        nodes: 2,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let code = cluster.create_room(0, &json!({"seats": 2})).await;
    let mut ana = client(cluster.addr(0)).await;
    ana.join(&code, "Ana", Some("yellow")).await;
    let mut eve = client(cluster.addr(1)).await;
    eve.watch(&code).await;
    let nats_url = std::env::var("PARCHIS_NATS_URL").expect("NATS (checked by the harness)");
    let nats = async_nats::connect(nats_url)
        .await
        .expect("connect to NATS");
    let notice = json!({"v": 1, "room": code, "node": "elsewhere", "epoch": 9}).to_string();
    nats.publish(format!("{}.moved", cluster.prefix), notice.into())
        .await
        .expect("publish");
    nats.flush().await.expect("flush");
    let started = std::time::Instant::now();
    // Longer than one message's usual wait: read the socket directly.
    let closing = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        use futures_util::StreamExt;
        while let Some(Ok(m)) = eve.ws.next().await {
            if let tokio_tungstenite::tungstenite::Message::Text(t) = m {
                let v: Value = serde_json::from_str(t.as_str()).expect("JSON");
                if v["type"] == "closing" {
                    return v;
                }
            }
        }
        Value::Null
    })
    .await
    .expect("closed within 20 s");
    assert_eq!(closing["code"], 1012, "{closing}");
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(9),
        "it waited for the new owner first: {:?}",
        started.elapsed()
    );
    ana.ok(json!({"type": "choose_colour", "colour": "green"}))
        .await;
}

/// The owner of a game whose players and spectator are all relayed (Ana on b, Bruno and
/// Eve on c) is killed (`kill -9`) mid-game: another node takes the room over, announces
/// it, the edges reattach, and the clients play on without reconnecting; every one of
/// them saw one gap-free stream with the same frames.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relayed_clients_play_on_when_the_owner_is_killed() {
    let test = "relayed_clients_play_on_when_the_owner_is_killed";
    let Some(mut cluster) = Cluster::start(test, Opts::default()).await else {
        return;
    };
    let code = cluster
        .create_room(0, &json!({"seats": 2, "turn_clock_secs": 120}))
        .await;
    let first = cluster.lease(&code).await.expect("a lease");
    assert_eq!(first.owner, cluster.id(0), "created on a");
    let players = a_started_game_with_a_spectator(&cluster, &code, 1, 2).await;
    let progress = Arc::new(AtomicU64::new(0));
    let game = tokio::spawn(play_through(players, progress.clone()));
    while progress.load(Ordering::Relaxed) < 20 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cluster.kill(0);
    let clients = game.await.expect("players");
    same_stream(&clients, ["ana (b)", "bruno (c)", "eve (c)"]);
    let lease = cluster.lease(&code).await.expect("a lease");
    assert!(lease.epoch > first.epoch, "taken over: {lease:?}");
    assert_ne!(lease.owner, cluster.id(0), "{lease:?}");
}

/// A game on a whose three sockets (Ana, Bruno, the spectator Eve) are all on b: a's
/// publisher for b sends a broadcast frame once for the three links (fewer messages than
/// link messages on a), and mid-game a `moved` notice makes all three reattach (new
/// generations while frames for the others are under way). Every client sees one
/// gap-free stream with the same frames and every command one reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_relayed_sockets_of_one_room_on_one_edge_see_one_stream() {
    let test = "three_relayed_sockets_of_one_room_on_one_edge_see_one_stream";
    let Some((cluster, code)) = two_nodes_and_a_room(test).await else {
        return;
    };
    let players = a_started_game_with_a_spectator(&cluster, &code, 1, 1).await;
    let progress = Arc::new(AtomicU64::new(0));
    let game = tokio::spawn(play_through(players, progress.clone()));
    while progress.load(Ordering::Relaxed) < 15 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let nats_url = std::env::var("PARCHIS_NATS_URL").expect("NATS (checked by the harness)");
    let nats = async_nats::connect(nats_url)
        .await
        .expect("connect to NATS");
    let notice = json!({"v": 1, "room": code, "node": cluster.id(0), "epoch": 1}).to_string();
    nats.publish(format!("{}.moved", cluster.prefix), notice.into())
        .await
        .expect("publish moved");
    nats.flush().await.expect("flush");
    let clients = game.await.expect("players");
    same_stream(&clients, ["ana (b)", "bruno (b)", "eve (b)"]);

    let moved = [r#"cause="moved""#, r#"outcome="ok""#];
    let reattached = cluster
        .metric(1, "parchis_cluster_reattaches_total", &moved)
        .await;
    assert_eq!(reattached, 3.0, "each of the three links reattached once");
    let gaps = cluster
        .metric(1, "parchis_cluster_edge_gaps_total", &[])
        .await;
    assert_eq!(gaps, 0.0);
    let lines = cluster
        .metric(
            0,
            "parchis_cluster_frames_published_total",
            &[r#"kind="frame""#],
        )
        .await;
    let messages = cluster
        .metric(0, "parchis_cluster_edge_messages_published_total", &[])
        .await;
    assert!(
        messages > 0.0 && messages < lines,
        "broadcast frames grouped: {messages} messages for {lines} link messages"
    );
}
