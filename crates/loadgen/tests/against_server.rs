//! The load generator binary against the real server (in this process, on 127.0.0.1:0,
//! over a `MemoryStore`): it sets up its rooms, plays, and reports what happened.

use std::net::SocketAddr;
use std::process::Output;
use std::sync::Arc;

use parchis_server::{AppState, ServerConfig};
use parchis_store::MemoryStore;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Starts the server; returns its address and the token that stops it.
async fn server() -> (SocketAddr, CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let config = ServerConfig {
        dice_seed: Some(11),
        // The subject is the load generator, not the per-connection rate limit.
        commands_per_second: 1000,
        // Every client comes from 127.0.0.1.
        limits: parchis_server::config::Limits::unlimited_per_address(),
        ..ServerConfig::default()
    };
    let state = AppState::new(config, Arc::new(MemoryStore::new()));
    let shutdown = CancellationToken::new();
    tokio::spawn(parchis_server::run(listener, state, shutdown.clone()));
    (addr, shutdown)
}

/// Runs `parchis-loadgen` with `args` on a blocking thread (the server keeps running on
/// this runtime meanwhile).
async fn loadgen(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_parchis-loadgen"))
            .args(&args)
            .output()
            .expect("run parchis-loadgen")
    })
    .await
    .expect("join")
}

