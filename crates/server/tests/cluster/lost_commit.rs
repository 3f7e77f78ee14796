//! Issue #13 in a real cluster on PostgreSQL: the answer to a game write's `COMMIT` is
//! lost after the database applied it (the nodes reach PostgreSQL through a proxy that
//! forwards that one `COMMIT`, holds the answer and closes the connection:
//! [`crate::proxy::Proxy::lose_next_commit_answer`]). The owner reads its stored room,
//! finds the log ahead and has the room rebuilt: it releases the lease, and the room is
//! taken again at a new epoch (docs/CLUSTER.md, "Writes in doubt"). The game goes on to its
//! end: no command is answered `internal`, every command gets its reply, and every client
//! saw every stored event once, in order (the checks of every cluster test).

use crate::checks::{check_game, clients_summary};
use crate::driver::{play_all, Player};
use crate::harness::{Cluster, Opts};
use crate::setup::two_player_game;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_whose_answer_is_lost_has_the_room_rebuilt_and_the_game_goes_on() {
    let test = "a_commit_whose_answer_is_lost_has_the_room_rebuilt_and_the_game_goes_on";
    let opts = Opts {
        db_proxy: true,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let (code, mut players) = two_player_game(&cluster, 0, "l", 60).await;
    assert_eq!((players[0].node(), players[1].node()), (0, 1));
    for (j, p) in players.iter_mut().enumerate() {
        p.think = Duration::from_millis(10);
        p.seed(j as u64 + 21);
    }
    let first = cluster.lease(&code).await.expect("lease");
    assert_eq!((first.owner.as_str(), first.epoch), ("a", 1), "{first:?}");
    let game = tokio::spawn(play_all(players, Instant::now() + Duration::from_secs(240)));
    let id = cluster.games_of(&code).await.pop().expect("game");
    let until = Instant::now() + Duration::from_secs(30);
    while cluster.stored_events(&id).await.len() < 20 {
        assert!(Instant::now() < until, "the game did not get going");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let proxy = cluster
        .db_proxy
        .as_ref()
        .expect("the nodes' database proxy");
    proxy.lose_next_commit_answer();
    let until = Instant::now() + Duration::from_secs(20);
    while proxy.lost_commit_answers() == 0 {
        assert!(
            Instant::now() < until,
            "no game write's COMMIT went through the proxy"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The owner had the room rebuilt from its log: released, then adopted again at once
    // by itself or, when it refuses (it sheds load after the 300 ms commit), claimed by a
    // sweeper.
    let rebuilt = cluster
        .wait_lease(&code, Duration::from_secs(20), "taken again", |l| {
            l.epoch > first.epoch && l.ms_left > 0
        })
        .await;
    assert!(
        cluster.index_of(&rebuilt.owner).is_some(),
        "a node of the cluster runs the rebuilt room: {rebuilt:?}"
    );

    let players = game
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    let refs: Vec<&Player> = players.iter().collect();
    let stored = check_game(&cluster, &code, &refs, true).await;
    assert!(stored.finished(), "the game went on to its end");
    let log = cluster.log_tail(0, 100_000);
    assert!(
        log.contains("rebuilding it"),
        "the owner found its log ahead of the room:\n{}",
        cluster.log_tail(0, 40)
    );
    for p in &players {
        eprintln!(
            "{test}: {}: {} sent, {} acknowledged, errors {:?}",
            p.name,
            p.sent,
            p.acks.len(),
            p.errors
        );
        assert_eq!(p.unanswered, 0, "{}: every command was answered", p.name);
        assert!(
            p.unreplied.is_empty(),
            "{}: commands never answered: {:?}",
            p.name,
            p.unreplied
        );
        let codes: Vec<&str> = p
            .errors
            .iter()
            .map(|e| e["code"].as_str().unwrap_or("?"))
            .collect();
        assert!(
            codes.iter().all(|c| matches!(
                *c,
                "room_unavailable" | "outcome_unknown" | "stale_seq" | "not_your_turn"
            )),
            "{}: errors {codes:?} ({:?})",
            p.name,
            p.errors
        );
    }
    eprintln!("{test}: clients: {}", clients_summary(&players));
}

/// SIGTERM arrives while the owner waits for the `COMMIT` answer that is lost: the node
/// drains, and the room it then finds ahead of its log is not adopted again by the
/// draining node itself (it would run there until the drain ended and its lease would be
/// released a second time at the shutdown): its released lease goes to another node at
/// the next epoch, and the game goes on there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_answer_lost_while_the_owner_drains_has_the_room_rebuilt_elsewhere() {
    let test = "a_commit_answer_lost_while_the_owner_drains_has_the_room_rebuilt_elsewhere";
    // Leases of 3 s: the 300 ms commit stays under the shedding limit (a sixth of the
    // TTL), so the node's own adopt is not refused for shedding load.
    let opts = Opts {
        db_proxy: true,
        lease_ttl_ms: 3000,
        lease_renew_ms: 1000,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let (code, mut players) = two_player_game(&cluster, 0, "d", 60).await;
    for (j, p) in players.iter_mut().enumerate() {
        p.think = Duration::from_millis(10);
        p.seed(j as u64 + 31);
    }
    let first = cluster.lease(&code).await.expect("lease");
    assert_eq!((first.owner.as_str(), first.epoch), ("a", 1), "{first:?}");
    let game = tokio::spawn(play_all(players, Instant::now() + Duration::from_secs(240)));
    let id = cluster.games_of(&code).await.pop().expect("game");
    let until = Instant::now() + Duration::from_secs(30);
    while cluster.stored_events(&id).await.len() < 20 {
        assert!(Instant::now() < until, "the game did not get going");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let proxy = cluster
        .db_proxy
        .as_ref()
        .expect("the nodes' database proxy");
    proxy.lose_next_commit_answer();
    let until = Instant::now() + Duration::from_secs(20);
    while proxy.held_commit_answers() == 0 {
        assert!(
            Instant::now() < until,
            "no game write's COMMIT went through the proxy"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The answer is held for 300 ms: the owner drains meanwhile.
    cluster.signal(0, "TERM");
    let next = cluster
        .wait_lease(&code, Duration::from_secs(20), "taken again", |l| {
            l.epoch > first.epoch && l.ms_left > 0
        })
        .await;
    assert!(
        next.epoch == first.epoch + 1 && next.owner != "a",
        "the draining node did not take the room again; another node has it at the next \
         epoch: {next:?}\n{}",
        cluster.log_tail(0, 40)
    );
    let players = game
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    let refs: Vec<&Player> = players.iter().collect();
    let stored = check_game(&cluster, &code, &refs, true).await;
    assert!(stored.finished(), "the game went on to its end");
    assert!(
        cluster
            .wait_exit(0, Duration::from_secs(20))
            .await
            .is_some(),
        "a exits after its drain"
    );
    for p in &players {
        assert_eq!(p.unanswered, 0, "{}: every command was answered", p.name);
        let codes: Vec<&str> = p
            .errors
            .iter()
            .map(|e| e["code"].as_str().unwrap_or("?"))
            .collect();
        assert!(
            codes.iter().all(|c| matches!(
                *c,
                "room_unavailable" | "outcome_unknown" | "stale_seq" | "not_your_turn"
            )),
            "{}: errors {codes:?} ({:?})",
            p.name,
            p.errors
        );
    }
    eprintln!("{test}: clients: {}", clients_summary(&players));
}

/// The `COMMIT` of a game write is still on its way when its connection is lost (the
/// proxy closes the owner's side and delivers the `COMMIT` 500 ms later): the owner's
/// read of its log right after must not find the write "not applied", which would tell
/// the player "nothing was applied" about a throw that is stored a moment later. The
/// read waits for the room's write transactions still running (`wait_room_writes`),
/// finds the log ahead and has the room rebuilt; the game goes on to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_that_lands_after_its_connection_was_lost_is_not_told_not_applied() {
    let test = "a_commit_that_lands_after_its_connection_was_lost_is_not_told_not_applied";
    let opts = Opts {
        db_proxy: true,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let (code, mut players) = two_player_game(&cluster, 0, "t", 60).await;
    for (j, p) in players.iter_mut().enumerate() {
        p.think = Duration::from_millis(10);
        p.seed(j as u64 + 41);
    }
    let first = cluster.lease(&code).await.expect("lease");
    let game = tokio::spawn(play_all(players, Instant::now() + Duration::from_secs(240)));
    let id = cluster.games_of(&code).await.pop().expect("game");
    let until = Instant::now() + Duration::from_secs(30);
    while cluster.stored_events(&id).await.len() < 20 {
        assert!(Instant::now() < until, "the game did not get going");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let proxy = cluster
        .db_proxy
        .as_ref()
        .expect("the nodes' database proxy");
    proxy.land_next_commit_late();
    let until = Instant::now() + Duration::from_secs(20);
    while proxy.lost_commit_answers() == 0 {
        assert!(
            Instant::now() < until,
            "no game write's COMMIT went through the proxy"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cluster
        .wait_lease(&code, Duration::from_secs(20), "taken again", |l| {
            l.epoch > first.epoch && l.ms_left > 0
        })
        .await;
    let players = game
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    let refs: Vec<&Player> = players.iter().collect();
    let stored = check_game(&cluster, &code, &refs, true).await;
    assert!(stored.finished(), "the game went on to its end");
    let log = cluster.log_tail(0, 100_000);
    assert!(
        log.contains("the stored room is ahead of the live one")
            && !log.contains("a write in doubt was not applied"),
        "the owner's read of its doubt saw the late write:\n{}",
        cluster.log_tail(0, 40)
    );
    for p in &players {
        assert_eq!(p.unanswered, 0, "{}: every command was answered", p.name);
        // The database was never out of reach: nobody may be told "nothing was applied"
        // as for a database out of reach.
        let wrongly_not_applied: Vec<&serde_json::Value> = p
            .errors
            .iter()
            .filter(|e| {
                e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("cannot reach its database"))
            })
            .collect();
        assert!(
            wrongly_not_applied.is_empty(),
            "{}: told nothing was applied: {wrongly_not_applied:?}\n{}",
            p.name,
            cluster.log_tail(0, 40)
        );
    }
    eprintln!("{test}: clients: {}", clients_summary(&players));
}
