//! `GET /metrics` after a scripted game through real WebSocket clients on a server over
//! SQLite: the counters hold the game's exact numbers and the text is valid Prometheus
//! exposition format; then, on a second server, a clock that runs out, bot takeovers, a
//! resume and a stalled reader. One test in this binary: the recorder is process-global.

mod common;

use common::{get_raw, Client};
use parchis_server::ServerConfig;
use parchis_store::Store;
use prometheus_parse::{Sample, Scrape, Value as Metric};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// Strict line check of the text format 0.0.4: comments are `# HELP name …` or
/// `# TYPE name kind`, samples are `name{label="value",…} number`. Returns the number of
/// sample lines.
fn check_text_format(text: &str) -> usize {
    fn is_name(s: &str) -> bool {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    }
    let mut samples = 0;
    let mut typed = HashSet::new();
    for line in text.lines() {
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap_or("");
            assert!(is_name(name), "bad HELP line: {line}");
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let parts: Vec<&str> = rest.split(' ').collect();
            assert!(
                parts.len() == 2
                    && is_name(parts[0])
                    && ["counter", "gauge", "histogram", "summary", "untyped"].contains(&parts[1]),
                "bad TYPE line: {line}"
            );
            assert!(typed.insert(parts[0]), "TYPE given twice: {line}");
            if parts[1] == "counter" {
                assert!(
                    parts[0].ends_with("_total"),
                    "counter without _total: {line}"
                );
            }
            continue;
        }
        assert!(!line.starts_with('#'), "unknown comment: {line}");
        let (series, value) = line.rsplit_once(' ').expect("sample: series and value");
        assert!(
            value.parse::<f64>().is_ok() || ["+Inf", "-Inf", "NaN"].contains(&value),
            "bad value: {line}"
        );
        let (name, labels) = match series.split_once('{') {
            Some((n, l)) => (n, l.strip_suffix('}').expect("labels end with }")),
            None => (series, ""),
        };
        assert!(is_name(name), "bad metric name: {line}");
        assert!(name.starts_with("parchis_"), "foreign metric: {line}");
        for pair in labels.split("\",").filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once("=\"").expect("label=\"value\"");
            assert!(is_name(k), "bad label name: {line}");
            assert!(
                !v.trim_end_matches('"').contains('"'),
                "bad label value: {line}"
            );
            // Bounded labels: no room codes (10 base32 characters) or UUIDs.
            assert!(!v.contains('-') || k == "le", "id-like label value: {line}");
        }
        samples += 1;
    }
    samples
}

fn matches(s: &Sample, name: &str, labels: &[(&str, &str)]) -> bool {
    s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v))
}

/// The value of the one series `name{labels}` (counters, gauges, untyped `_count`/`_sum`).
fn value(scrape: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    let found: Vec<&Sample> = scrape
        .samples
        .iter()
        .filter(|s| matches(s, name, labels))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one series {name}{labels:?} expected: {found:?}"
    );
    match &found[0].value {
        Metric::Counter(v) | Metric::Gauge(v) | Metric::Untyped(v) => *v,
        other => panic!("{name} is not a number: {other:?}"),
    }
}

/// The `+Inf` bucket of histogram `name`.
fn histogram_total(scrape: &Scrape, name: &str) -> f64 {
    let s = scrape
        .samples
        .iter()
        .find(|s| s.metric == name)
        .unwrap_or_else(|| panic!("no histogram {name}"));
    match &s.value {
        Metric::Histogram(buckets) => buckets
            .iter()
            .find(|b| b.less_than.is_infinite())
            .map(|b| b.count)
            .expect("+Inf bucket"),
        other => panic!("{name} is not a histogram: {other:?}"),
    }
}

