//! How small the finished games of a store are once packed as their inputs (issue 28,
//! `docs/STORAGE.md`), and what a restore's decode and replay cost: a measuring tool, not
//! a test.
//!
//! ```text
//! cargo run --release -p parchis-room --example packed_games -- DATA_DIR
//! DATABASE_URL=postgres://… cargo run --release -p parchis-room --example packed_games -- .
//! ```
//!
//! For every finished game of the store (SQLite in `DATA_DIR`, or PostgreSQL with
//! `DATABASE_URL`): its event rows, the bytes of their JSON, the bytes of its packed log
//! (checked to unpack to the very same events). Then, for the game with the most throws,
//! the CPU time of a restore's pure part, averaged over many runs: reading the JSON rows
//! and replaying (today), and unpacking and replaying (packed), per throw and for 300
//! throws. With `PACKED_OUT=DIR`, each game's packed log is also written to
//! `DIR/<game id>.bin` (to project the store's size with the logs in the games rows,
//! `docs/BENCHMARKS.md`).

use parchis_protocol::RoomEvent;
use parchis_room_core::{persist, replay, throws};
use parchis_store::{EventRecord, GameQuery};
use std::path::PathBuf;
use std::time::Instant;

/// Runs of each restore measured.
const RUNS: u32 = 300;

/// CPU time of this thread (ns): the measure of a restore's cost, whatever else runs on
/// the machine (wall time would count other processes' turns on a shared core).
fn thread_cpu_ns() -> u128 {
    // /proc/thread-self/stat fields 14 and 15: user and system time in clock ticks
    // (100 per second on Linux) are too coarse; schedstat's first field is ns on CPU.
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn throws_in(records: &[EventRecord]) -> usize {
    records
        .iter()
        .filter(|r| r.event.get("event").and_then(|e| e.get("type")) == Some(&"dice_rolled".into()))
        .count()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    let url = std::env::var("DATABASE_URL").ok();
    let store = parchis_store::open_store(url.as_deref(), &dir).await?;
    let games = store
        .find_games(&GameQuery {
            finished: Some(true),
            limit: 10_000,
            ..GameQuery::default()
        })
        .await?;
    let (mut n, mut rows, mut json, mut packed, mut four) = (0usize, 0, 0, 0, 0);
    let mut longest: Option<Vec<EventRecord>> = None;
    let out_dir = std::env::var("PACKED_OUT").ok().map(PathBuf::from);
    for g in &games {
        let Some(stored) = store.get_game_log(g.id).await? else {
            continue;
        };
        // Either format (issue 28: a new game is stored packed); its rows as the JSON
        // rows of the format before, to compare sizes with.
        let log = persist::game_events(&stored)?;
        let records = persist::records_of(&log);
        let bytes = throws::encode(&log);
        let back = throws::decode(&bytes)?;
        assert_eq!(
            back.events, log,
            "game {}: the packed log unpacks to its events",
            g.id
        );
        if let Some(dir) = &out_dir {
            std::fs::write(dir.join(format!("{}.bin", g.id)), &bytes)?;
        }
        let seats = log.iter().find_map(|e| match &e.event {
            RoomEvent::GameStarted { position, .. } => Some(position.players.len()),
            _ => None,
        });
        if seats != Some(4) {
            continue;
        }
        four += 1;
        n += 1;
        rows += records.len();
        json += records
            .iter()
            .map(|r| r.event.to_string().len())
            .sum::<usize>();
        packed += bytes.len();
        println!(
            "game {}: {} rows, {} throws, {} JSON bytes, {} packed bytes, every action packed: {}",
            g.id,
            records.len(),
            throws_in(&records),
            records
                .iter()
                .map(|r| r.event.to_string().len())
                .sum::<usize>(),
            bytes.len(),
            back.encoder.follows_game()
        );
        if longest
            .as_ref()
            .is_none_or(|l| throws_in(l) < throws_in(&records))
        {
            longest = Some(records);
        }
    }
    if n == 0 {
        println!("no finished four-player game in the store");
        return Ok(());
    }
    println!(
        "{four} finished four-player games: {} rows, {} JSON bytes, {} packed bytes per game",
        rows / n,
        json / n,
        packed / n
    );
    let Some(records) = longest else {
        return Ok(());
    };
    let t = throws_in(&records);
    let log = persist::events_from(&records)?;
    let bytes = throws::encode(&log);
    let start = thread_cpu_ns();
    let t0 = Instant::now();
    for _ in 0..RUNS {
        let log = persist::events_from(&records)?;
        std::hint::black_box(replay(&log)?);
    }
    let (json_ns, json_wall) = (thread_cpu_ns() - start, t0.elapsed());
    let start = thread_cpu_ns();
    for _ in 0..RUNS {
        let log = throws::decode(&bytes)?.events;
        std::hint::black_box(replay(&log)?);
    }
    let packed_ns = thread_cpu_ns() - start;
    let per = |ns: u128| ns as f64 / f64::from(RUNS) / 1000.0;
    println!(
        "restore of the longest game ({t} throws, {} events), CPU per restore: \
         JSON rows + replay {:.0} µs ({:.2} µs a throw, {:.0} µs for 300 throws; wall {:.0} µs); \
         packed + replay {:.0} µs ({:.2} µs a throw, {:.0} µs for 300 throws)",
        records.len(),
        per(json_ns),
        per(json_ns) / t as f64,
        per(json_ns) / t as f64 * 300.0,
        json_wall.as_secs_f64() * 1e6 / f64::from(RUNS),
        per(packed_ns),
        per(packed_ns) / t as f64,
        per(packed_ns) / t as f64 * 300.0,
    );
    Ok(())
}
