//! Durable appends per second with many rooms writing at once.
//!
//! ```text
//! cargo run --release -p parchis-store --example append_bench -- [--secs 3] [--levels 1,10,50,200]
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/test cargo run --release ...   # adds PostgreSQL
//! ```
//!
//! For each concurrency level N, N rooms (each with one game) append one event at a time,
//! awaiting each append (so each counted append is committed and fsynced), for `--secs`
//! seconds. Reports appends/s and per-append latency. SQLite runs in a temp dir; PostgreSQL
//! runs in a fresh schema that is dropped afterwards.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parchis_store::{open_store, EventRecord, GameRecord, RoomRecord, RoomStatus, Store};
use serde_json::json;
use sqlx::Connection;
use uuid::Uuid;

struct Args {
    secs: f64,
    levels: Vec<usize>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        secs: 3.0,
        levels: vec![1, 10, 50, 200],
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--secs" => args.secs = value.parse().map_err(|e| format!("--secs: {e}"))?,
            "--levels" => {
                args.levels = value
                    .split(',')
                    .map(|v| v.trim().parse().map_err(|e| format!("--levels: {e}")))
                    .collect::<Result<_, _>>()?
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(args)
}

struct LevelResult {
    rooms: usize,
    appends: usize,
    elapsed: Duration,
    p50: Duration,
    p99: Duration,
}

// Over 80 lines: set up the rooms, run the appenders, measure: one benchmark level read top to bottom.
async fn run_level(store: &Arc<dyn Store>, rooms: usize, secs: f64) -> LevelResult {
    let mut games = Vec::with_capacity(rooms);
    for i in 0..rooms {
        let code = format!("B{}", &Uuid::new_v4().simple().to_string()[..10]);
        let room = RoomRecord {
            code: code.clone(),
            settings: json!({"players": 4}),
            status: RoomStatus::Playing,
            created_at_ms: i as i64,
            started_at_ms: Some(i as i64),
            finished_at_ms: None,
            updated_at_ms: i as i64,
        };
        store.create_room(&room).await.expect("create room");
        let game = GameRecord {
            id: Uuid::new_v4(),
            room_code: code,
            preset: "classic".into(),
            rules: json!({"preset": "classic"}),
            rules_hash: "bench".into(),
            created_at_ms: i as i64,
            finished_at_ms: None,
            result: None,
            reason: None,
            deadline_ms: None,
            dice: None,
        };
        store.create_game(&game).await.expect("create game");
        games.push(game.id);
    }

    let start = Arc::new(tokio::sync::Barrier::new(rooms + 1));
    let mut tasks = tokio::task::JoinSet::new();
    for game_id in games.iter().copied() {
        let store = Arc::clone(store);
        let start = Arc::clone(&start);
        tasks.spawn(async move {
            start.wait().await;
            let until = Instant::now() + Duration::from_secs_f64(secs);
            let mut latencies = Vec::new();
            let mut seq = 0;
            while Instant::now() < until {
                seq += 1;
                let event = EventRecord {
                    seq,
                    event: json!({"type": "moved", "piece": seq % 4, "from": 12, "to": 17}),
                    created_at_ms: seq,
                };
                let t = Instant::now();
                store
                    .append_events(game_id, vec![event])
                    .await
                    .expect("append");
                latencies.push(t.elapsed());
            }
            (game_id, latencies)
        });
    }
    start.wait().await;
    let began = Instant::now();
    let mut all = Vec::new();
    let mut per_game = Vec::new();
    while let Some(done) = tasks.join_next().await {
        let (game_id, latencies) = done.expect("bench task");
        per_game.push((game_id, latencies.len()));
        all.extend(latencies);
    }
    let elapsed = began.elapsed();

    // Every acknowledged append must be there.
    for (game_id, count) in per_game.iter().take(5) {
        let (_, events) = store.get_game(*game_id).await.expect("get").expect("game");
        assert_eq!(events.len(), *count, "lost appends in game {game_id}");
    }

    all.sort();
    let pick = |q: f64| all[((all.len() as f64 * q) as usize).min(all.len() - 1)];
    LevelResult {
        rooms,
        appends: all.len(),
        elapsed,
        p50: pick(0.50),
        p99: pick(0.99),
    }
}

async fn bench(name: &str, store: Arc<dyn Store>, args: &Args) {
    println!("\n{name}");
    println!("| concurrent rooms | durable appends/s | p50 latency | p99 latency |");
    println!("|---:|---:|---:|---:|");
    for &rooms in &args.levels {
        let r = run_level(&store, rooms, args.secs).await;
        println!(
            "| {} | {:.0} | {:.2} ms | {:.2} ms |",
            r.rooms,
            r.appends as f64 / r.elapsed.as_secs_f64(),
            r.p50.as_secs_f64() * 1e3,
            r.p99.as_secs_f64() * 1e3,
        );
    }
    store.close().await;
}

#[tokio::main]
async fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("append_bench: {e}");
            std::process::exit(2);
        }
    };
    println!(
        "append_bench: {} s per level, {} cores",
        args.secs,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite = open_store(None, dir.path()).await.expect("open sqlite");
    bench("SQLite (WAL, synchronous=FULL, temp dir)", sqlite, &args).await;

    match std::env::var("DATABASE_URL") {
        Ok(admin_url) => {
            let schema = format!("bench_{}", Uuid::new_v4().simple());
            let mut admin = sqlx::PgConnection::connect(&admin_url)
                .await
                .expect("connect to DATABASE_URL");
            sqlx::query(&format!("CREATE SCHEMA {schema}"))
                .execute(&mut admin)
                .await
                .expect("create schema");
            let settings: Vec<(String,)> = sqlx::query_as(
                "SELECT setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit') \
                 ORDER BY name",
            )
            .fetch_all(&mut admin)
            .await
            .expect("read settings");
            let sep = if admin_url.contains('?') { '&' } else { '?' };
            let url = format!("{admin_url}{sep}options[search_path]={schema}");
            let pg = open_store(Some(&url), dir.path())
                .await
                .expect("open postgres");
            let title = format!(
                "PostgreSQL (fsync={}, synchronous_commit={})",
                settings.first().map_or("?", |s| s.0.as_str()),
                settings.get(1).map_or("?", |s| s.0.as_str()),
            );
            bench(&title, pg, &args).await;
            sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
                .execute(&mut admin)
                .await
                .expect("drop schema");
        }
        Err(_) => println!("\nPostgreSQL skipped: DATABASE_URL is not set"),
    }
}
