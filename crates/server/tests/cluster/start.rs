//! Starting a cluster.

use crate::harness::{Cluster, Opts};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

/// Three nodes on one database and one NATS prefix all come up and answer `/healthz`
/// and `/readyz`; after a `kill -9` one comes back under its id; SIGTERM ends a node
/// cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_start_and_are_ready() {
    let Some(mut cluster) =
        Cluster::start("three_nodes_start_and_are_ready", Opts::default()).await
    else {
        return;
    };
    for i in 0..3 {
        let (status, body) = cluster.http(i, "GET", "/healthz", None).await;
        assert_eq!(
            (status, body),
            (200, Value::String("ok".into())),
            "node {i}"
        );
        let (status, body) = cluster.http(i, "GET", "/readyz", None).await;
        assert_eq!(status, 200, "node {i}: {body}");
        assert_eq!(body["status"], "ready", "node {i}: {body}");
    }
    assert!(
        cluster.log_tail(0, 200).contains("cluster mode"),
        "node a logs its mode"
    );

    // kill -9 of b leaves a and c serving; b comes back under the same id.
    cluster.kill(1);
    for i in [0, 2] {
        let (status, _) = cluster.http(i, "GET", "/readyz", None).await;
        assert_eq!(status, 200, "node {i} without b");
    }
    cluster.restart(1).await;
    // SIGTERM: c exits by itself, cleanly.
    cluster.signal(2, "TERM");
    let limit = Duration::from_secs(cluster.opts.drain_timeout_secs + 5);
    let status = cluster
        .wait_exit(2, limit)
        .await
        .expect("c exits after SIGTERM");
    assert!(status.success(), "{status}");
}

/// Cluster mode on SQLite is refused at start: exit status 2 and the documented message
/// (docs/CLUSTER.md, "Starting a cluster"). Needs neither NATS nor PostgreSQL.
#[test]
fn cluster_mode_refuses_sqlite() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_parchis-server"))
        .arg("--port")
        .arg("0")
        .arg("--data-dir")
        .arg(dir.path())
        .arg("--nats-url")
        .arg("nats://127.0.0.1:4222")
        .arg("--node-id")
        .arg("a")
        .arg("--cluster")
        .arg("tsqlite")
        .env_remove("DATABASE_URL")
        .env("NO_COLOR", "1")
        .output()
        .expect("run parchis-server");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("cluster mode (--nats-url) needs PostgreSQL"),
        "{text}"
    );
}
