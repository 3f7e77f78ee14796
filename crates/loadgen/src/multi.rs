//! `--processes N`: the run split over N children (this binary again, `--shard i/N
//! --child`), so the sockets of all of them exceed one process's open-file limit.
//!
//! Protocol (one line each, children's stdout → parent, parent → children's stdin):
//! every child says `READY n` when its rooms are set up; the parent samples the servers'
//! idle memory and says `GO` to all; each says `STARTED n` when its games have started;
//! the parent says `WINDOW` to all at once, and each child and the parent place the same
//! measured window (warm-up then duration from that moment). Each child ends with
//! `PART {json}` (counters and histograms, [`Part`]); the parent adds them up. A child's
//! stderr is the parent's.

use crate::cli::{LoadArgs, Shard};
use crate::procfs::Probe;
use crate::report::Part;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use tokio::time::{sleep_until, timeout, Instant};

/// The command line of child `shard` of a run with `args`: every setting of the run,
/// without the parent's own (`--processes`, `--server-pid`).
pub fn child_args(args: &LoadArgs, shard: Shard) -> Vec<String> {
    let mut v = Vec::new();
    for url in &args.urls {
        v.extend(["--url".to_string(), url.clone()]);
    }
    let sources: Vec<String> = args.source_addrs.iter().map(|a| a.to_string()).collect();
    for (flag, value) in [
        ("--rooms", args.rooms.to_string()),
        ("--think-ms", args.think_ms.to_string()),
        ("--think-jitter", args.think_jitter.to_string()),
        ("--warmup-secs", args.warmup_secs.to_string()),
        ("--duration-secs", args.duration_secs.to_string()),
        ("--setup-timeout-secs", args.setup_timeout_secs.to_string()),
        ("--setup-concurrency", args.setup_concurrency.to_string()),
        ("--start-rate", args.start_rate.to_string()),
        ("--source-addrs", sources.join(",")),
        ("--seed", args.seed.to_string()),
        ("--turn-clock-secs", args.turn_clock_secs.to_string()),
        ("--shard", format!("{}/{}", shard.index, shard.count)),
    ] {
        v.extend([flag.to_string(), value]);
    }
    v.push("--child".into());
    v
}

/// What a child said.
enum Said {
    Line(usize, String),
    Closed(usize),
}

/// One running child.
struct Kid {
    child: Child,
    stdin: ChildStdin,
}

/// Waits until every child has said a line starting with `word`; returns the parts
/// (`PART` lines) when `word` is `PART`.
async fn gather(
    rx: &mut mpsc::Receiver<Said>,
    n: usize,
    word: &str,
    deadline: Instant,
) -> Result<Vec<String>, String> {
    let mut got: Vec<Option<String>> = vec![None; n];
    while got.iter().any(Option::is_none) {
        let said = timeout(deadline - Instant::now(), rx.recv())
            .await
            .map_err(|_| format!("children did not all say {word} in time"))?;
        match said {
            Some(Said::Line(i, line)) => {
                if let Some(rest) = line.strip_prefix(word) {
                    if let Some(slot) = got.get_mut(i) {
                        *slot = Some(rest.trim().to_string());
                    }
                } else {
                    return Err(format!("child {i} said {line:?}, expected {word}"));
                }
            }
            // A child that already said its line may exit (after `PART`, it does).
            Some(Said::Closed(i)) if got.get(i).is_some_and(Option::is_some) => {}
            Some(Said::Closed(i)) => return Err(format!("child {i} exited before {word}")),
            None => return Err("every child's output closed".into()),
        }
    }
    Ok(got.into_iter().flatten().collect())
}

/// Tells every child `line`.
async fn tell(kids: &mut [Kid], line: &str) -> Result<(), String> {
    for (i, k) in kids.iter_mut().enumerate() {
        k.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .map_err(|e| format!("child {i}: {e}"))?;
        k.stdin
            .flush()
            .await
            .map_err(|e| format!("child {i}: {e}"))?;
    }
    Ok(())
}

