//! Test harness: one store per test, on SQLite (always), PostgreSQL (when `DATABASE_URL` is
//! set) or memory.
//!
//! Each PostgreSQL test gets its own freshly created schema (selected with
//! `options[search_path]=…` in the URL), so tests neither see each other's rows nor rows left
//! by earlier runs, and can assert exact results. The schema is dropped when a test passes.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use parchis_store::{
    open_store, EventRecord, GameRecord, RoomRecord, RoomStatus, SeatRecord, Store,
};
use serde_json::json;
use sqlx::Connection;
use tempfile::TempDir;
use uuid::Uuid;

/// Which backend a [`Harness`] runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Memory,
    Sqlite,
    Postgres,
}

/// A store under test plus what is needed to reopen and clean it up.
pub struct Harness {
    pub kind: Kind,
    pub store: Arc<dyn Store>,
    /// URL the store was opened with (`None` for memory).
    pub url: Option<String>,
    /// Temp dir holding the SQLite file; removed on drop.
    pub dir: TempDir,
    /// `(admin URL, schema)` for PostgreSQL.
    pg: Option<(String, String)>,
}

/// The PostgreSQL URL from `DATABASE_URL`. When it is missing: in CI (`CI` set) the test
/// fails, since CI has PostgreSQL; elsewhere the skip is written straight to the process's
/// stderr (not the captured test output), so `cargo test` shows it.
pub fn database_url(test: &str) -> Option<String> {
    match std::env::var("DATABASE_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{test}: CI is set but DATABASE_URL is missing: PostgreSQL tests must run in CI")
        }
        _ => {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: DATABASE_URL is not set (PostgreSQL test not run)"
            );
            None
        }
    }
}

/// Routes the store's `tracing` output to the test's captured output; `RUST_LOG` filters it.
pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

/// Instantiates every case (an `async fn(&Harness)` in the test crate's `cases` module)
/// once per named backend (`sqlite`, `postgres`, `memory`), each in a module of that name:
/// `backend_tests!([sqlite, memory] [case_a, case_b]);`. A PostgreSQL case without
/// `DATABASE_URL` is skipped as [`database_url`] says.
#[allow(unused_macros)]
macro_rules! backend_tests {
    ([$($backend:ident),* $(,)?] $cases:tt) => {
        $( backend_tests!(@one $backend $cases); )*
    };
    (@one $backend:ident [$($case:ident),* $(,)?]) => {
        mod $backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let backend = stringify!($backend);
                    let Some(h) = crate::Harness::open(backend, stringify!($case)).await else {
                        return;
                    };
                    crate::cases::$case(&h).await;
                    h.finish().await;
                }
            )*
        }
    };
}

impl Harness {
    /// The harness of the backend named `backend` for test `test`; `None` (after saying
    /// why) for PostgreSQL without `DATABASE_URL`.
    pub async fn open(backend: &str, test: &str) -> Option<Harness> {
        match backend {
            "sqlite" => Some(Harness::sqlite().await),
            "postgres" => Harness::postgres(test).await,
            "memory" => Some(Harness::memory().await),
            other => panic!("no backend {other:?}"),
        }
    }

    pub async fn memory() -> Harness {
        init_tracing();
        Harness {
            kind: Kind::Memory,
            store: Arc::new(parchis_store::MemoryStore::new()),
            url: None,
            dir: tempfile::tempdir().expect("temp dir"),
            pg: None,
        }
    }

    pub async fn sqlite() -> Harness {
        init_tracing();
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("store.db");
        let url = format!("sqlite://{}", path.display());
        let store = open_store(Some(&url), dir.path())
            .await
            .expect("open sqlite store");
        Harness {
            kind: Kind::Sqlite,
            store,
            url: Some(url),
            dir,
            pg: None,
        }
    }

