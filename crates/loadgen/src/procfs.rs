//! Server samples from /proc: resident memory and CPU time of the server processes
//! (`--server-pid`, one per node), summed over every node.

use serde_json::{json, Value};

/// VmRSS of `pid` in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// utime + stime of `pid`, in seconds.
pub fn cpu_secs(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0) // USER_HZ is 100 on Linux
}

/// `f` of every pid, summed; `None` if any is unreadable (a node died) or there is none.
fn sum<T: std::iter::Sum<T>>(pids: &[u32], f: impl Fn(u32) -> Option<T>) -> Option<T> {
    if pids.is_empty() {
        return None;
    }
    pids.iter().map(|&p| f(p)).sum()
}

/// Samples of the servers over one run: memory before, idle and playing, CPU over the
/// measured window.
#[derive(Debug, Clone, Default)]
pub struct Probe {
    pids: Vec<u32>,
    rss_before: Option<u64>,
    rss_idle: Option<u64>,
    rss_playing: Option<u64>,
    rss_peak: u64,
    cpu_start: Vec<Option<f64>>,
    cpu_end: Vec<Option<f64>>,
}

impl Probe {
    /// Starts probing `pids` (none: `None`); samples the memory before the run.
    pub fn new(pids: &[u32]) -> Option<Probe> {
        (!pids.is_empty()).then(|| Probe {
            pids: pids.to_vec(),
            rss_before: sum(pids, rss_kib),
            ..Probe::default()
        })
    }

    /// Memory with every connection idle (the rooms set up, nothing played).
    pub fn idle(&mut self) {
        self.rss_idle = sum(&self.pids, rss_kib);
        self.rss_peak = self.rss_idle.unwrap_or(0);
    }

    /// The measured window begins.
    pub fn window_start(&mut self) {
        self.cpu_start = self.pids.iter().map(|&p| cpu_secs(p)).collect();
    }

    /// A memory sample during play.
    pub fn tick(&mut self) {
        if let Some(r) = sum(&self.pids, rss_kib) {
            self.rss_peak = self.rss_peak.max(r);
            self.rss_playing = Some(r);
        }
    }

    /// The measured window ends.
    pub fn window_end(&mut self) {
        self.cpu_end = self.pids.iter().map(|&p| cpu_secs(p)).collect();
    }

    /// CPU seconds of each server over the window (`None` for one unreadable).
    fn cpu_per_pid(&self) -> Vec<Option<f64>> {
        self.cpu_start
            .iter()
            .zip(&self.cpu_end)
            .map(|(a, b)| Some(b.as_ref()? - a.as_ref()?))
            .collect()
    }

    /// The `server` object of the report: `actions` in the window, `idle_connections`
    /// (client sockets) when the idle memory was sampled.
    pub fn report(&self, actions: u64, idle_connections: i64) -> Value {
        let per_pid = self.cpu_per_pid();
        let cpu: Option<f64> = if per_pid.is_empty() {
            None
        } else {
            per_pid.iter().copied().sum()
        };
        let per_conn = |rss: Option<u64>| match (rss, self.rss_before) {
            (Some(r), Some(b)) if idle_connections > 0 => {
                Some((r as f64 - b as f64) / idle_connections as f64)
            }
            _ => None,
        };
        json!({
            "pid": self.pids.first(),
            "pids": self.pids,
            "rss_kib_before": self.rss_before,
            "rss_kib_idle": self.rss_idle,
            "rss_kib_playing": self.rss_playing,
            "rss_kib_peak": self.rss_peak,
            "rss_kib_per_idle_connection": per_conn(self.rss_idle),
            "rss_kib_per_playing_connection": per_conn(self.rss_playing),
            "cpu_secs_during_play": cpu,
            "cpu_secs_per_pid": per_pid,
            "cpu_us_per_action": cpu.map(|c| if actions > 0 { c * 1e6 / actions as f64 } else { 0.0 }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process_and_sums_several() {
        let me = std::process::id();
        let one = rss_kib(me).unwrap();
        assert!(one > 0);
        assert!(cpu_secs(me).is_some());
        let mut p = Probe::new(&[me, me]).unwrap();
        assert!(p.rss_before.unwrap() >= 2 * one - 1024, "{p:?}");
        p.idle();
        p.window_start();
        // Burn 0.1 s of CPU time (not wall time: the machine may be busy) so the
        // window shows it.
        let before = cpu_secs(me).unwrap();
        let mut x = 0u64;
        while cpu_secs(me).unwrap() < before + 0.1 {
            for _ in 0..100_000 {
                x = x.wrapping_add(std::hint::black_box(1));
            }
        }
        p.tick();
        p.window_end();
        let r = p.report(1000, 10);
        assert_eq!(r["pids"], json!([me, me]));
        let per = r["cpu_secs_per_pid"].as_array().unwrap();
        assert_eq!(per.len(), 2);
        let total = r["cpu_secs_during_play"].as_f64().unwrap();
        // Tick counts divided by 100 are not exact in binary: 0.1 + 0.1 may read as
        // 0.19999999999999998, so the bound allows for rounding (a tick is 0.01 s).
        assert!(total >= 0.2 - 1e-9, "two copies of ≥ 0.1 s: {total} ({x})");
        assert!((r["cpu_us_per_action"].as_f64().unwrap() - total * 1000.0).abs() < 1e-6);
        assert!(Probe::new(&[]).is_none());
        // A pid that does not exist makes the sum unknown, not smaller.
        assert_eq!(sum(&[me, u32::MAX], rss_kib), None);
    }
}
