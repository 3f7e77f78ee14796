-- Championships in a cluster (issue 27, docs/TOURNAMENTS.md "Cluster"): a tournament is
-- marked finished once its director stored its last event, so that the claim loops of the
-- nodes take only unfinished tournaments nobody directs (oldest first, however many
-- finished ones there are) and never claim a finished one again. NULL: not finished (or
-- stored before this column: marked when its director next runs).
ALTER TABLE tournaments ADD COLUMN finished_at_ms BIGINT;
CREATE INDEX tournaments_unfinished ON tournaments (created_at_ms, id)
    WHERE finished_at_ms IS NULL;
