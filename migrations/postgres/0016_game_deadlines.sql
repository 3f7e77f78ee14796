-- The turn deadline out of the games row (issue 28, docs/STORAGE.md "Turn deadline"):
-- it changes at every turn, and on PostgreSQL every update of a running game's `games`
-- row (≈ 3.4 KB with its packed `log`) left a whole dead row version behind. A running
-- game with a clock has one row here (a dozen bytes, updated in place by HOT updates);
-- the row is deleted, not set to NULL, when the clock stops or the game ends, so a
-- finished game has none. Keep in step with ../sqlite/0010_game_deadlines.sql.
CREATE TABLE game_deadlines (
    game_id     UUID   NOT NULL PRIMARY KEY REFERENCES games (id) ON DELETE CASCADE,
    -- absolute turn-clock deadline, unix ms
    deadline_ms BIGINT NOT NULL
);

INSERT INTO game_deadlines (game_id, deadline_ms)
    SELECT id, deadline_ms FROM games
    WHERE deadline_ms IS NOT NULL AND finished_at_ms IS NULL;

-- Dropping a column is a catalog change on PostgreSQL (no table rewrite).
ALTER TABLE games DROP COLUMN deadline_ms;
