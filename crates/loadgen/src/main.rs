//! `parchis-loadgen`: opens R rooms of four WebSocket clients against a running Parchís
//! server (or a cluster of nodes) on this machine, plays legal actions with a think time
//! for a bounded duration, and prints a JSON report: actions per second, action→event
//! latency percentiles (all, and split into clients whose socket is on the room's node
//! and relayed ones), errors, open connections, and the servers' resident memory and CPU
//! time when `--server-pid` is given (one per node, summed).
//!
//! ```sh
//! parchis-loadgen --url http://127.0.0.1:18080 --rooms 200 --think-ms 1000 \
//!     --duration-secs 30 --source-addrs 127.0.0.1,127.0.0.2 --server-pid $PID
//! # a cluster of three nodes, the sockets over two processes:
//! parchis-loadgen --url http://127.0.0.1:18081 --url http://127.0.0.1:18082 \
//!     --url http://127.0.0.1:18083 --rooms 7500 --processes 2 --server-pid $A,$B,$C
//! # failover: start 3 nodes, kill -9 a watched room's owner 20 times
//! parchis-loadgen failover --server-bin target/release/parchis-server --kills 20
//! ```
//!
//! With several `--url`s each room is created on a node drawn at random (seeded) and each
//! client's socket goes to a node drawn at random, so (N − 1)/N of the commands cross
//! nodes; a room's node is taken as its owner (docs/CLUSTER.md, "Placement").
//!
//! Phases: (1) *setup*: each room is created with `POST /api/rooms` and four clients
//! `join` it (at most `--setup-concurrency` rooms at a time); (2) *idle*: once every room
//! is ready the server's RSS is sampled (memory per idle connection); every socket is read
//! all along, so the server's pings are answered (`idle`); (3) *starts*: every creator
//! sends `start` at a uniformly random moment within one think time, so rooms do not act
//! in lockstep, or in room order at `--start-rate` games per second (players trickle in);
//! a refusal that a retry may mend (`room_unavailable`, `rate_limited`, `stale_seq`) is
//! sent again a second later (`start`); the generator waits until every game has started
//! (or will not: refused for good, its socket lost, `starts_failed` in the report; or
//! `--setup-timeout-secs` passed: `games_started` in the report says); (4)
//! *warm-up* (`--warmup-secs`, counted from the last start): the games reach their steady
//! state; (5) *measured play* (`--duration-secs`): each client answers its `your_turn` after a
//! think time drawn uniformly from `think_ms × [1 − jitter, 1 + jitter]` with `roll` or
//! a uniformly random entry of `legal`. A room whose game ends plays a new one (new room,
//! new connections). Only commands sent in the measured window are counted (actions,
//! latency); after it the clients send nothing more and stay connected one more second,
//! so the last answers arrive before every connection closes at once.
//!
//! Latency: from writing a `roll`/`play` frame to reading the first `event` frame with
//! a higher `seq` on the same connection (the event the command caused; events precede
//! the `ok`). Only 127.0.0.0/8 targets are accepted.
//!
//! Modules: `cli` (arguments), `client` (HTTP/WebSocket client), `rng` (seeded draws,
//! placement of rooms and clients on nodes), `play` (one room's games), `idle` (a set-up
//! room's sockets read until the play phase), `start` (when the creator starts and what
//! a refusal of it means, and the `req` numbers), `scrape` (`--metrics-dir`), `ctx` (what
//! the tasks of one process share), `load` (the phases of one process), `multi`
//! (`--processes`), `report` (mergeable parts, histograms, the JSON report), `procfs`
//! (server samples), `failover` (the subcommand).

mod cli;
mod client;
mod ctx;
mod failover;
mod idle;
mod load;
mod multi;
mod play;
mod procfs;
mod report;
mod rng;
mod scrape;
mod start;
mod stats;

use clap::Parser;
use cli::{Cli, Command, LoadArgs};
use load::Phases;
use procfs::Probe;
use std::process::ExitCode;

/// mimalloc, as the server (docs/BENCHMARKS.md, "Frames without rules, a lean load
/// generator, mimalloc").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("parchis-loadgen: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        Some(Command::Failover(f)) => rt.block_on(failover::main(f)),
        None => rt.block_on(load_main(cli.load)),
    }
}

/// A load run: alone, as a child of `--processes`, or as their parent.
async fn load_main(args: LoadArgs) -> ExitCode {
    let (nodes, shard) = match cli::check(&args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("parchis-loadgen: {e}");
            return ExitCode::from(2);
        }
    };
    let probe = Probe::new(&args.server_pids);
    let result = if args.child {
        load::run(args.clone(), nodes, shard, Phases::child(), None).await
    } else if args.processes > 1 {
        multi::run(&args, probe).await
    } else {
        load::run(args.clone(), nodes, shard, Phases::Alone, probe).await
    };
    let (part, probe) = match result {
        Ok(x) => x,
        Err(e) => {
            eprintln!("parchis-loadgen: {e}");
            return ExitCode::FAILURE;
        }
    };
    if args.child {
        return match serde_json::to_string(&part) {
            Ok(s) => {
                load::say(&format!("PART {s}"));
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("parchis-loadgen: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let report = report::render(&args, &part, args.processes, probe.as_ref());
    match serde_json::to_string_pretty(&report) {
        Ok(s) => println!("{s}"),
        Err(e) => {
            eprintln!("parchis-loadgen: {e}");
            return ExitCode::FAILURE;
        }
    }
    if part.rooms_ready == 0 {
        eprintln!(
            "parchis-loadgen: no room could be set up (is the server running at {}?); errors: {}",
            report["url"], report["errors"]
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
