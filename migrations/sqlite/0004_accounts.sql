-- Accounts and sessions (issue 26). Keep in step with ../postgres/0008_accounts.sql.
-- Ids are hyphenated lowercase UUID v7 text, as games' ids are on SQLite.

-- One row per account, kept after deletion (scrubbed: `username` becomes the neutral
-- "deleted player", `username_key` 'deleted:<id>', `password_hash` empty) so that rows
-- elsewhere that name the account (ratings) stay valid.
CREATE TABLE accounts (
    id                     TEXT    NOT NULL PRIMARY KEY,
    -- as typed at sign-up (3 to 20 of [A-Za-z0-9_-])
    username               TEXT    NOT NULL,
    -- the username's confusables skeleton, lowercased: two names with one key are one name
    username_key           TEXT    NOT NULL,
    -- Argon2id PHC string; never logged
    password_hash          TEXT    NOT NULL,
    created_at_ms          INTEGER NOT NULL,
    password_changed_at_ms INTEGER NOT NULL,
    deleted_at_ms          INTEGER,
    banned_at_ms           INTEGER
);
CREATE UNIQUE INDEX accounts_live_username_key ON accounts (username_key)
    WHERE deleted_at_ms IS NULL;

-- A deleted account's username key may not be taken again before `until_ms`.
CREATE TABLE username_reservations (
    username_key TEXT    NOT NULL PRIMARY KEY,
    until_ms     INTEGER NOT NULL
);

-- The ten one-time recovery codes shown at sign-up: lowercase hex SHA-256 of each.
CREATE TABLE account_recovery_codes (
    account_id TEXT    NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    code_hash  TEXT    NOT NULL,
    used_at_ms INTEGER,
    PRIMARY KEY (account_id, code_hash)
);

-- Bearer tokens of apps (POST /api/session): lowercase hex SHA-256 of the token.
CREATE TABLE account_tokens (
    token_hash    TEXT    NOT NULL PRIMARY KEY,
    account_id    TEXT    NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at_ms INTEGER NOT NULL,
    used_at_ms    INTEGER NOT NULL
);
CREATE INDEX account_tokens_account_idx ON account_tokens (account_id);

-- Who blocked whom.
CREATE TABLE account_blocks (
    account_id    TEXT    NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    blocked_id    TEXT    NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (account_id, blocked_id)
);

-- A logged-in player's seat names their account (no foreign key: a seat is the room's
-- write and must never fail on an account row).
ALTER TABLE seats ADD COLUMN account_id TEXT;
CREATE INDEX seats_account_idx ON seats (account_id) WHERE account_id IS NOT NULL;

-- The cookie sessions of tower-sessions-sqlx-store's SqliteStore (its `migrate()` schema,
-- created here so that the server's start stays one migration run).
CREATE TABLE IF NOT EXISTS tower_sessions (
    id          TEXT    PRIMARY KEY NOT NULL,
    data        BLOB    NOT NULL,
    expiry_date INTEGER NOT NULL
);
