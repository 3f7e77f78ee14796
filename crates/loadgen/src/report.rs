//! What one load process measured ([`Part`]: counters and latency histograms, which a
//! child of `--processes` prints and its parent merges), and the JSON report made of it.
//!
//! Histograms travel as hdrhistogram's V2 serialisation (deflate-compressed), base64: the
//! merge adds the children's histograms bucket by bucket, so the merged percentiles are
//! those of one histogram of every sample.

use crate::cli::LoadArgs;
use crate::procfs::Probe;
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Highest latency recorded, microseconds (larger values are clamped to it).
pub const MAX_LATENCY_US: u64 = 60_000_000;

/// A new latency histogram: 1 µs – 60 s, 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    // The bounds are constants that hdrhistogram accepts (low ≥ 1, high ≥ 2 × low,
    // sigfig ≤ 5), so this cannot fail.
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).unwrap_or_else(|_| unreachable!())
}

/// Whether a command's socket is on the room's owner (`Same`) or its commands and events
/// travel over NATS between two nodes (`Cross`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    /// Socket on the node that created (owns) the room.
    Same,
    /// Socket on another node: a relayed connection.
    Cross,
}

/// Action→event latencies, microseconds: every sample, and split by [`Hop`].
#[derive(Debug, Clone, PartialEq)]
pub struct Latency {
    /// Every sample.
    pub all: Histogram<u64>,
    /// Samples of clients whose socket is on the room's owner.
    pub same_node: Histogram<u64>,
    /// Samples of relayed clients.
    pub cross_node: Histogram<u64>,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            all: new_histogram(),
            same_node: new_histogram(),
            cross_node: new_histogram(),
        }
    }
}

impl Latency {
    /// Records one sample (clamped to 1 µs – 60 s).
    pub fn record(&mut self, us: u64, hop: Hop) {
        let us = us.clamp(1, MAX_LATENCY_US);
        // In bounds after the clamp: recording cannot fail.
        let _ = self.all.record(us);
        let _ = match hop {
            Hop::Same => self.same_node.record(us),
            Hop::Cross => self.cross_node.record(us),
        };
    }

    /// Adds every sample of `other`.
    pub fn add(&mut self, other: &Latency) -> Result<(), String> {
        for (mine, theirs) in [
            (&mut self.all, &other.all),
            (&mut self.same_node, &other.same_node),
            (&mut self.cross_node, &other.cross_node),
        ] {
            mine.add(theirs)
                .map_err(|e| format!("histogram merge: {e:?}"))?;
        }
        Ok(())
    }
}

/// base64 of the V2 deflate serialisation of `h`.
pub fn encode_histogram(h: &Histogram<u64>) -> Result<String, String> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .map_err(|e| format!("histogram serialise: {e:?}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// The histogram of [`encode_histogram`]'s output.
pub fn decode_histogram(s: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|e| format!("histogram base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram deserialise: {e:?}"))
}

impl Serialize for Latency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let enc = |h| encode_histogram(h).map_err(serde::ser::Error::custom);
        let map: BTreeMap<&str, String> = [
            ("all", enc(&self.all)?),
            ("same_node", enc(&self.same_node)?),
            ("cross_node", enc(&self.cross_node)?),
        ]
        .into();
        s.collect_map(map)
    }
}

impl<'de> Deserialize<'de> for Latency {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, String>::deserialize(d)?;
        let dec = |k: &str| {
            let s = map
                .get(k)
                .ok_or_else(|| serde::de::Error::custom(format!("no {k} histogram")))?;
            decode_histogram(s).map_err(serde::de::Error::custom)
        };
        Ok(Latency {
            all: dec("all")?,
            same_node: dec("same_node")?,
            cross_node: dec("cross_node")?,
        })
    }
}

/// What one load process measured; the parent of `--processes` adds its children's.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Part {
    /// Rooms this process was given.
    pub rooms: u64,
    /// Rooms fully set up (created, four joined).
    pub rooms_ready: u64,
    /// Seconds the setup phase took (the merge keeps the longest).
    pub setup_secs: f64,
    /// First games whose `start` was answered `ok`.
    pub games_started: u64,
    /// First games that will not play: `start` refused for good, unanswered when the
    /// socket went, or a socket lost before the play phase.
    #[serde(default)]
    pub starts_failed: u64,
    /// Seconds from the go-ahead until every game had started (longest).
    pub starts_secs: f64,
    /// Length of the measured window, seconds (longest).
    pub measured_secs: f64,
    /// Commands sent in the window and answered `ok`.
    pub actions: u64,
    /// Commands sent in the window.
    pub sent: u64,
    /// Games that reached `game_won`.
    pub games_finished: u64,
    /// Errors by kind (server `error` codes and local failures).
    pub errors: BTreeMap<String, u64>,
    /// Open WebSockets once every room was set up.
    pub idle_connections: i64,
    /// Open WebSockets at the last sample of the window.
    pub open_at_end: i64,
    /// Fewest open WebSockets sampled during the window (the merge sums each process's
    /// minimum, a lower bound of the real one).
    pub open_min: i64,
    /// Most WebSockets open at once (summed over processes: an upper bound).
    pub open_peak: i64,
    /// The load generator's own CPU time during the window, seconds.
    pub loadgen_cpu_secs: Option<f64>,
    /// Room creations sent again after a 503 (`server_full`: no node took the room).
    #[serde(default)]
    pub create_retries: u64,
    /// Action→event latencies.
    pub latency: Latency,
}