/// Runs the children and merges their parts; `probe` samples the servers.
// Over 80 lines: the parent's side of the child protocol, one phase after the other, in order.
pub async fn run(
    args: &LoadArgs,
    mut probe: Option<Probe>,
) -> Result<(Part, Option<Probe>), String> {
    let n = args.processes as usize;
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let (tx, mut rx) = mpsc::channel(4 * n + 4);
    let mut kids = Vec::with_capacity(n);
    for i in 0..n {
        let shard = Shard {
            index: i as u32,
            count: n as u32,
        };
        let mut child = Command::new(&exe)
            .args(child_args(args, shard))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("spawn child {i}: {e}"))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(format!("child {i}: no pipes"));
        };
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if tx.send(Said::Line(i, line)).await.is_err() {
                    return;
                }
            }
            let _ = tx.send(Said::Closed(i)).await;
        });
        kids.push(Kid { child, stdin });
    }
    drop(tx);
    // Each phase may take up to the setup timeout (children give up by then).
    let phase = || Instant::now() + Duration::from_secs(args.setup_timeout_secs + 30);
    gather(&mut rx, n, "READY", phase()).await?;
    if let Some(p) = probe.as_mut() {
        tokio::time::sleep(Duration::from_secs(1)).await;
        p.idle();
    }
    tell(&mut kids, "GO").await?;
    gather(&mut rx, n, "STARTED", phase()).await?;
    tell(&mut kids, "WINDOW").await?;
    let start = Instant::now() + Duration::from_secs(args.warmup_secs);
    let end = start + Duration::from_secs(args.duration_secs);
    sleep_until(start).await;
    if let Some(p) = probe.as_mut() {
        p.window_start();
        while Instant::now() + Duration::from_millis(600) < end {
            tokio::time::sleep(Duration::from_millis(500)).await;
            p.tick();
        }
        sleep_until(end).await;
        p.window_end();
    }
    sleep_until(end).await;
    if let Some(dir) = &args.metrics_dir {
        crate::scrape::save(&args.urls, dir).await;
    }
    // Drain (1 s) and wind-down (≤ 20 s) happen in the children.
    let parts = gather(&mut rx, n, "PART", end + Duration::from_secs(60)).await?;
    let mut merged: Option<Part> = None;
    for (i, text) in parts.iter().enumerate() {
        let part: Part =
            serde_json::from_str(text).map_err(|e| format!("child {i}'s part: {e}"))?;
        match merged.as_mut() {
            Some(m) => m.merge(&part)?,
            None => merged = Some(part),
        }
    }
    for (i, k) in kids.iter_mut().enumerate() {
        match timeout(Duration::from_secs(10), k.child.wait()).await {
            Ok(Ok(status)) if status.success() => {}
            Ok(Ok(status)) => eprintln!("parchis-loadgen: child {i} exited with {status}"),
            _ => eprintln!("parchis-loadgen: child {i} did not exit"),
        }
    }
    Ok((merged.unwrap_or_default(), probe))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    #[test]
    fn a_childs_command_line_is_the_runs_settings_and_its_shard() {
        let parent = Cli::try_parse_from([
            "lg",
            "--url",
            "http://127.0.0.1:8081",
            "--url",
            "http://127.0.0.1:8082",
            "--rooms",
            "7500",
            "--think-ms",
            "900",
            "--think-jitter",
            "0.25",
            "--warmup-secs",
            "3",
            "--duration-secs",
            "40",
            "--source-addrs",
            "127.0.0.1,127.0.0.2",
            "--seed",
            "9",
            "--start-rate",
            "125.5",
            "--metrics-dir",
            "/tmp/m",
            "--processes",
            "3",
            "--server-pid",
            "100,101",
        ])
        .unwrap()
        .load;
        let shard = Shard { index: 2, count: 3 };
        let argv = child_args(&parent, shard);
        let child = Cli::try_parse_from(std::iter::once("lg".to_string()).chain(argv))
            .unwrap()
            .load;
        assert_eq!(child.urls, parent.urls);
        assert_eq!(
            child.rooms, 7500,
            "the whole run's rooms: the shard picks its own"
        );
        assert_eq!(child.think_ms, 900);
        assert_eq!(child.think_jitter, 0.25);
        assert_eq!((child.warmup_secs, child.duration_secs), (3, 40));
        assert_eq!(child.source_addrs, parent.source_addrs);
        assert_eq!(child.seed, 9);
        assert_eq!(
            child.start_rate, 125.5,
            "every child trickles at the run's rate"
        );
        assert_eq!(
            child.metrics_dir, None,
            "the parent saves the nodes' metrics"
        );
        assert_eq!(child.setup_concurrency, parent.setup_concurrency);
        assert_eq!(child.shard, Some(shard));
        assert!(child.child);
        assert_eq!(child.processes, 1);
        assert!(
            child.server_pids.is_empty(),
            "the parent samples the servers"
        );
        assert!(crate::cli::check(&child).is_ok());
    }
}
