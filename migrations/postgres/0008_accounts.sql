-- Accounts and sessions (issue 26). Keep in step with ../sqlite/0004_accounts.sql.
-- Ids are UUID v7.

-- One row per account, kept after deletion (scrubbed: `username` becomes the neutral
-- "deleted player", `username_key` 'deleted:<id>', `password_hash` empty) so that rows
-- elsewhere that name the account (ratings) stay valid.
CREATE TABLE accounts (
    id                     UUID    NOT NULL PRIMARY KEY,
    -- as typed at sign-up (3 to 20 of [A-Za-z0-9_-])
    username               TEXT    NOT NULL,
    -- the username's confusables skeleton, lowercased: two names with one key are one name
    username_key           TEXT    NOT NULL,
    -- Argon2id PHC string; never logged
    password_hash          TEXT    NOT NULL,
    created_at_ms          BIGINT  NOT NULL,
    password_changed_at_ms BIGINT  NOT NULL,
    deleted_at_ms          BIGINT,
    banned_at_ms           BIGINT
);
CREATE UNIQUE INDEX accounts_live_username_key ON accounts (username_key)
    WHERE deleted_at_ms IS NULL;

-- A deleted account's username key may not be taken again before `until_ms`.
CREATE TABLE username_reservations (
    username_key TEXT    NOT NULL PRIMARY KEY,
    until_ms     BIGINT  NOT NULL
);

-- The ten one-time recovery codes shown at sign-up: lowercase hex SHA-256 of each.
CREATE TABLE account_recovery_codes (
    account_id UUID    NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    code_hash  TEXT    NOT NULL,
    used_at_ms BIGINT,
    PRIMARY KEY (account_id, code_hash)
);

-- Bearer tokens of apps (POST /api/session): lowercase hex SHA-256 of the token.
CREATE TABLE account_tokens (
    token_hash    TEXT    NOT NULL PRIMARY KEY,
    account_id    UUID    NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at_ms BIGINT  NOT NULL,
    used_at_ms    BIGINT  NOT NULL
);
CREATE INDEX account_tokens_account_idx ON account_tokens (account_id);

-- Who blocked whom.
CREATE TABLE account_blocks (
    account_id    UUID    NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    blocked_id    UUID    NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at_ms BIGINT  NOT NULL,
    PRIMARY KEY (account_id, blocked_id)
);

-- A logged-in player's seat names their account (no foreign key: a seat is the room's
-- write and must never fail on an account row).
ALTER TABLE seats ADD COLUMN account_id UUID;
CREATE INDEX seats_account_idx ON seats (account_id) WHERE account_id IS NOT NULL;

-- The cookie sessions of tower-sessions-sqlx-store's PostgresStore (its `migrate()`
-- schema), in the schema the store's tables are in (the server names it to the session
-- store: `current_schema()`), not in a schema of its own.
CREATE TABLE IF NOT EXISTS tower_sessions (
    id          TEXT        PRIMARY KEY NOT NULL,
    data        BYTEA       NOT NULL,
    expiry_date TIMESTAMPTZ NOT NULL
);
