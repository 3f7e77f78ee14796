//! `Store::wait_room_writes` on PostgreSQL: the read that decides a write whose `COMMIT`
//! got no answer waits for the room's write transactions still running, so it sees the
//! write when that transaction commits after its connection was lost (docs/CLUSTER.md,
//! "Writes in doubt"); a transaction that does not end within the lock timeout fails
//! the wait instead of holding it up.
//!
//! PostgreSQL only: skipped with a message without `DATABASE_URL`, failed with `CI` set.

#[macro_use]
mod common;

use std::time::Duration;

use common::{code, game, room, Harness};
use parchis_store::{RoomStatus, StoreError};
use sqlx::{Connection, Executor, PgConnection};

/// Guard against a hang (not a timing assertion).
const HANG_GUARD: Duration = Duration::from_secs(30);

/// Whether a backend of the store's main pool waits for a lock of backend `holder`.
async fn waits_for(watch: &mut PgConnection, holder: i32) -> bool {
    let n: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'parchis-store' \
         AND pg_blocking_pids(pid) @> ARRAY[$1::int]",
    )
    .bind(holder)
    .fetch_one(&mut *watch)
    .await
    .expect("read pg_stat_activity");
    n > 0
}

/// A side connection with a transaction that appended event `seq` to `game_id` and has
/// not committed; the connection and its backend pid.
async fn uncommitted_event(url: &str, game_id: uuid::Uuid, seq: i64) -> (PgConnection, i32) {
    let mut side = PgConnection::connect(url).await.expect("side connection");
    side.execute("BEGIN").await.expect("begin");
    sqlx::query(
        "INSERT INTO game_events (game_id, seq, event, created_at_ms) VALUES ($1, $2, '{}', 1)",
    )
    .bind(game_id)
    .bind(seq)
    .execute(&mut side)
    .await
    .expect("insert");
    let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut side)
        .await
        .expect("pid");
    (side, pid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_read_of_a_doubt_waits_for_a_write_still_committing() {
    let test = "the_read_of_a_doubt_waits_for_a_write_still_committing";
    let Some(h) = Harness::postgres(test).await else {
        return;
    };
    let url = h.url.clone().expect("postgres url");
    let c = code();
    h.store
        .create_room(&room(&c, RoomStatus::Playing, 1))
        .await
        .expect("room");
    let g = game(&c, 2);
    h.store.create_game(&g).await.expect("game");

    // A write of the room, not committed yet (its COMMIT still on its way).
    let (mut side, holder) = uncommitted_event(&url, g.id, 1).await;
    let read = {
        let (store, c) = (h.store.clone(), c.clone());
        tokio::spawn(async move {
            store.wait_room_writes(&c).await?;
            store.get_room(&c).await
        })
    };
    let mut watch = PgConnection::connect(&url).await.expect("watch connection");
    tokio::time::timeout(HANG_GUARD, async {
        while !waits_for(&mut watch, holder).await {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the wait took the room's locks");
    assert!(!read.is_finished(), "it waits for the transaction");
    side.execute("COMMIT").await.expect("the write lands");
    let stored = tokio::time::timeout(HANG_GUARD, read)
        .await
        .expect("the wait ends with the transaction")
        .expect("task")
        .expect("read")
        .expect("stored");
    let seqs: Vec<i64> = stored.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, vec![1], "the read sees the write that landed");

    // A transaction that does not end: the wait fails after the lock timeout (2 s).
    let (mut side, _) = uncommitted_event(&url, g.id, 2).await;
    let waited = tokio::time::timeout(HANG_GUARD, h.store.wait_room_writes(&c))
        .await
        .expect("the lock timeout ends the wait");
    match waited {
        Err(StoreError::Database(e)) => {
            let code = e
                .as_database_error()
                .and_then(|d| d.code().map(|c| c.into_owned()));
            assert_eq!(code.as_deref(), Some("55P03"), "lock_not_available: {e}");
        }
        other => panic!("expected the lock timeout, got {other:?}"),
    }
    side.execute("ROLLBACK").await.expect("rollback");
    h.store
        .wait_room_writes(&c)
        .await
        .expect("nothing runs now");
    h.finish().await;
}

/// A packed game's append to its existing tail row (migration 0017: an update of the
/// game's one row, which checks no foreign key and so locks no `games` row) is waited
/// for too: the wait locks the room's tail rows first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_read_of_a_doubt_waits_for_an_append_to_a_tail_row() {
    let test = "the_read_of_a_doubt_waits_for_an_append_to_a_tail_row";
    let Some(h) = Harness::postgres(test).await else {
        return;
    };
    let url = h.url.clone().expect("postgres url");
    let c = code();
    h.store
        .create_room(&room(&c, RoomStatus::Playing, 1))
        .await
        .expect("room");
    let g = game(&c, 2);
    h.store.create_game(&g).await.expect("game");
    let mut side = PgConnection::connect(&url).await.expect("side connection");
    // The game's first piece (seq 1), committed.
    sqlx::query(
        "INSERT INTO game_log_tail (game_id, last_seq, pieces, bytes) VALUES ($1, 1, 1, '\\x01')",
    )
    .bind(g.id)
    .execute(&mut side)
    .await
    .expect("first piece");
    // Its second piece (seq 2) as the store appends it, not committed yet.
    side.execute("BEGIN").await.expect("begin");
    sqlx::query(
        "INSERT INTO game_log_tail AS t (game_id, last_seq, pieces, bytes) \
         VALUES ($1, 2, 1, '\\x02') ON CONFLICT (game_id) DO UPDATE SET \
         bytes = t.bytes || EXCLUDED.bytes, last_seq = EXCLUDED.last_seq, pieces = t.pieces + 1",
    )
    .bind(g.id)
    .execute(&mut side)
    .await
    .expect("second piece");
    let holder: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut side)
        .await
        .expect("pid");
    let read = {
        let (store, c) = (h.store.clone(), c.clone());
        tokio::spawn(async move {
            store.wait_room_writes(&c).await?;
            store.get_room(&c).await
        })
    };
    let mut watch = PgConnection::connect(&url).await.expect("watch connection");
    tokio::time::timeout(HANG_GUARD, async {
        while !waits_for(&mut watch, holder).await {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the wait took the tail row's lock");
    assert!(!read.is_finished(), "it waits for the transaction");
    side.execute("COMMIT").await.expect("the write lands");
    let stored = tokio::time::timeout(HANG_GUARD, read)
        .await
        .expect("the wait ends with the transaction")
        .expect("task")
        .expect("read")
        .expect("stored");
    let log = stored.log.expect("a packed log");
    assert_eq!(
        (log.bytes, log.last_seq),
        (vec![1, 2], 2),
        "the read sees the append"
    );
    h.finish().await;
}

/// A write that lands late (its transaction still running when the store checked the
/// log's position) is not followed by a second copy of its seq: PostgreSQL's one tail row
/// is appended to only if it still ends where the store checked, once that transaction
/// has ended (what the unique `(game_id, last_seq)` key caught with one row per piece).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_after_a_late_write_of_the_same_seq_is_refused() {
    let test = "an_append_after_a_late_write_of_the_same_seq_is_refused";
    let Some(h) = Harness::postgres(test).await else {
        return;
    };
    let url = h.url.clone().expect("postgres url");
    let c = code();
    h.store
        .create_room(&room(&c, RoomStatus::Playing, 1))
        .await
        .expect("room");
    let g = game(&c, 2);
    h.store.create_game(&g).await.expect("game");
    let mut side = PgConnection::connect(&url).await.expect("side connection");
    sqlx::query(
        "INSERT INTO game_log_tail (game_id, last_seq, pieces, bytes) VALUES ($1, 1, 1, '\\x01')",
    )
    .bind(g.id)
    .execute(&mut side)
    .await
    .expect("first piece");
    // Seq 2, written by a transaction whose COMMIT is still on its way.
    side.execute("BEGIN").await.expect("begin");
    sqlx::query(
        "UPDATE game_log_tail SET bytes = bytes || '\\x02'::bytea, last_seq = 2, \
         pieces = pieces + 1 WHERE game_id = $1",
    )
    .bind(g.id)
    .execute(&mut side)
    .await
    .expect("late piece");
    let holder: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut side)
        .await
        .expect("pid");
    // The room writes seq 2 again (it was told nothing was stored).
    let write = {
        let (store, c, id) = (h.store.clone(), c.clone(), g.id);
        tokio::spawn(async move {
            let piece = parchis_store::LogPiece {
                first_seq: 2,
                last_seq: 2,
                bytes: vec![0x22],
            };
            let append = parchis_store::RoomWrite::AppendLog {
                game_id: id,
                after_seq: 1,
                piece,
            };
            store.write_room(&c, None, append).await
        })
    };
    let mut watch = PgConnection::connect(&url).await.expect("watch connection");
    tokio::time::timeout(HANG_GUARD, async {
        while !waits_for(&mut watch, holder).await {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the append waits for the late write's row");
    side.execute("COMMIT").await.expect("the late write lands");
    let answer = tokio::time::timeout(HANG_GUARD, write)
        .await
        .expect("the append ends")
        .expect("task");
    assert!(
        matches!(answer, Err(StoreError::DuplicateSeq { seq: 2, .. })),
        "{answer:?}"
    );
    let stored = h
        .store
        .get_game_log(g.id)
        .await
        .expect("read")
        .expect("game");
    let log = stored.log.expect("a packed log");
    assert_eq!((log.bytes, log.last_seq), (vec![1, 2], 2), "seq 2 once");
    h.finish().await;
}
