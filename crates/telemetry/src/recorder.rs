//! The process-global Prometheus recorder (`metrics-exporter-prometheus`): installed once,
//! with the buckets and help texts of the metrics in [`crate::names`], and [`Cached`]
//! handles for the hot paths.
//!
//! The recorder is process-global: the first [`install`] wins and every server in the
//! process (tests start several) records into it.

use crate::names::*;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;

/// Latency buckets, seconds: 0.5 ms to 10 s.
const SECONDS_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// Count buckets (group sizes, queue depths).
const COUNT_BUCKETS: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// How often histogram samples are folded into their buckets. The recorder buffers every
/// histogram sample until then, so without this a server nobody scrapes would grow.
const UPKEEP: std::time::Duration = std::time::Duration::from_secs(5);

/// Installs the global Prometheus recorder (once per process), describes the metrics and
/// starts the upkeep thread (every `UPKEEP`, 5 s). Returns its handle; `None` if another
/// recorder was installed first.
pub fn install() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS_BUCKETS)
                .and_then(|b| {
                    b.set_buckets_for_metric(Matcher::Full(STORE_GROUP.into()), COUNT_BUCKETS)
                })
                .and_then(|b| {
                    b.set_buckets_for_metric(Matcher::Full(OUTBOUND_DEPTH.into()), COUNT_BUCKETS)
                });
            let handle = builder.and_then(|b| b.install_recorder());
            match handle {
                Ok(h) => {
                    describe();
                    let upkeep = h.clone();
                    let spawned = std::thread::Builder::new()
                        .name("metrics-upkeep".into())
                        .spawn(move || loop {
                            std::thread::sleep(UPKEEP);
                            upkeep.run_upkeep();
                        });
                    if let Err(e) = spawned {
                        tracing::warn!(error = %e, "metrics upkeep thread not started");
                    }
                    Some(h)
                }
                Err(e) => {
                    tracing::warn!(error = %e, "metrics recorder not installed");
                    None
                }
            }
        })
        .as_ref()
}

/// A metric handle registered on its first use and kept: the hot paths (every action,
/// every relayed frame and command) record through these instead of `metrics::counter!`
/// and `metrics::histogram!`, which build the key (a label vector when labelled) and
/// look it up in the recorder's registry on every call (about 1.3 k instructions each,
/// several times per relayed action: docs/BENCHMARKS.md, "CPU per action"). The first use
/// installs the recorder ([`install`]) before registering, so a handle never binds to the
/// no-op recorder; until that use the metric is not exported, as with the macros.
///
/// ```ignore
/// static ROLLS: Cached<metrics::Counter> = Cached::new(|| metrics::counter!(ACTIONS, "kind" => "roll"));
/// ROLLS.get().increment(1);
/// ```
pub struct Cached<T: 'static> {
    cell: OnceLock<T>,
    register: fn() -> T,
}

impl<T> Cached<T> {
    /// A handle that `register` (a `metrics::counter!`/`histogram!` call) creates on its
    /// first use.
    pub const fn new(register: fn() -> T) -> Cached<T> {
        Cached {
            cell: OnceLock::new(),
            register,
        }
    }

    /// The handle, registered now if this is its first use.
    pub fn get(&self) -> &T {
        self.cell.get_or_init(|| {
            install();
            (self.register)()
        })
    }
}

