-- Championships in a cluster (issue 27, docs/TOURNAMENTS.md "Cluster"): which node directs
-- which tournament, fenced by an epoch that only ever grows, like `room_leases` (0004) but
-- in a table of its own: `room_leases.room_code` references `rooms`. Every director append
-- reads this row `FOR KEY SHARE` and is refused unless the appender holds it at its epoch.
-- Numbered 0012: 0011 is kept for the game-log migration of another branch.
-- PostgreSQL only: cluster mode refuses SQLite.
CREATE TABLE tournament_leases (
    tournament_id UUID PRIMARY KEY REFERENCES tournaments (id) ON DELETE CASCADE,
    owner         TEXT NOT NULL,
    epoch         BIGINT NOT NULL,
    expires_at    TIMESTAMPTZ NOT NULL
);
