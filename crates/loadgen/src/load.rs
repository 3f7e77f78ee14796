//! The phases of one load process: setup, idle sample, starts, warm-up, measured window,
//! drain (module docs of `main.rs`). Alone, a process runs them by itself; as a child of
//! `--processes` it tells its parent when each phase is done and waits for the go-ahead,
//! so every child's window is the same.

use crate::cli::{LoadArgs, Node, Shard};
use crate::ctx::Ctx;
use crate::play::{room_task, DRAIN};
use crate::procfs::{cpu_secs, Probe};
use crate::report::Part;
use crate::stats::Stats;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader, Lines, Stdin};
use tokio::sync::{watch, Semaphore};
use tokio::time::{sleep_until, timeout, Instant};

/// How a process moves between phases.
pub enum Phases {
    /// By itself.
    Alone,
    /// As a child of `--processes`: each phase's end is a line on stdout (`READY n`,
    /// `STARTED n`), and the next phase waits for the parent's line on stdin (`GO`,
    /// `WINDOW`). The mergeable report is the last line, `PART {json}`.
    Child(Lines<BufReader<Stdin>>),
}

/// A line of the child protocol on stdout.
pub fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

impl Phases {
    /// The child's stdin protocol.
    pub fn child() -> Phases {
        Phases::Child(BufReader::new(tokio::io::stdin()).lines())
    }

    /// Tells the parent `done` and waits for its `next` (at once when alone).
    async fn step(&mut self, done: &str, next: &str) -> Result<(), String> {
        let Phases::Child(lines) = self else {
            return Ok(());
        };
        say(done);
        match lines.next_line().await {
            Ok(Some(l)) if l.trim() == next => Ok(()),
            Ok(Some(l)) => Err(format!("parent said {l:?}, expected {next}")),
            Ok(None) => Err(format!("parent closed stdin before {next}")),
            Err(e) => Err(format!("stdin: {e}")),
        }
    }
}

