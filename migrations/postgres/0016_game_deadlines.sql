-- Fewer dead versions of a running game's `games` row (issue 28, stored bytes per game):
-- the turn deadline in a table of its own, and the packed log kept in the row (below).
--
-- The turn deadline out of the games row (docs/STORAGE.md, `game_deadlines`): on
-- PostgreSQL each write of it (`set_deadline`: a restore's or a takeover's fresh clock;
-- a turn's deadline is in its `turn` event) copied a running game's whole `games` row
-- (≈ 2.4 KB with its packed `log`) into a new row version that only a vacuum reclaims.
-- A running game with a clock has one row here; it is deleted, not set to NULL, when
-- the clock stops or the game ends, so a finished game has none. Keep in step with
-- ../sqlite/0010_game_deadlines.sql.
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

-- The packed log compressed but kept in the row (STORAGE MAIN; out of line only past
-- about 8 KB): a log of about 3.2 KB compresses to about 2.2 KB, just over the 2 KB at
-- which the default (EXTENDED) moved it out of line, so each fold wrote the whole log
-- again into the TOAST table, whose dead chunks only a vacuum reclaims. In the row, a
-- fold's old version is a HOT update's, pruned within its page (docs/BENCHMARKS.md,
-- "Turn deadline in its own table"). Applies to values written from now on.
ALTER TABLE games ALTER COLUMN log SET STORAGE MAIN;
