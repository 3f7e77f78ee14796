//! The SQLite WAL is kept within its configured limit while writes never stop and a reader
//! keeps taking read transactions (issue 14: the WAL reached 177 MB with a 64 MiB limit).

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{code, game, room};
use parchis_store::{EventRecord, RoomStatus, SqliteOptions, SqliteStore, Store};
use serde_json::json;
use sqlx::Connection;

const LIMIT: u64 = 1024 * 1024;
/// Concurrent writers: enough that the writer task always has a group to commit.
const WRITERS: usize = 8;
/// How long the writes go on.
const WRITE_PHASE: Duration = Duration::from_secs(6);

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// A batch of 10 events of about 2 KiB each, continuing `*seq`.
fn batch(seq: &mut i64) -> Vec<EventRecord> {
    (0..10)
        .map(|_| {
            *seq += 1;
            EventRecord {
                seq: *seq,
                event: json!({"type": "rolled", "pad": "x".repeat(2000), "seq": *seq}),
                created_at_ms: *seq,
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
// Over 80 lines: one scenario, its steps and their checks in order (a test reads top to bottom).
async fn sqlite_wal_is_truncated_back_under_its_limit_despite_writes_and_readers() {
    common::init_tracing();
    let tmp = tempfile::tempdir().expect("temp dir");
    let db = tmp.path().join("wal.db");
    let wal = tmp.path().join("wal.db-wal");
    let options = SqliteOptions {
        wal_limit_bytes: LIMIT,
        checkpoint_interval: Duration::from_millis(100),
        ..SqliteOptions::default()
    };
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open_with(&db, options).await.expect("open"));

    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    for _ in 0..WRITERS {
        let (store, stop, written) = (store.clone(), stop.clone(), written.clone());
        writers.push(tokio::spawn(async move {
            let c = code();
            store
                .create_room(&room(&c, RoomStatus::Playing, 1))
                .await
                .expect("room");
            let g = game(&c, 1);
            store.create_game(&g).await.expect("game");
            let mut seq = 0;
            while !stop.load(Ordering::Relaxed) {
                store
                    .append_events(g.id, batch(&mut seq))
                    .await
                    .expect("append");
                written.fetch_add(10 * 2000, Ordering::Relaxed);
            }
        }));
    }
    // A reader on its own connection that holds a read transaction (a WAL snapshot) for
    // 150 ms out of every 200 ms: without help the WAL can never start over.
    let reader_stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let stop = reader_stop.clone();
        let url = format!("sqlite://{}", db.display());
        tokio::spawn(async move {
            let mut conn = sqlx::SqliteConnection::connect(&url).await.expect("reader");
            let mut transactions = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let mut tx = conn.begin().await.expect("begin");
                let _: i64 = sqlx::query_scalar("SELECT count(*) FROM game_events")
                    .fetch_one(&mut *tx)
                    .await
                    .expect("read");
                tokio::time::sleep(Duration::from_millis(150)).await;
                tx.commit().await.expect("end read");
                transactions += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            transactions
        })
    };

    // While the writes go on, the WAL goes over the limit and is brought back under it.
    let started = Instant::now();
    let (mut largest, mut over, mut shrunk) = (0, false, 0u32);
    while started.elapsed() < WRITE_PHASE {
        let now = size(&wal);
        largest = largest.max(now);
        if now > LIMIT {
            over = true;
        } else if over {
            over = false;
            shrunk += 1;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // Only the writes stop; the reader goes on.
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.expect("writer");
    }
    let total = written.load(Ordering::Relaxed);
    assert!(
        total > 8 * LIMIT,
        "only {total} bytes were written in {WRITE_PHASE:?}: too few to test the limit"
    );
    assert!(
        largest > LIMIT,
        "the WAL never went over {LIMIT} bytes ({largest} at most): the test wrote too little"
    );
    assert!(
        shrunk > 0,
        "the WAL went over {LIMIT} bytes ({largest} at most, {total} written) and never came back under it while writes went on"
    );
    // Once the writes stop, the WAL ends under the limit (with no further commit, SQLite
    // would never start it over by itself).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = size(&wal);
        if now <= LIMIT {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the WAL is still {now} bytes 10 s after the writes stopped (limit {LIMIT})"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    reader_stop.store(true, Ordering::Relaxed);
    let transactions = reader.await.expect("reader");
    assert!(
        transactions > 5,
        "the reader took only {transactions} read transactions"
    );
    store.close().await;
    let reopened = SqliteStore::open_with(&db, options).await.expect("reopen");
    let games = reopened.load_unfinished().await.expect("load");
    assert_eq!(games.len(), WRITERS, "every room is still there");
    reopened.close().await;
}