/// Runs this process's share of the rooms; `probe` samples the servers (alone only).
// Over 80 lines: the phases in order, each a few lines around a helper, and the report part built from their figures.
pub async fn run(
    args: LoadArgs,
    nodes: Vec<Node>,
    shard: Shard,
    mut phases: Phases,
    mut probe: Option<Probe>,
) -> Result<(Part, Option<Probe>), String> {
    let (go_tx, go_rx) = watch::channel(false);
    let (end_tx, end_rx) = watch::channel(None);
    let ctx = Arc::new(Ctx::new(args.clone(), nodes, go_rx, end_rx));
    let stats = &ctx.stats;
    let setup_started = Instant::now();
    let sem = Arc::new(Semaphore::new(args.setup_concurrency.max(1)));
    let mine: Vec<usize> = (0..args.rooms).filter(|r| shard.owns(*r)).collect();
    let mut tasks = Vec::with_capacity(mine.len());
    for &room in &mine {
        tasks.push(tokio::spawn(room_task(ctx.clone(), room, sem.clone())));
    }
    // Setup phase: wait until every room is ready or failed, or the timeout.
    let setup_deadline = setup_started + Duration::from_secs(args.setup_timeout_secs);
    wait_setup(stats, mine.len(), setup_deadline).await;
    let setup_secs = setup_started.elapsed().as_secs_f64();
    let rooms_ready = Stats::get(&stats.rooms_ready);
    let idle_connections = ctx.net.open();
    if let Some(p) = probe.as_mut() {
        // Let the server settle, then sample its memory with every connection idle.
        tokio::time::sleep(Duration::from_secs(1)).await;
        p.idle();
    }
    phases.step(&format!("READY {rooms_ready}"), "GO").await?;
    // Play phase: every game starts (within one think time), then the warm-up, then the
    // measured window. The window is fixed only once every game has started, so the burst
    // of `start`s (each a game created in the store) never falls into it.
    let go = Instant::now();
    let _ = go_tx.send(true);
    let starts_deadline = go + Duration::from_secs(args.setup_timeout_secs);
    wait_starts(stats, rooms_ready, starts_deadline).await;
    let starts_secs = go.elapsed().as_secs_f64();
    let games_started = Stats::get(&stats.games_started);
    phases
        .step(&format!("STARTED {games_started}"), "WINDOW")
        .await?;
    let start = Instant::now() + Duration::from_secs(args.warmup_secs);
    let end = start + Duration::from_secs(args.duration_secs);
    let _ = end_tx.send(Some(end));
    sleep_until(start).await;
    if let Some(p) = probe.as_mut() {
        p.window_start();
    }
    let own_cpu_start = cpu_secs(std::process::id());
    let (open_at_end, open_min) = sample_window(&ctx, end, probe.as_mut()).await;
    sleep_until(end).await;
    let own_cpu_end = cpu_secs(std::process::id());
    if let Some(p) = probe.as_mut() {
        p.window_end();
    }
    if let (Phases::Alone, Some(dir)) = (&phases, &args.metrics_dir) {
        crate::scrape::save(&args.urls, dir).await;
    }
    let measured_secs = (end - start).as_secs_f64();
    // Commands sent in the window are answered during the drain; count them after it.
    sleep_until(end + DRAIN).await;
    let actions = Stats::get(&stats.actions);
    let sent = Stats::get(&stats.sent);
    // Wind down: every client stops at `end`; give them a few seconds to close.
    let _ = timeout(Duration::from_secs(20), async {
        for t in tasks {
            let _ = t.await;
        }
    })
    .await;
    let latency = stats
        .latency
        .lock()
        .map(|l| l.clone())
        .map_err(|_| "latency histograms poisoned".to_string())?;
    let part = Part {
        rooms: mine.len() as u64,
        rooms_ready,
        setup_secs,
        games_started,
        starts_failed: Stats::get(&stats.starts_failed),
        starts_secs,
        measured_secs,
        actions,
        sent,
        games_finished: Stats::get(&stats.games_finished),
        errors: stats.errors(),
        idle_connections,
        open_at_end,
        open_min,
        open_peak: ctx.net.peak(),
        loadgen_cpu_secs: own_cpu_start.zip(own_cpu_end).map(|(a, b)| b - a),
        create_retries: ctx.net.create_retries(),
        latency,
    };
    Ok((part, probe))
}

/// Setup phase: waits until each of the `rooms` is ready or failed, or `deadline`.
async fn wait_setup(stats: &Stats, rooms: usize, deadline: Instant) {
    loop {
        let done = Stats::get(&stats.rooms_ready) + Stats::get(&stats.setups_failed);
        if done as usize >= rooms || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Starts phase: waits until each of the `rooms_ready` games has started or will not.
/// Gives up at `deadline` (the report's `games_started` then falls short of
/// `rooms_ready`) and opens the window all the same.
async fn wait_starts(stats: &Stats, rooms_ready: u64, deadline: Instant) {
    let settled = || Stats::get(&stats.games_started) + Stats::get(&stats.starts_failed);
    while settled() < rooms_ready && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The measured window until just before `end`: the open sockets every 500 ms and the
/// servers' samples (`probe`). Returns the sockets open at the last sample (taken while
/// every client is still playing) and the fewest seen.
async fn sample_window(ctx: &Ctx, end: Instant, mut probe: Option<&mut Probe>) -> (i64, i64) {
    let mut open_at_end = ctx.net.open();
    let mut open_min = open_at_end;
    loop {
        let next = Instant::now() + Duration::from_millis(500);
        if next + Duration::from_millis(100) >= end {
            break;
        }
        sleep_until(next).await;
        open_at_end = ctx.net.open();
        open_min = open_min.min(open_at_end);
        if let Some(p) = probe.as_mut() {
            p.tick();
        }
    }
    (open_at_end, open_min)
}