/// Plays every client until the game is won, counting the `roll`/`play` commands the
/// server accepted (answered `ok`); waits for every answer before returning.
async fn play_counting(clients: Vec<Client>) -> (u64, Vec<Client>) {
    let mut tasks = Vec::new();
    for mut c in clients {
        tasks.push(tokio::spawn(async move {
            let mut pending = HashSet::new();
            let mut accepted = 0u64;
            let mut won = false;
            while !(won && pending.is_empty()) {
                let v = c.next().await.expect("socket closed mid-game");
                assert_ne!(v["type"], "error", "unexpected refusal: {v}");
                if Client::is_game_event(&v, "game_won") {
                    won = true;
                }
                if v["type"] == "ok" {
                    if let Some(req) = v["req"].as_u64() {
                        if pending.remove(&req) {
                            accepted += 1;
                        }
                    }
                }
                if !won && v["type"] == "your_turn" && v["seq"].as_u64() == Some(c.seq) {
                    let cmd = if v["must_roll"] == true {
                        json!({"type": "roll"})
                    } else {
                        json!({"type": "play", "action": v["legal"][0].clone()})
                    };
                    pending.insert(c.cmd(cmd).await);
                }
            }
            (accepted, c)
        }));
    }
    let mut total = 0;
    let mut out = Vec::new();
    for t in tasks {
        let (n, c) = tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .expect("game did not end in 60 s")
            .expect("player task panicked");
        total += n;
        out.push(c);
    }
    (total, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_a_scripted_game_exactly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store: Arc<dyn Store> = Arc::new(
        parchis_store::SqliteStore::open(&dir.path().join("parchis.db"))
            .await
            .expect("open sqlite"),
    );
    let server = common::start_on(common::test_config(), store).await;
    let (code, accepted, clients, s) = scripted_game(&server).await;
    let (status, text) = get_raw(server.addr, "/metrics", &[]).await;
    assert_eq!(status, 200, "{text}");
    check_game_counts(&text, &code, accepted);
    drop(clients);
    drop(s);
    server.shutdown.cancel();
    let _ = server.task.await;

    clock_bots_and_resume().await;
    let (server, ana, stalled) = stalled_spectator().await;
    let (status, text) = get_raw(server.addr, "/metrics", &[]).await;
    assert_eq!(status, 200);
    check_totals_after_three_servers(&text);
    drop((ana, stalled));
    server.shutdown.cancel();
    let _ = server.task.await;
}

/// Ana and Bea play a game to the end, watched by a spectator, after one refused
/// command. Returns the room code, the number of accepted actions, the players and the
/// spectator.
async fn scripted_game(server: &common::Server) -> (String, u64, Vec<Client>, Client) {
    let code = server.create_room(json!({"seats": 2})).await;
    let mut a = server.client().await;
    a.join(&code, "Ana", Some("yellow")).await;
    let mut b = server.client().await;
    b.join(&code, "Bea", Some("red")).await;
    let mut s = server.client().await;
    s.watch(&code).await;
    a.seq = s.seq;
    // One refusal: no game yet.
    a.refused(json!({"type": "roll"}), "game_not_started").await;
    a.ok(json!({"type": "start"})).await;
    let (accepted, clients) = play_counting(vec![a, b]).await;
    s.until("game_won", |v: &Value| Client::is_game_event(v, "game_won"))
        .await;
    assert!(accepted > 20, "a whole game takes many actions: {accepted}");

    (code, accepted, clients, s)
}

/// A second server (same process-wide recorder): a clock that runs out, bots taking
/// over, a resume.
async fn clock_bots_and_resume() {
    let server = common::start(common::test_config()).await;
    let code = server
        .create_room(
            json!({"seats": 2, "turn_clock_secs": 2, "timeouts_to_abandon": 1,
                            "on_abandon": "bot", "bot_think_ms": 0}),
        )
        .await;
    let mut p = server.client().await;
    p.join(&code, "Pia", Some("yellow")).await;
    let mut q = server.client().await;
    q.join(&code, "Quim", Some("red")).await;
    let mut w = server.client().await;
    w.watch(&code).await;
    p.seq = w.seq;
    p.ok(json!({"type": "start"})).await;
    // Nobody acts: the first throw's clock runs out, a bot takes the seat over.
    let took = w
        .until("bot_took_over", |v| {
            v["type"] == "event" && v["event"]["type"] == "bot_took_over"
        })
        .await;
    assert_eq!(took["event"]["reason"], "timeouts", "{took}");
    let human = if took["event"]["colour"] == "yellow" {
        q
    } else {
        p
    };
    // The other player drops and resumes with the events it missed, then leaves.
    let token = human.token.clone().expect("token");
    let last_seq = human.seq;
    drop(human);
    let mut back = server.client().await;
    let welcome = back.resume(&code, &token, last_seq).await;
    assert!(
        welcome["snapshot"].is_null(),
        "missed events replayed: {welcome}"
    );
    back.cmd(json!({"type": "leave"})).await;
    w.until("game_won", |v: &Value| Client::is_game_event(v, "game_won"))
        .await;
    drop((w, back));
    server.shutdown.cancel();
    let _ = server.task.await;
}

/// A third server, with a short outbound queue and small socket buffers: a lobby where a
/// spectator stops reading while the player changes colour, until it is dropped. Returns
/// the server, the player and the stalled spectator.
async fn stalled_spectator() -> (common::Server, Client, Client) {
    let server = common::start(ServerConfig {
        outbound_queue: 8,
        send_buffer_bytes: Some(4096),
        ..common::test_config()
    })
    .await;
    let lobby = server.create_room(json!({})).await;
    let mut ana = server.client().await;
    ana.join(&lobby, "Ana", Some("yellow")).await;
    let mut stalled = server.small_buffer_client().await;
    stalled.watch(&lobby).await;
    for i in 0..600 {
        let colour = if i % 2 == 0 { "red" } else { "yellow" };
        ana.ok(json!({"type": "choose_colour", "colour": colour}))
            .await;
    }
    let mut kicked = false;
    for _ in 0..50 {
        if server.room(&lobby).await["spectators"] == 0 {
            kicked = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(kicked, "the stalled spectator was dropped");
    tokio::time::sleep(Duration::from_millis(200)).await;

    (server, ana, stalled)
}

/// The first server's scrape `text` after the scripted game in room `code` with
/// `accepted` actions: valid text format and the game's exact numbers.
fn check_game_counts(text: &str, code: &str, accepted: u64) {
    let lines = check_text_format(text);
    let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("parses");
    assert!(lines >= 40 && scrape.samples.len() >= 20, "{text}");

    let v = |name: &str, labels: &[(&str, &str)]| value(&scrape, name, labels);
    assert_eq!(
        v("parchis_games_started_total", &[("rules", "online")]),
        1.0
    );
    assert_eq!(
        v(
            "parchis_games_finished_total",
            &[("rules", "online"), ("reason", "completed")]
        ),
        1.0
    );
    let rolls = v("parchis_actions_total", &[("kind", "roll")]);
    let moves = v("parchis_actions_total", &[("kind", "move")]);
    assert!(rolls > 0.0 && moves > 0.0, "{rolls} {moves}");
    assert_eq!(
        rolls + moves,
        accepted as f64,
        "every accepted roll and play"
    );
    assert!(
        !text.contains("kind=\"timeout\"") && !text.contains("parchis_turn_timeouts_total"),
        "no clock ran out"
    );
    assert_eq!(
        v("parchis_action_latency_seconds_count", &[]),
        accepted as f64,
        "one latency sample per accepted action"
    );
    assert_eq!(
        histogram_total(&scrape, "parchis_action_latency_seconds"),
        accepted as f64
    );
    assert!(v("parchis_action_latency_seconds_sum", &[]) > 0.0);
    assert_eq!(v("parchis_joins_total", &[("role", "player")]), 2.0);
    assert_eq!(v("parchis_joins_total", &[("role", "spectator")]), 1.0);
    assert_eq!(v("parchis_snapshots_total", &[("reason", "join")]), 2.0);
    assert_eq!(v("parchis_snapshots_total", &[("reason", "watch")]), 1.0);
    assert_eq!(
        v(
            "parchis_commands_refused_total",
            &[("code", "game_not_started")]
        ),
        1.0
    );
    assert_eq!(v("parchis_rooms", &[("status", "finished")]), 1.0);
    assert_eq!(v("parchis_rooms", &[("status", "playing")]), 0.0);
    assert_eq!(v("parchis_rooms", &[("status", "lobby")]), 0.0);
    assert_eq!(v("parchis_room_connections", &[("role", "player")]), 2.0);
    assert_eq!(v("parchis_room_connections", &[("role", "spectator")]), 1.0);
    assert_eq!(v("parchis_websocket_connections", &[]), 3.0);
    // The store's group commits: room, seats, game, every action's events.
    let commits = v("parchis_store_commit_duration_seconds_count", &[]);
    assert!(commits >= 4.0, "{commits}");
    assert_eq!(
        histogram_total(&scrape, "parchis_store_commit_duration_seconds"),
        commits
    );
    assert!(v("parchis_store_commit_group_size_sum", &[]) >= commits);
    assert!(v("parchis_outbound_queue_depth_count", &[]) > 0.0);
    assert!(!text.contains(code), "room codes are never label values");
}

/// The scrape `text` after all three servers: the clock, the bots, the resume and the
/// stalled reader counted on top of the first game.
fn check_totals_after_three_servers(text: &str) {
    check_text_format(text);
    let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("parses");
    let v = |name: &str, labels: &[(&str, &str)]| value(&scrape, name, labels);
    assert_eq!(
        v("parchis_games_started_total", &[("rules", "online")]),
        2.0
    );
    assert_eq!(
        v(
            "parchis_games_finished_total",
            &[("rules", "online"), ("reason", "completed")]
        ),
        2.0,
        "the bots played the second game out"
    );
    assert_eq!(v("parchis_turn_timeouts_total", &[]), 1.0);
    assert_eq!(v("parchis_actions_total", &[("kind", "timeout")]), 1.0);
    assert_eq!(
        v("parchis_bot_takeovers_total", &[("reason", "timeouts")]),
        1.0
    );
    assert_eq!(v("parchis_bot_takeovers_total", &[("reason", "left")]), 1.0);
    assert!(
        !text.contains("parchis_abandonments_total{"),
        "bots took the seats: no forfeit"
    );
    assert_eq!(v("parchis_resumes_total", &[("catch_up", "events")]), 1.0);
    assert_eq!(v("parchis_slow_consumer_disconnects_total", &[]), 1.0);
    assert_eq!(
        v("parchis_connections_kicked_total", &[("code", "4001")]),
        1.0
    );
    assert_eq!(v("parchis_joins_total", &[("role", "player")]), 5.0);
    assert_eq!(v("parchis_joins_total", &[("role", "spectator")]), 3.0);
}