    /// `None` (after printing why) when `DATABASE_URL` is not set.
    pub async fn postgres(test: &str) -> Option<Harness> {
        init_tracing();
        let admin_url = database_url(&format!("postgres::{test}"))?;
        let schema = create_pg_schema(&admin_url).await;
        let sep = if admin_url.contains('?') { '&' } else { '?' };
        let url = format!("{admin_url}{sep}options[search_path]={schema}");
        let store = open_store(Some(&url), std::path::Path::new("unused"))
            .await
            .expect("open postgres store");
        Some(Harness {
            kind: Kind::Postgres,
            store,
            url: Some(url),
            dir: tempfile::tempdir().expect("temp dir"),
            pg: Some((admin_url, schema)),
        })
    }

    /// Opens a second, independent store on the same database (`None` for memory).
    pub async fn reopen(&self) -> Option<Arc<dyn Store>> {
        let url = self.url.as_deref()?;
        Some(
            open_store(Some(url), self.dir.path())
                .await
                .expect("reopen store"),
        )
    }

    /// Closes the store and drops the PostgreSQL schema.
    pub async fn finish(self) {
        self.store.close().await;
        if let Some((admin_url, schema)) = &self.pg {
            drop_pg_schema(admin_url, schema).await;
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }
}

/// Creates a fresh, randomly named schema and returns its name.
pub async fn create_pg_schema(admin_url: &str) -> String {
    let schema = format!("t_{}", Uuid::new_v4().simple());
    let mut admin = sqlx::PgConnection::connect(admin_url)
        .await
        .expect("connect to DATABASE_URL");
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&mut admin)
        .await
        .expect("create test schema");
    admin.close().await.expect("close admin connection");
    schema
}

/// Drops a schema made by [`create_pg_schema`] and everything in it.
pub async fn drop_pg_schema(admin_url: &str, schema: &str) {
    let mut admin = sqlx::PgConnection::connect(admin_url)
        .await
        .expect("connect to DATABASE_URL");
    sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
        .execute(&mut admin)
        .await
        .expect("drop test schema");
    admin.close().await.expect("close admin connection");
}

/// Current unix time in ms.
pub fn now_ms() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970");
    i64::try_from(since.as_millis()).expect("time fits i64")
}

/// A random 8-character room code.
pub fn code() -> String {
    Uuid::new_v4().simple().to_string()[..8].to_uppercase()
}

pub fn room(code: &str, status: RoomStatus, created_at_ms: i64) -> RoomRecord {
    RoomRecord {
        code: code.to_owned(),
        settings: json!({"players": 4, "preset": "classic", "private": false, "name": "Mesa ñ"}),
        status,
        created_at_ms,
        started_at_ms: (status != RoomStatus::Open).then_some(created_at_ms + 10),
        finished_at_ms: (status == RoomStatus::Finished).then_some(created_at_ms + 20),
        updated_at_ms: created_at_ms,
    }
}

pub fn seat(code: &str, colour: &str, name: &str, creator: bool, joined_at_ms: i64) -> SeatRecord {
    SeatRecord {
        room_code: code.to_owned(),
        colour: colour.to_owned(),
        display_name: name.to_owned(),
        token_hash: parchis_store::hash_token(&format!("token-{code}-{colour}-{name}")),
        is_creator: creator,
        joined_at_ms,
        bot: None,
        account_id: None,
    }
}

pub fn game(code: &str, created_at_ms: i64) -> GameRecord {
    GameRecord {
        id: Uuid::new_v4(),
        room_code: code.to_owned(),
        preset: "classic".to_owned(),
        rules: json!({"safe_squares": [5, 12, 17], "bonus_on_capture": 20, "double_six_penalty": true}),
        rules_hash: "r1".to_owned(),
        created_at_ms,
        finished_at_ms: None,
        result: None,
        reason: None,
        deadline_ms: None,
        dice: Some(json!({"scheme": "parchis-fair-dice-v1", "server_seed": "00ff"})),
    }
}

/// An event whose payload records `tag` and `seq`, so tests can check what came back.
pub fn ev(seq: i64, tag: &str) -> EventRecord {
    EventRecord {
        seq,
        event: json!({"type": "rolled", "tag": tag, "seq": seq, "dice": [seq % 6 + 1, 3]}),
        created_at_ms: 1_700_000_000_000 + seq,
    }
}

pub fn seqs(events: &[EventRecord]) -> Vec<i64> {
    events.iter().map(|e| e.seq).collect()
}
