//! Lease statements have connections of their own and locks that game writes do not
//! hold up (docs/CLUSTER.md, "Lease connections"):
//!
//! * with every connection of the main pool stuck (the group-commit writer and the
//!   readers blocked behind a lock, as a saturated database holds them), renewals,
//!   heartbeats, the node list and claims still answer, and the leases stay good;
//! * a renewal does not wait for a fenced write in flight (its fence check's row lock),
//!   while a takeover still does, and the old owner's next write is refused.
//!
//! PostgreSQL only: skipped with a message without `DATABASE_URL`, failed with `CI` set.

#[macro_use]
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{code, game, room, seat, Harness};
use parchis_store::{Fence, NodeRecord, PostgresOptions, RoomStatus, RoomWrite, Store, StoreError};
use sqlx::{Connection, Executor, PgConnection};

/// A lease that does not expire during the test.
const LONG_TTL: i64 = 60_000;
/// Guard against a hang (not a timing assertion): without the lease pool the renewal
/// would wait for the main pool's acquire timeout (10 s) and fail.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// Backends named `app` waiting for a lock held by backend `holder`, by pid.
async fn blocked(watch: &mut PgConnection, app: &str, holder: i32) -> Vec<i32> {
    sqlx::query_scalar(
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 \
         AND pg_blocking_pids(pid) @> ARRAY[$2::int] ORDER BY pid",
    )
    .bind(app)
    .bind(holder)
    .fetch_all(&mut *watch)
    .await
    .expect("read pg_stat_activity")
}

