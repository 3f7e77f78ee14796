-- Quick pairing in a cluster (issue 26, docs/ACCOUNTS.md "Quick pairing"): the pool's
-- tickets live here, so that every node reads, polls and cancels every ticket, and one
-- matcher in the cluster (the holder of `pairing_lease`) groups them. Single-node servers
-- (SQLite, memory) keep their pool in memory and never touch these tables.
-- `body` is the server's bookkeeping of the ticket as JSON (queue, μ, wait, state);
-- `polled_ms` is kept out of it, so a poll is one small update.
CREATE TABLE pairing_tickets (
    id         TEXT PRIMARY KEY,
    account_id UUID,
    waiting    BOOLEAN NOT NULL,
    polled_ms  BIGINT NOT NULL,
    body       TEXT NOT NULL
);
-- An account waits with one ticket at a time (`409 already_waiting`).
CREATE UNIQUE INDEX pairing_tickets_one_waiting ON pairing_tickets (account_id)
    WHERE waiting AND account_id IS NOT NULL;

-- Which node runs the cluster's one matcher, fenced by an epoch that only ever grows (as
-- `tournament_leases`, 0012): every matcher write reads this row `FOR KEY SHARE` and is
-- refused unless the writer holds it at its epoch. One row, `name = 'pairing'`.
CREATE TABLE pairing_lease (
    name       TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    epoch      BIGINT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
