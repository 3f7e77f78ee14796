//! Prometheus metrics at `GET /metrics` (text exposition format 0.0.4), recorded with the
//! `metrics` crate and rendered by `metrics-exporter-prometheus`.
//!
//! Counters end in `_total`, durations are histograms in seconds (`_seconds`), label values
//! are closed sets (no room codes or ids). Room and connection gauges are computed from the
//! room registry at scrape time. The names, with their help texts, are the constants below;
//! `deploy/grafana-dashboard.json` charts them.
//!
//! The recorder is process-global: the first [`install`] wins and every server in the
//! process (tests start several) records into it.

use crate::state::AppState;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use parchis_protocol::RoomStatus;
use std::sync::OnceLock;

/// Gauge: live rooms by `status` (`lobby`, `playing`, `finished`).
pub const ROOMS: &str = "parchis_rooms";
/// Gauge: connections attached to a room by `role` (`player`, `spectator`).
pub const CONNECTIONS: &str = "parchis_room_connections";
/// Gauge: open WebSocket connections (joined or not).
pub const SOCKETS: &str = "parchis_websocket_connections";
/// Counter: joins by `role` (`player`, `spectator`).
pub const JOINS: &str = "parchis_joins_total";
/// Counter: lobby seats given up, by `why` (`left`, `grace_expired`).
pub const LEAVES: &str = "parchis_leaves_total";
/// Counter: games started by `rules` (the rule set's preset).
pub const GAMES_STARTED: &str = "parchis_games_started_total";
/// Counter: games finished by `rules` and `reason` (`completed`, `abandoned`,
/// `closed_by_admin`).
pub const GAMES_FINISHED: &str = "parchis_games_finished_total";
/// Counter: applied game actions by `kind` (`roll`, `move`, `timeout`, `abandon`); its
/// `rate()` is the actions per second.
pub const ACTIONS: &str = "parchis_actions_total";
/// Histogram: a player's roll or move from the socket read to durable events and queued
/// frames, seconds.
pub const ACTION_LATENCY: &str = "parchis_action_latency_seconds";
/// Histogram: one group commit of the store, seconds (recorded by `parchis-store`).
pub const STORE_COMMIT: &str = "parchis_store_commit_duration_seconds";
/// Histogram: writes per group commit (recorded by `parchis-store`).
pub const STORE_GROUP: &str = "parchis_store_commit_group_size";
/// Counter: turn clocks that ran out (R-CLOCK).
pub const TIMEOUTS: &str = "parchis_turn_timeouts_total";
/// Counter: abandonments by `reason` (`left`, `disconnected`, `timeouts`).
pub const ABANDONMENTS: &str = "parchis_abandonments_total";
/// Counter: abandoned seats a bot took over, by `reason`.
pub const BOT_TAKEOVERS: &str = "parchis_bot_takeovers_total";
/// Counter: resumes by `catch_up` (`events`: missed events replayed, `snapshot`).
pub const RESUMES: &str = "parchis_resumes_total";
/// Counter: room snapshots sent, by `reason` (`join`, `watch`, `resume`).
pub const SNAPSHOTS: &str = "parchis_snapshots_total";
/// Counter: refused commands by error `code` (`not_your_turn`, `stale_seq`, …).
pub const REFUSED: &str = "parchis_commands_refused_total";
/// Counter: connections closed by the server, by WebSocket close `code`.
pub const KICKS: &str = "parchis_connections_kicked_total";
/// Counter: connections dropped because their outbound queue overflowed.
pub const SLOW_CONSUMERS: &str = "parchis_slow_consumer_disconnects_total";
/// Histogram: frames waiting in a connection's outbound queue when its writer wakes.
pub const OUTBOUND_DEPTH: &str = "parchis_outbound_queue_depth";
/// Counter: admin actions by `action` (`list_rooms`, `close_room`, `disconnect`).
pub const ADMIN_ACTIONS: &str = "parchis_admin_actions_total";

