//! `open_store` picks the backend from the URL and creates the default data directory.

mod common;

use common::{code, room};
use parchis_store::{open_store, RoomStatus, StoreError, DEFAULT_DB_FILE};

#[tokio::test]
async fn default_is_sqlite_file_in_new_data_dir() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let data_dir = tmp.path().join("nested").join("data");
    assert!(!data_dir.exists());

    let store = open_store(None, &data_dir)
        .await
        .expect("open default store");
    let db = data_dir.join(DEFAULT_DB_FILE);
    assert!(db.is_file(), "{} should exist", db.display());

    let c = code();
    store
        .create_room(&room(&c, RoomStatus::Open, 7))
        .await
        .unwrap();
    store.close().await;

    // Opening again finds the room (migrations are not re-applied destructively).
    let store = open_store(None, &data_dir)
        .await
        .expect("reopen default store");
    let snap = store.get_room(&c).await.unwrap().expect("room persisted");
    assert_eq!(snap.room, room(&c, RoomStatus::Open, 7));
    store.close().await;
}

#[tokio::test]
async fn default_store_uses_wal_journal() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let store = open_store(None, tmp.path()).await.expect("open");
    store.close().await;
    let url = format!("sqlite://{}", tmp.path().join(DEFAULT_DB_FILE).display());
    let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&url)
        .await
        .expect("connect");
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut conn)
        .await
        .expect("pragma");
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn sqlite_url_opens_that_file() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let path = tmp.path().join("custom.db");
    let url = format!("sqlite:{}", path.display());
    let store = open_store(Some(&url), &tmp.path().join("ignored"))
        .await
        .expect("open sqlite url");
    assert!(path.is_file());
    assert!(!tmp.path().join("ignored").exists());
    store.close().await;
}

#[tokio::test]
async fn sqlite_memory_url_works() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let store = open_store(Some("sqlite::memory:"), tmp.path())
        .await
        .expect("open in-memory sqlite");
    let c = code();
    store
        .create_room(&room(&c, RoomStatus::Open, 1))
        .await
        .unwrap();
    assert!(store.get_room(&c).await.unwrap().is_some());
    store.close().await;
}

#[tokio::test]
async fn unknown_scheme_is_rejected_without_leaking_password() {
    let tmp = tempfile::tempdir().expect("temp dir");
    match open_store(Some("mysql://user:secret@localhost/db"), tmp.path()).await {
        Err(StoreError::InvalidUrl(msg)) => {
            assert!(!msg.contains("secret"), "{msg}");
            assert!(msg.contains("mysql://"), "{msg}");
        }
        Err(e) => panic!("expected InvalidUrl, got {e}"),
        Ok(_) => panic!("expected InvalidUrl, got a store"),
    }
}

#[tokio::test]
async fn postgresql_scheme_opens_postgres() {
    let Some(url) = common::database_url("postgresql_scheme_opens_postgres") else {
        return;
    };
    // Same server, spelled with the long scheme; tables go to a schema of our own.
    let schema = common::create_pg_schema(&url).await;
    let long = url.replacen("postgres://", "postgresql://", 1);
    let sep = if long.contains('?') { '&' } else { '?' };
    let long = format!("{long}{sep}options[search_path]={schema}");
    assert!(long.starts_with("postgresql://"), "{long}");

    let tmp = tempfile::tempdir().expect("temp dir");
    let store = open_store(Some(&long), tmp.path())
        .await
        .expect("open postgres");
    let c = code();
    store
        .create_room(&room(&c, RoomStatus::Open, 3))
        .await
        .unwrap();
    assert_eq!(
        store.get_room(&c).await.unwrap().map(|s| s.room),
        Some(room(&c, RoomStatus::Open, 3))
    );
    store.close().await;
    // Nothing was written to the data dir.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    common::drop_pg_schema(&url, &schema).await;
}

/// Committed pages reach the database file without a commit checkpointing (the
/// background checkpointer copies them), and `close` folds the whole WAL in.
#[tokio::test]
async fn sqlite_checkpoints_in_the_background_and_empties_the_wal_on_close() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let store = open_store(None, tmp.path()).await.expect("open");
    let db = tmp.path().join(DEFAULT_DB_FILE);
    let wal = tmp.path().join(format!("{DEFAULT_DB_FILE}-wal"));
    let size = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    // Let the first checkpoint (of the migrations) land, then write enough new pages.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let before = size(&db);
    for i in 0..300 {
        store
            .create_room(&room(&code(), RoomStatus::Open, i))
            .await
            .unwrap();
    }
    assert!(size(&wal) > 0, "the writes went to the WAL");
    // Far below the automatic checkpoint threshold: only the checkpointer moves them.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while size(&db) <= before {
        assert!(
            std::time::Instant::now() < deadline,
            "database file still {before} bytes 10 s after the writes: no checkpoint ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    store.close().await;
    assert_eq!(
        size(&wal),
        0,
        "close truncates the WAL after checkpointing it"
    );
    let store = open_store(None, tmp.path()).await.expect("reopen");
    assert_eq!(store.load_unfinished().await.unwrap().len(), 300);
    store.close().await;
}