impl Part {
    /// Adds `other` (another process's share of the same run) to this one.
    pub fn merge(&mut self, other: &Part) -> Result<(), String> {
        self.rooms += other.rooms;
        self.rooms_ready += other.rooms_ready;
        self.setup_secs = self.setup_secs.max(other.setup_secs);
        self.games_started += other.games_started;
        self.starts_failed += other.starts_failed;
        self.starts_secs = self.starts_secs.max(other.starts_secs);
        self.measured_secs = self.measured_secs.max(other.measured_secs);
        self.actions += other.actions;
        self.sent += other.sent;
        self.games_finished += other.games_finished;
        for (k, v) in &other.errors {
            *self.errors.entry(k.clone()).or_insert(0) += v;
        }
        self.idle_connections += other.idle_connections;
        self.open_at_end += other.open_at_end;
        self.open_min += other.open_min;
        self.open_peak += other.open_peak;
        self.create_retries += other.create_retries;
        self.loadgen_cpu_secs = match (self.loadgen_cpu_secs, other.loadgen_cpu_secs) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        self.latency.add(&other.latency)
    }
}

/// `{count, p50, p90, p99, p999, max}` of a histogram, in milliseconds (`null` when empty).
pub fn summary(h: &Histogram<u64>) -> Value {
    let q = |q: f64| (!h.is_empty()).then(|| h.value_at_quantile(q) as f64 / 1000.0);
    json!({
        "count": h.len(),
        "p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "p999": q(0.999),
        "max": (!h.is_empty()).then(|| h.max() as f64 / 1000.0),
    })
}

