//! Nodes whose wall clocks are wrong (issue 25, "Clock"; docs/CLUSTER.md "Clocks"): each
//! node runs under Debian's libfaketime with its wall clock moved (`FAKETIME`, the
//! monotonic clock left alone: a node whose NTP is wrong), so turn deadlines, grace
//! periods, event times and the forwarded commands' deadlines are written by clocks that
//! disagree by 50 s. Lease expiry is the database's clock and does not care.

use crate::checks::{check_game, clients_summary};
use crate::driver::{play_all, Player};
use crate::harness::{Cluster, Opts};
use crate::setup::two_player_game;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The turn clock of the test's game (s).
const CLOCK_SECS: u64 = 3;
/// How much earlier than the turn clock (counted from the arrival of the throw's `turn`
/// event) a timeout may reach a client: the deadline is set before the `turn` event is
/// stored and relayed.
const EARLY: Duration = Duration::from_millis(500);
/// How much later: the timer, the store write and the relay.
const LATE: Duration = Duration::from_millis(1500);

/// `(seq, time from the arrival of the throw's `turn` event to the arrival of its
/// `timed_out`)` for every timeout `p` saw.
fn timeout_delays(p: &Player) -> Vec<(u64, Duration)> {
    let mut turn_at = None;
    let mut out = Vec::new();
    for (seq, frame) in &p.events {
        let event = &frame["event"];
        let at = p.arrivals[seq];
        if event["type"] == "turn" {
            turn_at = Some(at);
        } else if event["type"] == "game" && event["event"]["type"] == "timed_out" {
            match turn_at.take() {
                Some(turned) => out.push((*seq, at.duration_since(turned))),
                None => eprintln!(
                    "timed_out at seq {seq}: its turn event came before the spectator watched: {:?}",
                    p.events
                        .range(seq.saturating_sub(4)..=*seq)
                        .collect::<Vec<_>>()
                ),
            }
        }
    }
    out
}