/// Runs `parchis-loadgen` with `args` against a fresh [`server`] (100 ms think time, a
/// 1 s warm-up, a 2 s window, `--server-pid` this process), which is stopped after it;
/// asserts the run succeeded and returns its JSON report.
async fn report_against_a_server(args: &[&str]) -> Value {
    let (addr, shutdown) = server().await;
    let mut all = vec![
        "--url".to_owned(),
        format!("http://{addr}"),
        "--think-ms".to_owned(),
        "100".to_owned(),
        "--warmup-secs".to_owned(),
        "1".to_owned(),
        "--duration-secs".to_owned(),
        "2".to_owned(),
        "--server-pid".to_owned(),
        std::process::id().to_string(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    let out = loadgen(all).await;
    shutdown.cancel();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    serde_json::from_slice(&out.stdout).expect("the report is JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plays_its_rooms_against_a_real_server_and_reports_json() {
    let report =
        report_against_a_server(&["--rooms", "3", "--source-addrs", "127.0.0.1,127.0.0.2"]).await;

    assert_eq!(report["rooms"], 3);
    assert_eq!(report["rooms_ready"], 3, "every room was set up: {report}");
    assert_eq!(report["games_started"], 3, "every game started: {report}");
    assert_eq!(
        report["errors"],
        serde_json::json!({}),
        "no errors: {report}"
    );
    assert_eq!(report["connections"]["peak"], 12, "four clients per room");
    assert_eq!(report["connections"]["min_during_play"], 12, "none dropped");
    // Three rooms, one action each per ~100 ms think time, over a 2 s window: about 60.
    let actions = report["actions"].as_u64().expect("actions");
    assert!(
        (20..=120).contains(&actions),
        "actions {actions} not near 3 rooms × 2 s / 0.1 s: {report}"
    );
    let latency = &report["latency_ms"];
    let count = latency["count"].as_u64().expect("latency count");
    // Both count the commands sent in the window: one event and one `ok` each.
    assert!(
        count.abs_diff(actions) <= 2,
        "one latency sample per action: {count} samples, {actions} actions"
    );
    let p = |k: &str| latency[k].as_f64().unwrap_or(f64::NAN);
    assert!(
        p("p50") > 0.0 && p("p50") <= p("p99") && p("p99") <= p("max"),
        "{latency}"
    );
    // `--server-pid` is this process: its memory and CPU time were read from /proc.
    assert!(
        report["server"]["rss_kib_idle"].as_u64().unwrap_or(0) > 0,
        "{report}"
    );
    assert!(
        report["server"]["cpu_secs_during_play"].as_f64().is_some(),
        "{report}"
    );
}

#[tokio::test]
async fn refuses_a_target_off_this_machine() {
    let out = loadgen(vec!["--url".into(), "http://192.0.2.1:8080".into()]).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("127.0.0.0/8"),
        "names the allowed range: {stderr}"
    );
}

#[tokio::test]
async fn fails_when_no_room_can_be_set_up() {
    // A port nobody listens on: bind one, note it, close it.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let args = [
        "--url",
        &format!("http://127.0.0.1:{port}"),
        "--rooms",
        "2",
        "--warmup-secs",
        "0",
        "--duration-secs",
        "1",
    ]
    .map(String::from)
    .to_vec();
    let out = loadgen(args).await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "a run with no room is a failure"
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report is still printed");
    assert_eq!(report["rooms_ready"], 0);
    assert_eq!(report["errors"]["setup_connect"], 2, "{report}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no room could be set up"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_share_the_rooms_and_merge_their_histograms() {
    // One merged report.
    let report = report_against_a_server(&["--rooms", "5", "--processes", "2"]).await;
    assert_eq!(report["processes"], 2);
    assert_eq!(report["rooms"], 5);
    // Rooms 0, 2, 4 in one child and 1, 3 in the other: all five, none twice.
    assert_eq!(report["rooms_ready"], 5, "{report}");
    assert_eq!(report["games_started"], 5, "{report}");
    assert_eq!(report["errors"], serde_json::json!({}), "{report}");
    assert_eq!(report["connections"]["peak"], 20, "{report}");
    assert_eq!(report["connections"]["min_during_play"], 20, "{report}");
    let actions = report["actions"].as_u64().expect("actions");
    assert!(
        (30..=200).contains(&actions),
        "actions {actions} not near 5 rooms × 2 s / 0.1 s: {report}"
    );
    let latency = &report["latency_ms"];
    let count = latency["count"].as_u64().expect("count");
    assert!(
        count.abs_diff(actions) <= 4,
        "the merged histogram holds both children's samples: {count} vs {actions} actions"
    );
    // One node: every client is on the room's node.
    assert_eq!(latency["same_node"]["count"], count);
    assert_eq!(latency["cross_node"]["count"], 0);
    assert!(latency["p50"].as_f64().unwrap_or(0.0) > 0.0, "{latency}");
    // The parent sampled the server over the shared window.
    assert!(
        report["server"]["cpu_secs_during_play"].as_f64().is_some(),
        "{report}"
    );
    assert!(
        report["loadgen"]["cpu_secs_during_play"].as_f64().is_some(),
        "both children's CPU: {report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starts_trickle_at_the_start_rate_and_the_metrics_are_saved() {
    let dir = std::env::temp_dir().join(format!("lg-metrics-{}", std::process::id()));
    let dir_arg = dir.to_string_lossy().into_owned();
    // Two games a second: room 4 starts 2–2.5 s after the play phase begins.
    let report = report_against_a_server(&[
        "--rooms",
        "5",
        "--start-rate",
        "2",
        "--metrics-dir",
        &dir_arg,
    ])
    .await;
    assert_eq!(report["start_rate"], 2.0, "{report}");
    assert_eq!(report["games_started"], 5, "{report}");
    assert_eq!(report["starts_failed"], 0, "{report}");
    assert_eq!(report["errors"], serde_json::json!({}), "{report}");
    let starts = report["starts_secs"].as_f64().expect("starts_secs");
    assert!(
        (2.0..10.0).contains(&starts),
        "the last of 5 rooms at 2/s starts after 2 s: {starts} s"
    );
    // The server's metrics at the end of the window, before the clients close: all 20
    // sockets open (at least: the tests of this binary share one metrics registry).
    let text = std::fs::read_to_string(dir.join("node-0.prom")).expect("node-0.prom");
    let _ = std::fs::remove_dir_all(&dir);
    let open = text
        .lines()
        .find_map(|l| l.strip_prefix("parchis_websocket_connections "))
        .and_then(|v| v.trim().parse::<f64>().ok());
    assert!(open.is_some_and(|n| n >= 20.0), "{open:?}: {text}");
}
