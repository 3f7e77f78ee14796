//! SIGTERM drains a node: its rooms are handed off between two throws (docs/CLUSTER.md,
//! "Drain (SIGTERM)").

use crate::checks::{check_game, clients_summary};
use crate::driver::{play_all, Player};
use crate::harness::{Cluster, Opts};
use crate::setup::two_player_game;
use std::time::{Duration, Instant};

/// The turn clock of the drained games: one throw's time (8 s: a loaded CI machine must
/// not time a player out; the 20 s leases still show any wait for one to expire).
const CLOCK_SECS: u64 = 8;

/// Four games owned by node c (players on c, a and b) run when c gets SIGTERM. c exits
/// by itself; every room is adopted by a or b at once (the leases are longer than a
/// throw, so waiting for one to expire would show); no game waits longer than one throw
/// (stored events and the clients' arrivals both), nobody times out, every game is
/// played to its end with a gap-free log; clients on a and b never reconnect, clients on
/// c get 1001 and resume elsewhere. A room created on c while it drains goes elsewhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_hands_every_game_off_within_one_throw() {
    let test = "sigterm_hands_every_game_off_within_one_throw";
    let opts = Opts {
        lease_ttl_ms: 20000,
        lease_renew_ms: 1000,
        sweep_ms: 250,
        drain_timeout_secs: 15,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let mut players = Vec::new();
    let mut rooms = Vec::new();
    for g in 0..4 {
        let (code, mut ps) = two_player_game(&cluster, 2, &format!("d{g}"), CLOCK_SECS).await;
        if g == 3 {
            let roster = cluster.roster.clone();
            ps.push(Player::watch(&roster, 1, &code, "d3watch").await);
        }
        for (j, p) in ps.iter_mut().enumerate() {
            p.think = Duration::from_millis(20);
            p.seed(g * 10 + j as u64);
        }
        rooms.push(code);
        players.push(ps);
    }
    for code in &rooms {
        let lease = cluster.lease(code).await.expect("lease");
        assert_eq!(lease.owner, "c", "{code}: {lease:?}");
    }
    let deadline = Instant::now() + Duration::from_secs(240);
    let tasks: Vec<_> = players
        .into_iter()
        .map(|ps| tokio::spawn(play_all(ps, deadline)))
        .collect();
    // Let the games run a little.
    let until = Instant::now() + Duration::from_secs(30);
    for code in &rooms {
        let id = cluster.games_of(code).await.pop().expect("game");
        while cluster.stored_events(&id).await.len() < 20 {
            assert!(Instant::now() < until, "{code} did not get going");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    cluster.signal(2, "TERM");
    let term_at = Instant::now();
    let term_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    // New rooms go elsewhere while c drains (once it says so, if it still answers HTTP).
    let until = Instant::now() + Duration::from_secs(2);
    while !cluster.log_tail(2, 100).contains("drain: draining") && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let body = r#"{"seats": 2, "public": false}"#;
    let (status, body) =
        crate::common::try_http_at(cluster.addr(2), "POST", "/api/rooms", Some(body))
            .await
            .unwrap_or((0, serde_json::Value::Null));
    eprintln!("{test}: a room created on c while it drains: {status} {body}");
    if status == 201 {
        let code = body["code"].as_str().expect("code");
        let lease = cluster.lease(code).await.expect("lease");
        assert_ne!(lease.owner, "c", "a draining node placed a room on itself");
    }
    let status = cluster
        .wait_exit(2, Duration::from_secs(20))
        .await
        .expect("c exits by itself after draining");
    let drained_in = term_at.elapsed();
    assert!(status.success(), "c exits cleanly: {status}");
    for code in &rooms {
        let lease = cluster.lease(code).await.expect("lease");
        assert_ne!(lease.owner, "c", "{code}: {lease:?}");
        assert_eq!(lease.epoch, 2, "{code}: one hand-off: {lease:?}");
    }

    let mut done = Vec::new();
    for t in tasks {
        done.push(
            t.await
                .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic())),
        );
    }
    let limit_ms = (CLOCK_SECS * 1000) as i64;
    for (code, ps) in rooms.iter().zip(&done) {
        let refs: Vec<&Player> = ps.iter().collect();
        let stored = check_game(&cluster, code, &refs, true).await;
        assert!(stored.finished(), "{code}: the game went on to its end");
        assert_eq!(stored.timeouts(), 0, "{code}: no turn timed out");
        // The longest wait between two stored events around the drain.
        let worst = stored
            .events
            .windows(2)
            .map(|w| {
                let (a, b) = (
                    w[0]["at_ms"].as_i64().unwrap_or(0),
                    w[1]["at_ms"].as_i64().unwrap_or(0),
                );
                (b - a, a)
            })
            .filter(|(_, a)| *a >= term_ms - limit_ms)
            .max()
            .unwrap_or((0, 0));
        assert!(
            worst.0 < limit_ms,
            "{code}: the game waited {} ms (one throw: {limit_ms} ms)",
            worst.0
        );
        let resumed_after = stored
            .events
            .iter()
            .filter(|e| e["at_ms"].as_i64() > Some(term_ms))
            .count();
        assert!(
            resumed_after > 10,
            "{code}: the game continued after the drain"
        );
        for p in ps {
            let gaps = p.arrivals.values().collect::<Vec<_>>();
            let longest = gaps
                .windows(2)
                .map(|w| w[1].duration_since(*w[0]))
                .max()
                .unwrap_or_default();
            assert!(
                longest < Duration::from_secs(CLOCK_SECS),
                "{}: waited {longest:?} for an event",
                p.name
            );
            let on_c = p.sessions[0].node == 2;
            // Clients of a and b never reconnect; c's reconnect exactly once: c's late
            // reattach of their closed socket loses to their resumed connection.
            let expected = if on_c { 2 } else { 1 };
            assert_eq!(
                p.sessions.len(),
                expected,
                "{}: sessions {:?}",
                p.name,
                p.sessions
            );
            if on_c {
                let first = &p.sessions[0];
                let closed = first.closed.expect("its socket on c closed");
                assert!(
                    cluster.roster.went_down_between(2, first.opened, closed),
                    "{}: closed because c drained",
                    p.name
                );
                assert_eq!(
                    p.sessions[0].close_code,
                    Some(1001),
                    "{}: {:?}",
                    p.name,
                    p.sessions
                );
            }
        }
        eprintln!("{test}: {code}: longest wait {} ms", worst.0);
    }
    eprintln!("{test}: c drained and exited in {drained_in:?}");
    eprintln!(
        "{test}: clients: {}",
        clients_summary(done.iter().flatten())
    );
    let (known, unknown) = cluster.check_writers().await;
    eprintln!("{test}: writes by the owner: {known} (writer unknown: {unknown})");
}
