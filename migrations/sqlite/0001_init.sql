-- Parchís store schema, SQLite flavour.
-- Times are unix milliseconds (INTEGER = i64). JSON documents are stored as TEXT.
-- Keep in step with ../postgres/0001_init.sql: both backends must behave alike.

CREATE TABLE rooms (
    code           TEXT    NOT NULL PRIMARY KEY,
    settings       TEXT    NOT NULL,
    status         TEXT    NOT NULL CHECK (status IN ('open', 'playing', 'finished')),
    created_at_ms  INTEGER NOT NULL,
    started_at_ms  INTEGER,
    finished_at_ms INTEGER,
    updated_at_ms  INTEGER NOT NULL
);

CREATE INDEX rooms_status_idx ON rooms (status);

CREATE TABLE seats (
    room_code    TEXT    NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
    colour       TEXT    NOT NULL,
    display_name TEXT    NOT NULL,
    -- lowercase hex SHA-256 of the session token; raw tokens are never stored
    token_hash   TEXT    NOT NULL,
    is_creator   BOOLEAN NOT NULL DEFAULT FALSE,
    joined_at_ms INTEGER NOT NULL,
    PRIMARY KEY (room_code, colour)
);

CREATE TABLE games (
    -- hyphenated lowercase UUID text
    id             TEXT    NOT NULL PRIMARY KEY,
    room_code      TEXT    NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
    preset         TEXT    NOT NULL,
    rules          TEXT    NOT NULL,
    rules_hash     TEXT    NOT NULL,
    created_at_ms  INTEGER NOT NULL,
    finished_at_ms INTEGER,
    result         TEXT,
    reason         TEXT,
    -- absolute turn-clock deadline, unix ms; NULL when no clock is running
    deadline_ms    INTEGER
);

CREATE INDEX games_room_idx ON games (room_code, created_at_ms);

-- Append-only: rows are inserted, never updated.
CREATE TABLE game_events (
    game_id       TEXT    NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    event         TEXT    NOT NULL,
    created_at_ms INTEGER NOT NULL,
    CONSTRAINT game_events_game_seq_key UNIQUE (game_id, seq)
);