// Long (90 lines): one description per metric, a flat list that reads best whole.
fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
    describe_gauge!(ROOMS, "Live rooms by status");
    describe_gauge!(CONNECTIONS, "Connections attached to a room, by role");
    describe_gauge!(SOCKETS, "Open WebSocket connections");
    describe_counter!(JOINS, "Joins by role");
    describe_counter!(LEAVES, "Lobby seats given up");
    describe_counter!(GAMES_STARTED, "Games started by rule set");
    describe_counter!(GAMES_FINISHED, "Games finished by rule set and reason");
    describe_counter!(ACTIONS, "Game actions applied, by kind");
    describe_histogram!(
        ACTION_LATENCY,
        Unit::Seconds,
        "Player command: socket read to durable events and queued frames"
    );
    describe_histogram!(STORE_COMMIT, Unit::Seconds, "Store group commit duration");
    describe_histogram!(STORE_GROUP, "Writes per store group commit");
    describe_counter!(TIMEOUTS, "Turn clocks that ran out");
    describe_counter!(ABANDONMENTS, "Abandonments by reason");
    describe_counter!(BOT_TAKEOVERS, "Abandoned seats taken over by a bot");
    describe_counter!(RESUMES, "Seat resumes by catch-up kind");
    describe_counter!(SNAPSHOTS, "Room snapshots sent");
    describe_counter!(REFUSED, "Refused commands by error code");
    describe_counter!(KICKS, "Connections closed by the server, by close code");
    describe_counter!(SLOW_CONSUMERS, "Slow-consumer disconnects");
    describe_histogram!(OUTBOUND_DEPTH, "Outbound queue depth seen by the writer");
    describe_counter!(ADMIN_ACTIONS, "Admin actions");
    describe_gauge!(CLUSTER_ROOMS_OWNED, "Rooms this node owns (cluster mode)");
    describe_counter!(LEASES_RENEWED, "Room leases renewed");
    describe_counter!(
        FRAMES_PUBLISHED,
        "Link messages (one per relayed socket) published to edge nodes, by kind"
    );
    describe_counter!(
        EDGE_MESSAGES,
        "NATS messages published to edge nodes (several links' lines share one)"
    );
    describe_counter!(PUBLISH_FAILED, "Publishes to edge nodes that failed");
    describe_counter!(FRAMES_RELAYED, "Frames relayed by this edge, by verdict");
    describe_counter!(
        COMMANDS_FORWARDED,
        "Commands forwarded to owners, by outcome"
    );
    describe_counter!(EDGE_GAPS, "Gaps in the per-link counter seen by this edge");
    describe_counter!(
        REATTACHES,
        "Relayed connections reattached, by cause and outcome"
    );
    describe_counter!(
        REMOTE_ATTACHES,
        "Joins, watches and resumes of rooms on other nodes"
    );
    describe_counter!(
        ROOM_REQUESTS,
        "Requests answered by this node's room services, by op"
    );
    describe_counter!(
        UNKNOWN_CODE_LOOKUPS,
        "Lookups of unknown room codes, by answer (read: store asked; cached)"
    );
    describe_counter!(LEASES_LOST, "Room leases lost, by why");
    describe_counter!(TAKEOVERS, "Rooms claimed by the sweeper (failover)");
    describe_counter!(ADOPTIONS, "Rooms adopted from a draining node");
    describe_counter!(
        TAKEOVER_FAILURES,
        "Claimed or adopted rooms that did not come up"
    );
    describe_counter!(FENCED_WRITES, "Room writes refused by the lease's fence");
    describe_histogram!(DRAIN_DURATION, Unit::Seconds, "SIGTERM drain duration");
    describe_histogram!(
        RENEWAL_DURATION,
        Unit::Seconds,
        "Lease renewal statement duration"
    );
    describe_histogram!(
        RENEWAL_DELAY,
        Unit::Seconds,
        "Lease renewal start delay after its scheduled tick"
    );
    describe_gauge!(SHEDDING, "1 while this node sheds load (no new rooms)");
    describe_gauge!(
        CLOCK_SKEW,
        "The database's wall clock minus this node's, seconds (cluster mode)"
    );
    describe_counter!(SHED_EPISODES, "Times this node started shedding, by why");
    describe_counter!(
        CREATIONS_SHED,
        "Room creations not taken here because this node sheds load"
    );
    describe_counter!(
        ADOPTIONS_SHED,
        "Drain adoptions refused here because this node sheds load"
    );
}
