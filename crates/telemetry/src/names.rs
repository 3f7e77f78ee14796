//! The names of every metric the server exports (Prometheus conventions: counters end in
//! `_total`, durations are histograms in seconds). `deploy/grafana-dashboard.json` charts
//! them; their help texts are set by [`crate::recorder::install`].

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
/// Counter: abandonments by `reason` (`left`, `disconnected`, `timeouts`, `disqualified`).
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
/// Gauge: the database's wall clock minus this node's, seconds, at the last heartbeat
/// (cluster mode; beyond one second either way the node warns).
pub const CLOCK_SKEW: &str = "parchis_cluster_clock_skew_seconds";