/// Waits (10 s at most) until node `i`'s clock skew gauge reads `expected` seconds
/// within one second.
async fn skew_measured(cluster: &Cluster, i: usize, expected: f64) {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let skew = cluster
            .metric(i, "parchis_cluster_clock_skew_seconds", &[])
            .await;
        if (skew - expected).abs() < 1.0 {
            return;
        }
        assert!(
            Instant::now() < until,
            "node {}: clock skew {skew} s, expected about {expected} s",
            cluster.id(i)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Issue 25, 4: the owner a runs 30 s ahead of the database, the edge b 20 s behind it.
/// Both measure their skew. A game on a with a player and a spectator on b: the throws
/// of players who do not act time out one turn clock after their `turn` event (not 30 s
/// late, not at once); b's relayed commands, whose deadlines b writes on the database's
/// clock, are all taken by a (none `expired`). Then a is killed while nobody acts: b takes
/// the room over and re-arms the clock from its own (a's stored deadline lies 50 s ahead
/// of b's clock), and the next timeout again comes one turn clock after the takeover's
/// `turn` event. The game is played to its end: every client's events equal the stored
/// log, every acknowledged action is stored, every command answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skewed_clocks_keep_turn_clocks_and_command_deadlines_through_a_takeover() {
    let test = "skewed_clocks_keep_turn_clocks_and_command_deadlines_through_a_takeover";
    let opts = Opts {
        nodes: 2,
        clock_offsets: vec![(0, "+30s"), (1, "-20s")],
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    // The gauge is the database's clock minus the node's.
    skew_measured(&cluster, 0, -30.0).await;
    skew_measured(&cluster, 1, 20.0).await;
    let (code, mut players) = two_player_game(&cluster, 0, "k", CLOCK_SECS).await;
    let mut spectator = Player::watch(&cluster.roster, 1, &code, "eve").await;
    spectator.wait_seq(3).await;
    let holds: Vec<_> = players.iter().map(|p| p.hold.clone()).collect();
    let hold = |on: bool| {
        for h in &holds {
            h.store(on, Ordering::SeqCst);
        }
    };
    for (j, p) in players.iter_mut().enumerate() {
        p.think = Duration::from_millis(30);
        p.seed(j as u64 + 11);
    }
    players.push(spectator);
    // Nobody acts: the skewed owner's clock runs out twice.
    hold(true);
    let deadline = Instant::now() + Duration::from_secs(240);
    let game = tokio::spawn(play_all(players, deadline));
    tokio::time::sleep(Duration::from_secs(3 * CLOCK_SECS) + LATE).await;
    // Play a while: the relayed player's commands go from b to a.
    hold(false);
    tokio::time::sleep(Duration::from_secs(3)).await;
    // Nobody acts again, and the owner dies: b takes over.
    hold(true);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let killed = Instant::now();
    cluster.kill(0);
    cluster
        .wait_lease(&code, Duration::from_secs(10), "taken over by b", |l| {
            l.owner == "b" && l.epoch >= 2
        })
        .await;
    let took = killed.elapsed();
    eprintln!("{test}: taken over {took:?} after the kill");
    // Lease expiry is the database's clock: the skewed clocks change nothing of it
    // (docs/CLUSTER.md, "Failover": TTL + a sweep + the restore).
    assert!(
        took < Duration::from_secs(5),
        "taken over {took:?} after the kill"
    );
    tokio::time::sleep(Duration::from_secs(2 * CLOCK_SECS) + LATE).await;
    hold(false);
    let players = match game.await {
        Ok(p) => p,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    };
    let refs: Vec<&Player> = players.iter().collect();
    eprintln!("{test}: clients: {}", clients_summary(refs.iter().copied()));
    let stored = check_game(&cluster, &code, &refs, true).await;
    assert!(stored.finished(), "the game was played to its end");
    for p in &players {
        assert_eq!(p.unanswered, 0, "{}: every command was answered", p.name);
    }
    check_timeouts(test, &players, stored.timeouts(), killed);
    let expired = cluster
        .metric(
            1,
            "parchis_cluster_commands_forwarded_total",
            &["outcome=\"expired\""],
        )
        .await;
    assert_eq!(
        expired, 0.0,
        "b's command deadlines, on the database's clock, held at a 50 s apart"
    );
    let taken = cluster
        .metric(
            1,
            "parchis_cluster_commands_forwarded_total",
            &["outcome=\"taken\""],
        )
        .await;
    assert!(taken > 0.0, "b forwarded commands to a");
    let lease = cluster.lease(&code).await.expect("lease");
    assert_eq!(
        (lease.owner.as_str(), lease.epoch),
        ("b", 2),
        "one takeover, one owner after it: {lease:?}"
    );
    let (known, unknown) = cluster.check_writers().await;
    eprintln!("{test}: writes by the owner: {known} (writer unknown: {unknown})");
    assert!(known > 0, "the writers were identified");
}

/// Every timeout `players`' spectator (the last, on b: it never lost its socket, so its
/// arrival times are the clock's) saw came one turn clock after its throw's `turn`
/// event, within [`EARLY`] and [`LATE`]: at least two before `killed` (the skewed owner)
/// and two after (the new owner); and it saw each of the `stored` timeouts.
fn check_timeouts(test: &str, players: &[Player], stored: usize, killed: Instant) {
    // The spectator on b never lost its socket: its arrival times are the clock's.
    let eve = players.last().expect("the spectator");
    let delays = timeout_delays(eve);
    eprintln!("{test}: timeouts (seq, after their turn event): {delays:?}");
    let before = delays
        .iter()
        .filter(|(s, _)| eve.arrivals[s] < killed)
        .count();
    let after = delays
        .iter()
        .filter(|(s, _)| eve.arrivals[s] > killed)
        .count();
    assert!(
        before >= 2,
        "the skewed owner timed out both throws: {delays:?}"
    );
    assert!(
        after >= 2,
        "the new owner timed both throws out: {delays:?}"
    );
    let turn = Duration::from_secs(CLOCK_SECS);
    for (seq, delay) in &delays {
        assert!(
            *delay + EARLY >= turn && *delay <= turn + LATE,
            "the timeout at seq {seq} came {delay:?} after its turn event (clock {turn:?})"
        );
    }
    let seen = eve
        .events
        .values()
        .filter(|f| f["event"]["type"] == "game" && f["event"]["event"]["type"] == "timed_out")
        .count();
    assert_eq!(stored, seen, "the spectator saw every stored timeout");
}
