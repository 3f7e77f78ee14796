//! An owner paused (SIGSTOP) for longer than its lease, then resumed (SIGCONT): it has
//! lost the room and must not write into its log (docs/CLUSTER.md, "Fencing").

use crate::checks::{check_game, clients_summary};
use crate::driver::{play_all, Player};
use crate::harness::{Cluster, Opts};
use crate::setup::two_player_game;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Node a owns a game; its player on a is to roll when a is stopped, and rolls into the
/// stopped node's socket. Another node takes the room over (the epoch grows). After
/// SIGCONT the old owner's late write is refused: the stored log has no fork and no event
/// written by a after it lost the room, room_leases names one owner, and a's clients,
/// never reconnecting, keep receiving the game from the new owner to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_owner_loses_its_room_and_cannot_write() {
    let test = "a_paused_owner_loses_its_room_and_cannot_write";
    let Some(mut cluster) = Cluster::start(test, Opts::default()).await else {
        return;
    };
    let (code, mut players) = two_player_game(&cluster, 0, "p", 60).await;
    let mut spectator = Player::watch(&cluster.roster, 2, &code, "spectator").await;
    spectator.wait_seq(3).await;
    assert_eq!(players[0].node(), 0);
    for (j, p) in players.iter_mut().enumerate() {
        p.think = Duration::from_millis(10);
        p.seed(j as u64 + 5);
    }
    // Ana (on a) plays a few throws, then waits for her turn.
    let (hold, holding) = (players[0].hold.clone(), players[0].holding.clone());
    let first = cluster.lease(&code).await.expect("lease");
    assert_eq!((first.owner.as_str(), first.epoch), ("a", 1), "{first:?}");
    players.push(spectator);
    let deadline = Instant::now() + Duration::from_secs(180);
    let game = tokio::spawn(play_all(players, deadline));
    let id = cluster.games_of(&code).await.pop().expect("game");
    let until = Instant::now() + Duration::from_secs(30);
    while cluster.stored_events(&id).await.len() < 30 {
        assert!(Instant::now() < until, "the game did not get going");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    hold.store(true, Ordering::SeqCst);
    let until = Instant::now() + Duration::from_secs(30);
    while !holding.load(Ordering::SeqCst) {
        assert!(Instant::now() < until, "Ana's turn did not come");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let before = cluster.stored_events(&id).await;

    // Stop a; Ana's roll goes into its socket; the room moves on without a.
    cluster.signal(0, "STOP");
    let stopped_at = Instant::now();
    hold.store(false, Ordering::SeqCst);
    let taken = cluster
        .wait_lease(&code, Duration::from_secs(5), "taken from a", |l| {
            l.epoch > first.epoch && l.owner != "a"
        })
        .await;
    eprintln!("{test}: {taken:?} after {:?}", stopped_at.elapsed());
    assert!(
        cluster.index_of(&taken.owner).is_some_and(|i| i != 0),
        "another node of the cluster took the room: {taken:?}"
    );
    assert!(cluster.roster.is_up(0), "a is only stopped");
    // Stay stopped a little longer than the lease, with the new owner serving the room.
    tokio::time::sleep(Duration::from_millis(cluster.opts.lease_ttl_ms)).await;
    let during = cluster.stored_events(&id).await;
    // The new owner's restore gave Ana a fresh full clock (R-CLOCK), one `turn` event;
    // nothing else can be stored while her roll is stuck in the stopped node.
    assert_eq!(
        during.len(),
        before.len() + 1,
        "only the takeover's fresh clock is stored while Ana's roll is stuck in the stopped node: {:?}",
        &during[before.len()..]
    );
    assert_eq!(
        during[before.len()]["event"]["type"],
        "turn",
        "the takeover's fresh clock: {}",
        during[before.len()]
    );
    cluster.signal(0, "CONT");
    let resumed_at = Instant::now();

    let players = game
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    let refs: Vec<&Player> = players.iter().collect();
    let stored = check_game(&cluster, &code, &refs, true).await;
    assert!(stored.finished(), "the game went on to its end");
    assert_eq!(stored.timeouts(), 0, "nobody lost a turn to the pause");
    // Read as `before` was (`stored.events` has no `positioned` marks): the marks are
    // unchanged too.
    let now = cluster.stored_events(&id).await;
    assert_eq!(
        &now[..before.len()],
        &before[..],
        "what was stored before the pause is unchanged"
    );
    let after = cluster.lease(&code).await.expect("lease");
    assert_eq!(
        after.owner, taken.owner,
        "one owner since the takeover: {after:?}"
    );
    assert_eq!(after.epoch, taken.epoch, "{after:?}");
    let ana = &players[0];
    assert_eq!(ana.sessions.len(), 1, "Ana never reconnected");
    let late = ana.arrivals.values().filter(|t| **t > resumed_at).count();
    assert!(
        late >= 10,
        "Ana kept receiving events from the new owner: {late}"
    );
    for p in &players {
        assert_eq!(p.sessions.len(), 1, "{} never reconnected", p.name);
        assert_eq!(p.snapshots, 0, "{}: no events skipped", p.name);
    }
    eprintln!("{test}: clients: {}", clients_summary(&players));
    let (known, unknown) = cluster.check_writers().await;
    eprintln!("{test}: writes by the owner: {known} (writer unknown: {unknown})");
    assert!(cluster.audited, "the writes were audited");
    assert!(known > 0, "the writers were identified");
}
