-- Cluster mode (docs/CLUSTER.md, "Ownership: leases with an epoch"): which node owns which
-- room, fenced by an epoch that only ever grows, and the nodes' heartbeats. PostgreSQL only:
-- cluster mode refuses SQLite, so ../sqlite has no such migration.
CREATE TABLE room_leases (
    room_code  TEXT PRIMARY KEY REFERENCES rooms (code),
    owner      TEXT NOT NULL,
    epoch      BIGINT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    retired    BOOLEAN NOT NULL DEFAULT false
);
-- The sweepers look for expired leases.
CREATE INDEX room_leases_expires_at ON room_leases (expires_at);

CREATE TABLE cluster_nodes (
    node_id    TEXT PRIMARY KEY,
    rooms      INTEGER NOT NULL,
    draining   BOOLEAN NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    seen_at    TIMESTAMPTZ NOT NULL
);