/// Gauge: rooms this node owns in cluster mode (the fences it holds).
pub const CLUSTER_ROOMS_OWNED: &str = "parchis_cluster_rooms_owned";
/// Counter: room leases renewed (cluster mode; one renewal statement renews many).
pub const LEASES_RENEWED: &str = "parchis_cluster_leases_renewed_total";
/// Counter: room leases lost by `why` (`renewal`: missing from a renewal's answer,
/// `expired`: no renewal succeeded for a whole TTL).
pub const LEASES_LOST: &str = "parchis_cluster_leases_lost_total";
/// Counter: rooms this node claimed from the sweeper (failover takeovers).
pub const TAKEOVERS: &str = "parchis_cluster_takeovers_total";
/// Counter: rooms this node adopted from a draining node.
pub const ADOPTIONS: &str = "parchis_cluster_adoptions_total";
/// Counter: claimed or adopted rooms that did not come up, by `why` (`store`,
/// `unreadable`, `fenced`, `register`).
pub const TAKEOVER_FAILURES: &str = "parchis_cluster_takeover_failures_total";
/// Counter: room writes refused because another node holds the room's lease.
pub const FENCED_WRITES: &str = "parchis_cluster_fenced_writes_total";
/// Histogram: one SIGTERM drain, from the signal to the last room handed off, seconds.
pub const DRAIN_DURATION: &str = "parchis_cluster_drain_duration_seconds";
/// Histogram: one lease renewal statement, from sending it to its answer (or failure,
/// or giving up), seconds.
pub const RENEWAL_DURATION: &str = "parchis_cluster_lease_renewal_seconds";
/// Histogram: how late each lease renewal started after its scheduled
/// tick, seconds: the renewer's scheduling delay (docs/CLUSTER.md, "Lease thread").
pub const RENEWAL_DELAY: &str = "parchis_cluster_lease_renewal_delay_seconds";
/// Gauge: 1 while this node sheds load (takes no new rooms, not ready), else 0.
pub const SHEDDING: &str = "parchis_cluster_shedding";
/// Counter: times this node started shedding load, by `why` (`renewal_late`,
/// `renewal_slow`, `commit_slow`, `write_queue`).
pub const SHED_EPISODES: &str = "parchis_cluster_shed_episodes_total";
/// Counter: room creations this node did not take because it sheds load (placed on
/// another node or refused `server_full`).
pub const CREATIONS_SHED: &str = "parchis_cluster_creations_shed_total";
/// Counter: drain adoptions (`adopt` requests) this node refused because it sheds load
/// (the draining node asks another node or leaves the room to the sweepers).
pub const ADOPTIONS_SHED: &str = "parchis_cluster_adoptions_shed_total";

// Routing between nodes (cluster mode, `cluster::routing`).
/// Counter: link messages the owner published to edges, by `kind` (`frame`, `kick`,
/// `end`): one per relayed socket and frame (a line of a `P.edge` message).
pub const FRAMES_PUBLISHED: &str = "parchis_cluster_frames_published_total";
/// Counter: NATS messages the owner published to edges (one carries a frame for every
/// link of one edge node it was sent to: at most [`FRAMES_PUBLISHED`]).
pub const EDGE_MESSAGES: &str = "parchis_cluster_edge_messages_published_total";
/// Counter: publishes to an edge that failed (the edge sees a gap).
pub const PUBLISH_FAILED: &str = "parchis_cluster_publish_failed_total";
/// Counter: frames an edge relayed to its local sockets, by `verdict` (`delivered`, `duplicate`,
/// `stale`).
pub const FRAMES_RELAYED: &str = "parchis_cluster_frames_relayed_total";
/// Counter: commands an edge forwarded to a room's owner, by `outcome` (`taken`, `not_attached`,
/// `unreachable`).
pub const COMMANDS_FORWARDED: &str = "parchis_cluster_commands_forwarded_total";
/// Counter: gaps in a relayed link's message counter an edge saw.
pub const EDGE_GAPS: &str = "parchis_cluster_edge_gaps_total";
/// Counter: reattaches by `cause` (`gap`, `moved`, `rehome`, `end`) and `outcome` (`ok`,
/// `refused`, `gave_up`).
pub const REATTACHES: &str = "parchis_cluster_reattaches_total";
/// Counter: attaches (join, watch, resume) sent to another node's room, by `outcome`.
pub const REMOTE_ATTACHES: &str = "parchis_cluster_remote_attaches_total";
/// Counter: requests the owner's room services answered, by `op`.
pub const ROOM_REQUESTS: &str = "parchis_cluster_room_requests_total";
/// Counter: lookups of a code no node serves that the store does not hold, by `answer`:
/// `read` (asked, found unknown and remembered) or `cached` (answered unknown from the
/// negative cache, `cluster::routing::unknown`, without NATS or the store).
pub const UNKNOWN_CODE_LOOKUPS: &str = "parchis_cluster_unknown_code_lookups_total";

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
/// starts the upkeep thread (every [`UPKEEP`]). Returns its handle; `None` if another
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

/// Sets the scrape-time gauges from the room registry.
fn sample(state: &AppState) {
    let (mut lobby, mut playing, mut finished) = (0u32, 0u32, 0u32);
    let (mut players, mut spectators) = (0u32, 0u32);
    for room in state.all_rooms() {
        let l = room.listing();
        match l.status {
            RoomStatus::Lobby => lobby += 1,
            RoomStatus::Playing => playing += 1,
            RoomStatus::Finished => finished += 1,
        }
        players += l.connected_players;
        spectators += l.summary.spectators;
    }
    metrics::gauge!(ROOMS, "status" => "lobby").set(lobby);
    metrics::gauge!(ROOMS, "status" => "playing").set(playing);
    metrics::gauge!(ROOMS, "status" => "finished").set(finished);
    metrics::gauge!(CONNECTIONS, "role" => "player").set(players);
    metrics::gauge!(CONNECTIONS, "role" => "spectator").set(spectators);
    if let Some(own) = crate::cluster::ownership::ownership(state) {
        metrics::gauge!(CLUSTER_ROOMS_OWNED).set(own.count() as f64);
    }
}

/// `GET /metrics`: every metric in the Prometheus text format (`text/plain;
/// version=0.0.4`). `503` if this process has no Prometheus recorder.
pub async fn scrape(State(state): State<AppState>) -> axum::response::Response {
    let Some(handle) = install() else {
        return (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "metrics recorder not installed\n",
        )
            .into_response();
    };
    sample(&state);
    handle.run_upkeep();
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        handle.render(),
    )
        .into_response()
}