/// The report printed at the end of a run. `processes`: how many load processes shared
/// it; `probe`: the servers' samples (with `--server-pid`).
pub fn render(args: &LoadArgs, part: &Part, processes: u32, probe: Option<&Probe>) -> Value {
    let secs = part.measured_secs.max(0.001);
    let lat = &part.latency;
    let mut latency = summary(&lat.all);
    latency["same_node"] = summary(&lat.same_node);
    latency["cross_node"] = summary(&lat.cross_node);
    // What a relayed connection adds: cross minus same, at the median and the p99.
    let added = |q: f64| {
        (!lat.same_node.is_empty() && !lat.cross_node.is_empty()).then(|| {
            (lat.cross_node.value_at_quantile(q) as f64 - lat.same_node.value_at_quantile(q) as f64)
                / 1000.0
        })
    };
    latency["cross_node_adds"] = json!({"p50": added(0.5), "p99": added(0.99)});
    json!({
        "url": args.urls.first(),
        "urls": args.urls,
        "processes": processes,
        "rooms": args.rooms,
        "rooms_ready": part.rooms_ready,
        "setup_secs": part.setup_secs,
        "games_started": part.games_started,
        "starts_failed": part.starts_failed,
        "start_rate": args.start_rate,
        "starts_secs": part.starts_secs,
        "think_ms": args.think_ms,
        "think_jitter": args.think_jitter,
        "warmup_secs": args.warmup_secs,
        "duration_secs": args.duration_secs,
        "measured_secs": part.measured_secs,
        "source_addrs": args.source_addrs.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        "actions": part.actions,
        "commands_sent": part.sent,
        "actions_per_sec": part.actions as f64 / secs,
        "games_finished": part.games_finished,
        "latency_ms": latency,
        "errors": part.errors,
        "create_retries": part.create_retries,
        "connections": {
            "idle_before_play": part.idle_connections,
            "open_at_end_of_play": part.open_at_end,
            "min_during_play": part.open_min,
            "peak": part.open_peak,
        },
        // The load generator's own CPU during play (every process): near 1.0 per core
        // means it is the bottleneck and the latencies measure it, not the server.
        "loadgen": {
            "cpu_secs_during_play": part.loadgen_cpu_secs,
            "cpu_share_during_play": part.loadgen_cpu_secs.map(|c| c / secs),
        },
        "server": probe.map(|p| p.report(part.actions, part.idle_connections)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latency(samples: &[(u64, Hop)]) -> Latency {
        let mut l = Latency::default();
        for &(us, hop) in samples {
            l.record(us, hop);
        }
        l
    }

    #[test]
    fn histograms_survive_serialisation() {
        let l = latency(&[
            (1_200, Hop::Same),
            (2_500, Hop::Cross),
            (90_000_000, Hop::Cross),
        ]);
        let text = serde_json::to_string(&l).unwrap();
        let back: Latency = serde_json::from_str(&text).unwrap();
        assert_eq!(back, l);
        assert_eq!(back.all.len(), 3);
        assert_eq!(back.cross_node.len(), 2);
        assert_eq!(back.same_node.len(), 1);
        // Clamped to 60 s; 3 significant digits.
        assert!(back.all.max() >= 59_900_000 && back.all.max() <= 60_100_000);
        assert!(serde_json::from_str::<Latency>(r#"{"all":"!!"}"#).is_err());
        assert!(decode_histogram("bm90IGEgaGlzdG9ncmFt").is_err());
    }

    #[test]
    fn merged_parts_add_counts_and_samples() {
        // Process A: 100 samples at 1 ms (same node), B: 100 at 3 ms (cross node).
        let a = Part {
            rooms: 5,
            rooms_ready: 5,
            setup_secs: 2.0,
            actions: 100,
            sent: 101,
            errors: [("stale_seq".to_string(), 1)].into(),
            open_peak: 20,
            loadgen_cpu_secs: Some(0.5),
            create_retries: 4,
            starts_failed: 2,
            measured_secs: 30.0,
            latency: latency(&[(1_000, Hop::Same); 100]),
            ..Part::default()
        };
        let b = Part {
            rooms: 5,
            rooms_ready: 4,
            setup_secs: 3.5,
            actions: 100,
            sent: 100,
            errors: [("stale_seq".to_string(), 2), ("closing".to_string(), 1)].into(),
            open_peak: 16,
            loadgen_cpu_secs: Some(0.25),
            create_retries: 1,
            starts_failed: 1,
            measured_secs: 30.1,
            latency: latency(&[(3_000, Hop::Cross); 100]),
            ..Part::default()
        };
        // Through the wire format, as from a child.
        let b: Part = serde_json::from_str(&serde_json::to_string(&b).unwrap()).unwrap();
        let mut m = a.clone();
        m.merge(&b).unwrap();
        assert_eq!(
            (m.rooms, m.rooms_ready, m.actions, m.sent),
            (10, 9, 200, 201)
        );
        assert_eq!(m.setup_secs, 3.5);
        assert_eq!(m.measured_secs, 30.1);
        assert_eq!(m.errors["stale_seq"], 3);
        assert_eq!(m.errors["closing"], 1);
        assert_eq!(m.open_peak, 36);
        assert_eq!(m.loadgen_cpu_secs, Some(0.75));
        assert_eq!(m.create_retries, 5);
        assert_eq!(m.starts_failed, 3);
        assert_eq!(m.latency.all.len(), 200);
        assert_eq!(m.latency.same_node.len(), 100);
        assert_eq!(m.latency.cross_node.len(), 100);
        // The median of the merged samples is 1 ms, the p99 3 ms (bucket precision).
        assert_eq!(m.latency.all.value_at_quantile(0.5), 1_000);
        assert!(m.latency.all.value_at_quantile(0.99).abs_diff(3_000) <= 3);

        let args = <crate::cli::Cli as clap::Parser>::try_parse_from(["lg", "--rooms", "10"])
            .unwrap()
            .load;
        let report = render(&args, &m, 2, None);
        assert_eq!(report["processes"], 2);
        assert_eq!(report["actions"], 200);
        assert_eq!(report["starts_failed"], 3);
        assert_eq!(report["latency_ms"]["count"], 200);
        assert_eq!(report["latency_ms"]["same_node"]["p50"], 1.0);
        let adds = report["latency_ms"]["cross_node_adds"]["p50"]
            .as_f64()
            .unwrap();
        assert!((adds - 2.0).abs() < 0.01, "cross adds {adds} ms");
        assert!((report["actions_per_sec"].as_f64().unwrap() - 200.0 / 30.1).abs() < 1e-9);
    }

    #[test]
    fn an_empty_histogram_has_no_percentiles() {
        let s = summary(&new_histogram());
        assert_eq!(s["count"], 0);
        assert!(s["p99"].is_null());
    }
}
