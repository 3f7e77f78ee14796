-- A game stored as its throws (issue 28, docs/STORAGE.md): the packed log of a game
-- (format byte first, `crates/room-core/src/throws`) instead of one JSON row per event.
-- `games.log` is the folded log, `games.log_seq` the last seq it holds; each group commit
-- that touches a running game adds one `game_log_tail` row (its piece of the log, the
-- events up to `last_seq`), folded into `games.log` every 32 pieces and in the game's end
-- transaction. A game whose log is NULL and has no tail row is read from `game_events`
-- (games stored before this migration). Keep in step with ../sqlite/0007_game_log.sql.
ALTER TABLE games ADD COLUMN log BYTEA;
ALTER TABLE games ADD COLUMN log_seq BIGINT;

CREATE TABLE game_log_tail (
    game_id  UUID   NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    last_seq BIGINT NOT NULL,
    bytes    BYTEA  NOT NULL,
    PRIMARY KEY (game_id, last_seq)
);
