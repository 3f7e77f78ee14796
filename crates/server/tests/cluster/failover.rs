//! `kill -9` of room owners mid-game, again and again (docs/CLUSTER.md, "Failover").

use crate::checks::{check_game, clients_summary};
use crate::db::Lease;
use crate::driver::{play_all, Player};
use crate::harness::{Cluster, Opts};
use crate::setup::two_player_game;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// The documented failover bound: TTL (3 s) + one sweep (0.5 s) + the restore ≤ 5 s.
const FAILOVER_BOUND: Duration = Duration::from_secs(5);
const KILLS: usize = 10;
const GAMES: usize = 4;
/// The kill (counted from 1) that hits the owner of a game nobody plays.
const IDLE_KILL: usize = 4;

type Running = Vec<(String, JoinHandle<Vec<Player>>)>;

/// The test's random seed: `PARCHIS_TEST_SEED`, else the clock; printed to replay a run.
fn seed(test: &str) -> u64 {
    let seed = std::env::var("PARCHIS_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    eprintln!("{test}: PARCHIS_TEST_SEED={seed}");
    seed
}

/// Moves the games whose players are done from `running` to `done`.
async fn reap(running: &mut Running, done: &mut Vec<(String, Vec<Player>)>) {
    let mut i = 0;
    while i < running.len() {
        if running[i].1.is_finished() {
            let (code, task) = running.swap_remove(i);
            match task.await {
                Ok(players) => done.push((code, players)),
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            }
        } else {
            i += 1;
        }
    }
}

/// Waits until `room`'s lease has a newer epoch than `epoch` (or the room is retired or
/// its game over), at most until `until`. The new lease, `None` for a game that ended.
async fn taken_over(cluster: &Cluster, room: &str, epoch: i64, until: Instant) -> Option<i64> {
    loop {
        let lease = cluster.lease(room).await.expect("lease");
        if lease.epoch > epoch {
            return Some(lease.epoch);
        }
        let over: Option<i64> = sqlx::query_scalar(
            "SELECT count(*) FROM games WHERE room_code = $1 AND finished_at_ms IS NOT NULL",
        )
        .bind(room)
        .fetch_one(&cluster.db)
        .await
        .expect("read games");
        if lease.retired || over.unwrap_or(0) > 0 {
            return None;
        }
        assert!(
            Instant::now() < until,
            "room {room}: not taken over within {FAILOVER_BOUND:?} of the kill: {lease:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The state of the kill -9 test: the games running and done, and what the kills did.
struct Run {
    cluster: Cluster,
    rng: StdRng,
    deadline: Instant,
    running: Running,
    done: Vec<(String, Vec<Player>)>,
    /// Rooms taken over, with how many times.
    takeovers: BTreeMap<String, usize>,
    /// The slowest takeover, counted from the kill.
    worst: Duration,
    /// Games created so far.
    made: usize,
    /// Each kill: when, the node, the rooms it owned that were taken over.
    kills: Vec<(Instant, usize, Vec<String>)>,
    idle_room: String,
}

impl Run {
    /// Keeps [`GAMES`] games running, each created on the next node in turn.
    async fn top_up(&mut self) {
        reap(&mut self.running, &mut self.done).await;
        while self.running.len() < GAMES {
            let owner = self.made % 3;
            let name = format!("g{}", self.made);
            let (code, mut players) = two_player_game(&self.cluster, owner, &name, 15).await;
            for (j, p) in players.iter_mut().enumerate() {
                p.think = Duration::from_millis(15);
                p.seed(self.rng.gen::<u64>() ^ j as u64);
            }
            let task = tokio::spawn(play_all(players, self.deadline));
            self.running.push((code, task));
            self.made += 1;
        }
    }

    /// `kill -9` of the owner of `room` (restarted at once, or after the takeover): every
    /// running room it owned is taken over within [`FAILOVER_BOUND`]. The old lease of
    /// `room`, and whether any running room was taken over.
    async fn kill_owner_of(&mut self, room: &str, restart_at_once: bool) -> (Lease, bool) {
        let lease = self.cluster.lease(room).await.expect("lease");
        let victim = self
            .cluster
            .index_of(&lease.owner)
            .expect("owner is a node");
        let mut owned = Vec::new();
        for (code, _) in &self.running {
            if let Some(l) = self.cluster.lease(code).await {
                if l.owner == lease.owner && !l.retired {
                    owned.push((code.clone(), l.epoch));
                }
            }
        }
        let killed_at = Instant::now();
        self.cluster.kill(victim);
        if restart_at_once {
            self.cluster.restart(victim).await;
        }
        let mut moved = Vec::new();
        for (code, epoch) in &owned {
            let until = killed_at + FAILOVER_BOUND;
            if taken_over(&self.cluster, code, *epoch, until)
                .await
                .is_some()
            {
                self.worst = self.worst.max(killed_at.elapsed());
                *self.takeovers.entry(code.clone()).or_default() += 1;
                moved.push(code.clone());
            }
        }
        let hit = !moved.is_empty();
        self.kills.push((killed_at, victim, moved));
        eprintln!(
            "kill -9 of {} (restarted {}): {} rooms taken over, slowest so far {:?}",
            lease.owner,
            if restart_at_once { "at once" } else { "after" },
            owned.len(),
            self.worst
        );
        if !restart_at_once {
            self.cluster.restart(victim).await;
        }
        (lease, hit)
    }

    /// A game nobody plays (both players hold): its owner is killed while a throw's clock
    /// runs, and the new owner's clock times the throw out. Then the game is played.
    async fn idle_kill(&mut self) -> bool {
        let (code, players) = two_player_game(&self.cluster, self.made % 3, "idle", 3).await;
        self.made += 1;
        let holds: Vec<_> = players.iter().map(|p| p.hold.clone()).collect();
        for h in &holds {
            h.store(true, Ordering::SeqCst);
        }
        self.idle_room = code.clone();
        let task = tokio::spawn(play_all(players, self.deadline));
        self.running.push((code.clone(), task));
        let id = self.cluster.games_of(&code).await.pop().expect("idle game");
        tokio::time::sleep(Duration::from_millis(self.rng.gen_range(200..1500))).await;
        let before = self.cluster.stored_events(&id).await.len();
        let (old, hit) = self.kill_owner_of(&code, false).await;
        // The takeover (within the bound) gives a fresh full 3 s clock, which then fires.
        let until = Instant::now() + FAILOVER_BOUND + Duration::from_secs(3 + 2);
        loop {
            let events = self.cluster.stored_events(&id).await;
            let fired = events[before..]
                .iter()
                .any(|e| e["event"]["event"]["type"] == "timed_out");
            if fired {
                break;
            }
            assert!(
                Instant::now() < until,
                "the idle game's clock did not fire after its owner died: {:?}",
                &events[before.saturating_sub(2)..]
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let l = self.cluster.lease(&code).await.expect("lease");
        assert!(
            l.epoch > old.epoch,
            "the timeout came from a new owner: {l:?}"
        );
        for h in &holds {
            h.store(false, Ordering::SeqCst);
        }
        hit
    }

    /// Checks every game once all have ended; prints a summary.
    async fn check(&self) {
        let (mut reconnects, mut survivors) = (0, 0);
        for (code, players) in &self.done {
            let refs: Vec<&Player> = players.iter().collect();
            let stored = check_game(&self.cluster, code, &refs, true).await;
            assert!(stored.finished(), "room {code}: its game ended");
            if *code != self.idle_room {
                assert_eq!(
                    stored.timeouts(),
                    0,
                    "room {code}: no turn lost to a failover"
                );
            }
            for p in players {
                for s in &p.sessions[..p.sessions.len() - 1] {
                    let closed = s.closed.expect("an earlier session closed");
                    assert!(
                        self.cluster.roster.went_down_between(s.node, s.opened, closed),
                        "{}: its socket on node {} closed (code {:?}) though the node did not go down; its last errors: {:?}",
                        p.name,
                        s.node,
                        s.close_code,
                        p.errors.iter().rev().take(25).collect::<Vec<_>>()
                    );
                }
                reconnects += p.sessions.len() - 1;
                // Takeovers of its room it went through on one socket of another node.
                for (at, victim, rooms) in &self.kills {
                    let through = p.sessions.iter().any(|s| {
                        s.node != *victim
                            && s.opened < *at
                            && s.closed.is_none_or(|c| c > *at + FAILOVER_BOUND)
                    });
                    if through && rooms.contains(code) {
                        survivors += 1;
                    }
                }
            }
        }
        let (known, unknown) = self.cluster.check_writers().await;
        eprintln!(
            "{} games, {} rooms taken over, slowest takeover {:?}, {survivors} times a player carried \
             on through its owner's death; clients: {}; writes by the owner {known} (writer \
             unknown {unknown})",
            self.done.len(),
            self.takeovers.len(),
            self.worst,
            clients_summary(self.done.iter().flat_map(|(_, ps)| ps.iter()))
        );
        assert!(reconnects > 0, "clients of dead nodes resumed elsewhere");
        assert!(survivors > 0, "clients of surviving nodes carried on");
    }
}

/// Ten `kill -9`s of room owners at random moments while games run on three nodes
/// (killed nodes come back, half at once and half after the takeover): every stored log
/// is gap-free and replays, every acknowledged action is stored and none is applied
/// twice, every room is taken over within the documented 5 s, nobody times out because
/// of a failover, clients of surviving nodes carry on without reconnecting, clients of a
/// dead node resume on another, and the turn clock of a game nobody plays runs on its
/// new owner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_owners_loses_and_doubles_nothing() {
    let test = "kill_9_of_owners_loses_and_doubles_nothing";
    let Some(cluster) = Cluster::start(test, Opts::default()).await else {
        return;
    };
    let mut run = Run {
        cluster,
        rng: StdRng::seed_from_u64(seed(test)),
        deadline: Instant::now() + Duration::from_secs(300),
        running: Vec::new(),
        done: Vec::new(),
        takeovers: BTreeMap::new(),
        worst: Duration::ZERO,
        made: 0,
        kills: Vec::new(),
        idle_room: String::new(),
    };
    let (mut kills, mut effective) = (0, 0);
    while effective < KILLS {
        kills += 1;
        assert!(
            kills <= KILLS + 5,
            "{} kills hit no running game",
            kills - effective
        );
        run.top_up().await;
        let hit = if kills == IDLE_KILL {
            run.idle_kill().await
        } else {
            let pause = run.rng.gen_range(300..1500);
            tokio::time::sleep(Duration::from_millis(pause)).await;
            let room = run.running[run.rng.gen_range(0..run.running.len())]
                .0
                .clone();
            run.kill_owner_of(&room, kills % 2 == 0).await.1
        };
        effective += usize::from(hit);
    }
    while !run.running.is_empty() {
        tokio::time::sleep(Duration::from_millis(100)).await;
        reap(&mut run.running, &mut run.done).await;
    }
    eprintln!("{test}: {effective} kills of owners in {kills}");
    run.check().await;
}
