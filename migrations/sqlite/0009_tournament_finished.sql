-- Championships (issue 27, docs/TOURNAMENTS.md): a tournament is marked finished once its
-- director stored its last event, so that a restart restores only unfinished tournaments
-- (oldest first, however many finished ones there are). NULL: not finished (or stored
-- before this column: marked when its director next runs).
ALTER TABLE tournaments ADD COLUMN finished_at_ms INTEGER;
CREATE INDEX tournaments_unfinished ON tournaments (created_at_ms, id)
    WHERE finished_at_ms IS NULL;