/// Waits until a backend named `app` waits for `holder`'s lock; its pid.
async fn until_blocked(watch: &mut PgConnection, app: &str, holder: i32) -> i32 {
    tokio::time::timeout(HANG_GUARD, async {
        loop {
            if let Some(pid) = blocked(watch, app, holder).await.first() {
                return *pid;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {app} connection ever waited for backend {holder}"))
}

/// Main-pool connections (`parchis-store`) waiting for a lock held by backend `holder`.
/// Read on a connection of its own (`watch`, outside any transaction: inside one,
/// `pg_stat_activity` would stay the snapshot of its first read).
async fn stuck(watch: &mut PgConnection, holder: i32) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'parchis-store' \
         AND pg_blocking_pids(pid) @> ARRAY[$1::int]",
    )
    .bind(holder)
    .fetch_one(&mut *watch)
    .await
    .expect("read pg_stat_activity")
}

/// Waits until at least `n` of the main pool's connections wait for `holder`'s lock.
async fn until_stuck(watch: &mut PgConnection, holder: i32, n: i64) {
    tokio::time::timeout(HANG_GUARD, async {
        while stuck(watch, holder).await < n {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("fewer than {n} store connections ever waited for the lock"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
// Over 80 lines: one scenario, its steps and their checks in order (a test reads top to bottom).
async fn renewals_do_not_wait_for_an_exhausted_pool() {
    let Some(h) = Harness::postgres("renewals_do_not_wait_for_an_exhausted_pool").await else {
        return;
    };
    let store: Arc<dyn Store> = Arc::clone(&h.store);
    let url = h.url.clone().expect("postgres url");
    let mut fences: Vec<Fence> = Vec::new();
    for _ in 0..20 {
        let c = code();
        let fence = store
            .create_room_leased(&room(&c, RoomStatus::Playing, 1), "a", LONG_TTL)
            .await
            .expect("create leased room");
        fences.push(fence);
    }
    fences.sort_by(|x, y| x.room_code.cmp(&y.room_code));
    let busy = code();
    store
        .create_room(&room(&busy, RoomStatus::Playing, 1))
        .await
        .expect("create busy room");

    // Game traffic stuck behind a lock: the writer's group first (one connection), then
    // readers for every other connection of the main pool.
    let mut side = PgConnection::connect(&url).await.expect("side connection");
    side.execute("BEGIN").await.expect("begin");
    side.execute("LOCK TABLE games IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("lock games");
    let holder: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut side)
        .await
        .expect("pid");
    let mut watch = PgConnection::connect(&url).await.expect("watch connection");
    let mut writes = Vec::new();
    for i in 0..64 {
        let (s, g) = (Arc::clone(&store), game(&busy, 100 + i));
        writes.push(tokio::spawn(async move { s.create_game(&g).await }));
    }
    until_stuck(&mut watch, holder, 1).await;
    let main_pool = i64::from(PostgresOptions::default().pool_connections);
    let mut reads = Vec::new();
    for _ in 1..main_pool {
        let (s, c) = (Arc::clone(&store), busy.clone());
        reads.push(tokio::spawn(async move { s.get_room(&c).await }));
    }
    until_stuck(&mut watch, holder, main_pool).await;

    // Every connection of the main pool is taken: the lease statements still answer.
    let kept = tokio::time::timeout(HANG_GUARD, store.renew_leases("a", LONG_TTL, &fences))
        .await
        .expect("the renewal waited for the exhausted main pool")
        .expect("renewal");
    assert_eq!(kept, fences, "every lease is kept");
    let me = NodeRecord {
        node_id: "a".into(),
        rooms: 20,
        draining: false,
        shedding: false,
    };
    tokio::time::timeout(HANG_GUARD, store.heartbeat_node(&me))
        .await
        .expect("the heartbeat waited for the exhausted main pool")
        .expect("heartbeat");
    let nodes = tokio::time::timeout(HANG_GUARD, store.live_nodes(LONG_TTL))
        .await
        .expect("the node list waited for the exhausted main pool")
        .expect("live nodes");
    assert_eq!(
        nodes.iter().map(|n| n.node_id.as_str()).collect::<Vec<_>>(),
        vec!["a"]
    );
    let claimed = tokio::time::timeout(HANG_GUARD, store.claim_expired("b", LONG_TTL, 100))
        .await
        .expect("the claim waited for the exhausted main pool")
        .expect("claim");
    // The busy room had no lease: b claims it; a's rooms are not expired.
    assert_eq!(
        claimed
            .iter()
            .map(|f| f.room_code.as_str())
            .collect::<Vec<_>>(),
        vec![busy.as_str()]
    );
    assert_eq!(
        stuck(&mut watch, holder).await,
        main_pool,
        "the game traffic was stuck all along"
    );

    // The lock goes: the stuck traffic completes, nothing of it lost.
    side.execute("ROLLBACK").await.expect("unlock");
    for w in writes {
        w.await.expect("write task").expect("write after the lock");
    }
    for r in reads {
        let snapshot = r.await.expect("read task").expect("read after the lock");
        assert_eq!(
            snapshot.map(|s| s.room.code),
            Some(busy.clone()),
            "the reader saw its room"
        );
    }
    for fence in &fences {
        let lease = store
            .lease(&fence.room_code)
            .await
            .expect("lease")
            .expect("row");
        assert_eq!((lease.owner.as_str(), lease.epoch), ("a", 1));
        assert!(lease.expires_in_ms > 0, "{lease:?}");
    }
    side.close().await.expect("close side connection");
    watch.close().await.expect("close watch connection");
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
// Over 80 lines: one scenario, its steps and their checks in order (a test reads top to bottom).
async fn a_renewal_passes_a_write_in_flight_and_a_takeover_waits_for_it() {
    let test = "a_renewal_passes_a_write_in_flight_and_a_takeover_waits_for_it";
    let Some(h) = Harness::postgres(test).await else {
        return;
    };
    let a: Arc<dyn Store> = Arc::clone(&h.store);
    let b = h.reopen().await.expect("second store");
    let url = h.url.clone().expect("postgres url");
    let c = code();
    let fence = a
        .create_room_leased(&room(&c, RoomStatus::Open, 1), "a", LONG_TTL)
        .await
        .expect("create leased room");

    // a's fenced write checks its fence (the lease row locked), then waits for `seats`.
    let mut side = PgConnection::connect(&url).await.expect("side connection");
    side.execute("BEGIN").await.expect("begin");
    side.execute("LOCK TABLE seats IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("lock seats");
    let holder: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut side)
        .await
        .expect("pid");
    let mut watch = PgConnection::connect(&url).await.expect("watch connection");
    let write = {
        let (a, c, fence) = (Arc::clone(&a), c.clone(), fence.clone());
        tokio::spawn(async move {
            let s = seat(&c, "red", "Ana", true, 5);
            a.write_room(&c, Some(&fence), RoomWrite::UpsertSeat(s))
                .await
        })
    };
    let writer = until_blocked(&mut watch, "parchis-store", holder).await;

    // The renewal does not wait for that write.
    let kept = tokio::time::timeout(
        HANG_GUARD,
        a.renew_leases("a", LONG_TTL, std::slice::from_ref(&fence)),
    )
    .await
    .expect("the renewal waited for the write in flight")
    .expect("renewal");
    assert_eq!(kept, vec![fence.clone()]);

    // The lease runs out (as if a stopped renewing); b's takeover waits for the write.
    sqlx::query(
        "UPDATE room_leases SET expires_at = now() - interval '1 second' WHERE room_code = $1",
    )
    .bind(&c)
    .execute(&mut watch)
    .await
    .expect("expire the lease");
    let takeover = {
        let (b, c) = (Arc::clone(&b), c.clone());
        tokio::spawn(async move { b.acquire_lease(&c, "b", LONG_TTL).await })
    };
    let waiting = until_blocked(&mut watch, "parchis-store-lease", writer).await;
    assert!(waiting > 0);
    assert!(!takeover.is_finished(), "the takeover waits for the write");

    // The write commits (its fence held when it was checked), then b takes over.
    side.execute("ROLLBACK").await.expect("unlock");
    write
        .await
        .expect("write task")
        .expect("the write in flight commits");
    let taken = takeover
        .await
        .expect("takeover task")
        .expect("acquire")
        .expect("b acquires the expired lease");
    assert_eq!((taken.node.as_str(), taken.epoch), ("b", 2));
    let stored = b.get_room(&c).await.expect("read").expect("room");
    assert_eq!(
        stored
            .seats
            .iter()
            .map(|s| s.colour.as_str())
            .collect::<Vec<_>>(),
        vec!["red"],
        "the new owner sees the write made before its takeover"
    );
    // a's next write is refused by its old fence.
    let late = a
        .write_room(
            &c,
            Some(&fence),
            RoomWrite::UpsertSeat(seat(&c, "blue", "Bo", false, 6)),
        )
        .await;
    assert!(matches!(late, Err(StoreError::Fenced { .. })), "{late:?}");
    side.close().await.expect("close side connection");
    watch.close().await.expect("close watch connection");
    b.close().await;
    h.finish().await;
}

/// A renewal's update of `expires_at` is a HOT update (migration 0006: no index names the
/// column), so renewing every live lease once a second adds no index entries and leaves
/// no versions that need VACUUM: checked with the same update in a transaction of its
/// own, whose HOT count PostgreSQL reports directly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewal_is_a_hot_update() {
    let Some(h) = Harness::postgres("a_renewal_is_a_hot_update").await else {
        return;
    };
    let mut fences = Vec::new();
    for _ in 0..3 {
        let c = code();
        fences.push(
            h.store
                .create_room_leased(&room(&c, RoomStatus::Playing, 1), "a", LONG_TTL)
                .await
                .expect("create leased room"),
        );
    }
    let url = h.url.clone().expect("postgres url");
    let mut side = PgConnection::connect(&url).await.expect("side connection");
    side.execute("BEGIN").await.expect("begin");
    let codes: Vec<String> = fences.iter().map(|f| f.room_code.clone()).collect();
    let updated = sqlx::query(
        "UPDATE room_leases SET expires_at = now() + interval '1 minute' \
         WHERE room_code = ANY($1::text[])",
    )
    .bind(&codes)
    .execute(&mut side)
    .await
    .expect("renew by hand")
    .rows_affected();
    let hot: i64 =
        sqlx::query_scalar("SELECT pg_stat_get_xact_tuples_hot_updated('room_leases'::regclass)")
            .fetch_one(&mut side)
            .await
            .expect("hot count");
    side.execute("ROLLBACK").await.expect("rollback");
    assert_eq!((updated, hot), (3, 3), "every renewal update is HOT");
    // And the store's own renewal still keeps them.
    let kept = h
        .store
        .renew_leases("a", LONG_TTL, &fences)
        .await
        .expect("renew");
    assert_eq!(kept.len(), 3);
    side.close().await.expect("close side connection");
    h.finish().await;
}

/// The lease keeper reads the database's wall clock (issue 25, "Clock": a node compares
/// its own with it at every heartbeat). Here both run on one machine: they agree within
/// the round trip, and a keeper through the store itself has no clock to offer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_keeper_reads_the_database_clock() {
    let Some(h) = Harness::postgres("the_lease_keeper_reads_the_database_clock").await else {
        return;
    };
    let keeper = h
        .store
        .open_lease_keeper()
        .await
        .expect("lease connections")
        .expect("PostgreSQL has a lease keeper");
    let before = common::now_ms();
    let db = keeper.clock_ms().await.expect("read").expect("a clock");
    let after = common::now_ms();
    assert!(
        db >= before - 1_000 && db <= after + 1_000,
        "database clock {db} against this machine's {before}..{after}"
    );
    let via = parchis_store::ViaStore(h.store.clone());
    assert_eq!(
        parchis_store::LeaseKeeper::clock_ms(&via)
            .await
            .expect("read"),
        None
    );
    h.finish().await;
}
