-- Parchís store schema, PostgreSQL flavour.
-- Times are unix milliseconds (BIGINT = i64). JSON documents are stored as TEXT so that
-- both backends return exactly the text that was written.
-- Keep in step with ../sqlite/0001_init.sql: both backends must behave alike.

CREATE TABLE rooms (
    code           TEXT    NOT NULL PRIMARY KEY,
    settings       TEXT    NOT NULL,
    status         TEXT    NOT NULL CHECK (status IN ('open', 'playing', 'finished')),
    created_at_ms  BIGINT  NOT NULL,
    started_at_ms  BIGINT,
    finished_at_ms BIGINT,
    updated_at_ms  BIGINT  NOT NULL
);

CREATE INDEX rooms_status_idx ON rooms (status);

CREATE TABLE seats (
    room_code    TEXT    NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
    colour       TEXT    NOT NULL,
    display_name TEXT    NOT NULL,
    -- lowercase hex SHA-256 of the session token; raw tokens are never stored
    token_hash   TEXT    NOT NULL,
    is_creator   BOOLEAN NOT NULL DEFAULT FALSE,
    joined_at_ms BIGINT  NOT NULL,
    PRIMARY KEY (room_code, colour)
);

CREATE TABLE games (
    id             UUID    NOT NULL PRIMARY KEY,
    room_code      TEXT    NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
    preset         TEXT    NOT NULL,
    rules          TEXT    NOT NULL,
    rules_hash     TEXT    NOT NULL,
    created_at_ms  BIGINT  NOT NULL,
    finished_at_ms BIGINT,
    result         TEXT,
    reason         TEXT,
    -- absolute turn-clock deadline, unix ms; NULL when no clock is running
    deadline_ms    BIGINT
);

CREATE INDEX games_room_idx ON games (room_code, created_at_ms);

-- Append-only: rows are inserted, never updated.
CREATE TABLE game_events (
    game_id       UUID    NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seq           BIGINT  NOT NULL,
    event         TEXT    NOT NULL,
    created_at_ms BIGINT  NOT NULL,
    CONSTRAINT game_events_game_seq_key UNIQUE (game_id, seq)
);
