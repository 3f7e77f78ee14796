//! A championship's director fails over (issue 27, docs/TOURNAMENTS.md "Cluster"): a
//! knockout of 4 pairs of bots is created on node `a` and drawn there (closed through
//! node `b`, which forwards the command); `a` holds the tournament's lease
//! (`tournament_leases`) and owns its rooms; `a` is killed (kill -9)
//! while round 1 is played; node `b` takes the tournament's lease after the TTL (epoch 2)
//! and the rooms' leases, resumes the director from the store, and the tournament
//! finishes with the same draw, n − 1 = 3 games, one game per match.

use crate::common::tour::{matches, now_ms, round_one};
use crate::common::{call, sign_up_at};
use crate::harness::{Cluster, Opts};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const WHOLE: Duration = Duration::from_secs(180);

/// Polls `GET /api/tournaments/{id}` on `addr` until `pred` holds of the view (panics
/// after three minutes).
pub async fn until(addr: SocketAddr, id: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let end = Instant::now() + WHOLE;
    loop {
        let (status, v) = call(addr, "GET", &format!("/api/tournaments/{id}"), None, "").await;
        if status == 200 && pred(&v) {
            return v;
        }
        assert!(Instant::now() < end, "{what}: never; {status} {v:#}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The tournament's lease row: its owner and epoch.
pub async fn lease(cluster: &Cluster, id: &str) -> Option<(String, i64)> {
    sqlx::query_as::<_, (String, i64)>(
        "SELECT owner, epoch FROM tournament_leases WHERE tournament_id = $1::UUID",
    )
    .bind(id)
    .fetch_optional(&cluster.db)
    .await
    .expect("read the tournament lease")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_director_killed_mid_round_finishes_on_another_node_with_the_same_draw() {
    let opts = Opts {
        nodes: 2,
        // Bots think a few ms even unwatched, so that round 1 is still played at the kill.
        env: vec![("PARCHIS_MIN_UNWATCHED_BOT_THINK_MS", "5".to_owned())],
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start("tournament_failover", opts).await else {
        return;
    };
    let (a, b) = (cluster.addr(0), cluster.addr(1));
    let token = sign_up_at(a, "Organiser").await;
    let settings = json!({
        "name": "Failover",
        "preset": "pairs",
        "registration_deadline_ms": now_ms() + 3_600_000,
        "spectator_delay_throws": 0,
        "bot_fill": {"up_to": 4, "level": "random", "think_ms": 0},
    });
    let (status, created) = call(
        a,
        "POST",
        "/api/tournaments",
        Some(&token),
        &settings.to_string(),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().expect("id").to_owned();
    assert_eq!(lease(&cluster, &id).await, Some(("a".to_owned(), 1)));

    // Node b reads the tournament from the store; a command there is forwarded to a,
    // which directs it (the draw is made on a).
    let (status, seen) = call(b, "GET", &format!("/api/tournaments/{id}"), None, "").await;
    assert_eq!(
        (status, &seen["status"]),
        (200, &json!("registering")),
        "{seen}"
    );
    let (status, drawn) = call(
        b,
        "POST",
        &format!("/api/tournaments/{id}/close"),
        Some(&token),
        "",
    )
    .await;
    assert_eq!(status, 200, "{drawn}");
    assert_eq!(lease(&cluster, &id).await, Some(("a".to_owned(), 1)));
    let draw = round_one(&drawn);
    assert_eq!(draw.len(), 2, "{drawn:#}");

    until(a, &id, "a round-1 game under way", |v| {
        matches(v)
            .iter()
            .any(|m| m["round"] == 1 && m["status"] == "playing")
    })
    .await;
    cluster.kill(0);

    let v = until(b, &id, "finished on node b", |v| v["status"] == "finished").await;
    assert_eq!(round_one(&v), draw, "the same draw: {v:#}");
    let ms = matches(&v);
    assert_eq!(ms.len(), 3, "n − 1 games: {v:#}");
    let mut games = BTreeSet::new();
    for m in &ms {
        assert_eq!(m["status"], "finished", "{m}");
        let room = m["room"].as_str().expect("room");
        let stored = cluster.games_of(room).await;
        assert_eq!(stored.len(), 1, "one game in room {room}: {stored:?}");
        assert_eq!(m["game_id"].as_str(), Some(stored[0].as_str()), "{m}");
        games.insert(stored[0].clone());
    }
    assert_eq!(games.len(), 3, "one game per match");
    assert!(v["champion"].is_u64(), "{v:#}");
    let (owner, epoch) = lease(&cluster, &id).await.expect("a lease");
    assert_eq!((owner.as_str(), epoch), ("b", 2), "b took the lease over");
}
