-- The turn deadline out of the games row (issue 28, docs/STORAGE.md, `game_deadlines`):
-- on PostgreSQL each write of it copied a running game's whole `games` row into a new
-- row version. SQLite updates rows in place, so this table is only here to keep both
-- stores alike. A running game with a clock has one row; it is
-- deleted, not set to NULL, when the clock stops or the game ends. Keep in step with
-- ../postgres/0016_game_deadlines.sql.
CREATE TABLE game_deadlines (
    game_id     TEXT    NOT NULL PRIMARY KEY REFERENCES games (id) ON DELETE CASCADE,
    -- absolute turn-clock deadline, unix ms
    deadline_ms INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO game_deadlines (game_id, deadline_ms)
    SELECT id, deadline_ms FROM games
    WHERE deadline_ms IS NOT NULL AND finished_at_ms IS NULL;

-- SQLite (3.35 and later; the bundled one is 3.46) drops a column by rewriting the
-- table: once, here. Nothing indexes or references games.deadline_ms.
ALTER TABLE games DROP COLUMN deadline_ms;
