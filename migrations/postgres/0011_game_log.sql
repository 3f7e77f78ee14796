-- A game stored as its throws (issue 28, docs/STORAGE.md): the packed log
-- (`parchis_room_core::throws`, format byte first) beside the old JSON event rows.
-- `games.log` holds the compacted pieces, `games.log_seq` the last seq in it (NULL: the
-- game has no packed log and is read from `game_events`, the old format). While a game
-- runs, each group commit that touches it adds one `game_log_tail` row (never one per
-- event); every 32 tail rows and in the game's end transaction the tail rows are appended
-- to `games.log` in `last_seq` order and deleted, in the same transaction.
-- Keep in step with ../sqlite/0007_game_log.sql.

ALTER TABLE games ADD COLUMN log BYTEA;
ALTER TABLE games ADD COLUMN log_seq BIGINT;

CREATE TABLE game_log_tail (
    game_id  UUID   NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    last_seq BIGINT NOT NULL,
    bytes    BYTEA  NOT NULL,
    PRIMARY KEY (game_id, last_seq)
);
