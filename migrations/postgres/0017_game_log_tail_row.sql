-- A running game's log tail as ONE row, updated in place (issue 28, stored bytes per game;
-- docs/STORAGE.md, "How it is stored").
--
-- Before: one `game_log_tail` row per group commit, all deleted at each fold (every 32
-- pieces). Each deleted row stays in its page as a dead tuple until a vacuum, and with
-- autovacuum behind (or off) a finished game left about 37 KB behind it. Now each game
-- has one tail row: an append is an upsert that appends its piece to `bytes`
-- (`bytes = bytes || piece`, `pieces = pieces + 1`), a fold (every 48 pieces on
-- PostgreSQL) resets it (`bytes = ''`, `pieces = 0`, `last_seq` kept: the folded log's
-- last seq) rather than deleting it, and only the game's end deletes it. No index names
-- `bytes`, `pieces` or `last_seq`, so every update is a HOT update, whose old versions a
-- later access to the page prunes without a vacuum; `fillfactor = 25` leaves each page
-- room for the new versions of its rows, and `bytes` is `STORAGE MAIN` (compressed but
-- kept in the row, like `games.log` in 0016) so that a tail of a few hundred bytes
-- leaves no dead TOAST chunks behind. Measured in a simulation: 57 KB → 23 KB per game
-- with autovacuum off. SQLite keeps one row per group commit (sqlite/0007_game_log.sql:
-- its deleted rows' space is reused at once).
--
-- A running game's tail rows are joined into its one row, in `last_seq` order.
ALTER TABLE game_log_tail RENAME TO game_log_tail_rows;
ALTER INDEX game_log_tail_pkey RENAME TO game_log_tail_rows_pkey;

CREATE TABLE game_log_tail (
    game_id  UUID   NOT NULL PRIMARY KEY REFERENCES games (id) ON DELETE CASCADE,
    -- the seq of the last event in `bytes`; after a fold (empty `bytes`), `games.log_seq`
    last_seq BIGINT NOT NULL,
    -- the appends (group commits) in `bytes` since the last fold
    pieces   INT    NOT NULL,
    -- the packed pieces since the last fold, in order
    bytes    BYTEA  NOT NULL
) WITH (fillfactor = 25);
ALTER TABLE game_log_tail ALTER COLUMN bytes SET STORAGE MAIN;

INSERT INTO game_log_tail (game_id, last_seq, pieces, bytes)
    SELECT game_id, MAX(last_seq), COUNT(*), string_agg(bytes, ''::bytea ORDER BY last_seq)
    FROM game_log_tail_rows GROUP BY game_id;

DROP TABLE game_log_tail_rows;
