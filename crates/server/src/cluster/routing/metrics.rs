//! Prometheus metrics of the routing (labels are closed sets: kinds, outcomes, causes).

/// Messages the owner published to edges, by `kind` (`frame`, `kick`, `end`).
pub const FRAMES_PUBLISHED: &str = "parchis_cluster_frames_published_total";
/// Publishes to an edge that failed (the edge sees a gap).
pub const PUBLISH_FAILED: &str = "parchis_cluster_publish_failed_total";
/// Frames an edge relayed to its local sockets, by `verdict` (`delivered`, `duplicate`,
/// `stale`).
pub const FRAMES_RELAYED: &str = "parchis_cluster_frames_relayed_total";
/// Commands an edge forwarded to a room's owner, by `outcome` (`taken`, `not_attached`,
/// `unreachable`).
pub const COMMANDS_FORWARDED: &str = "parchis_cluster_commands_forwarded_total";
/// Gaps in `Parchis-N` an edge saw.
pub const EDGE_GAPS: &str = "parchis_cluster_edge_gaps_total";
/// Reattaches by `cause` (`gap`, `moved`, `rehome`, `end`) and `outcome` (`ok`,
/// `refused`, `gave_up`).
pub const REATTACHES: &str = "parchis_cluster_reattaches_total";
/// Attaches (join, watch, resume) sent to another node's room, by `outcome`.
pub const REMOTE_ATTACHES: &str = "parchis_cluster_remote_attaches_total";
/// Requests the owner's room services answered, by `op`.
pub const ROOM_REQUESTS: &str = "parchis_cluster_room_requests_total";

/// Describes the metrics (once per process; later calls are harmless).
pub fn describe() {
    use metrics::describe_counter;
    describe_counter!(
        FRAMES_PUBLISHED,
        "Messages published to edge nodes, by kind"
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
}
