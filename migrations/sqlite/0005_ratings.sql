-- Ratings per account and pool, and their history (issue 26). A pool is a rule set's
-- canonical full name (`online`, `classic+two-out`, `pairs`…). Accounts are referenced
-- by id (hyphenated lowercase text) WITHOUT a foreign key for now: the accounts table
-- comes with 0004 in the accounts work, and a deleted account's rows stay (its games stay
-- readable under a neutral name). Keep in step with ../postgres/0009_ratings.sql.

CREATE TABLE ratings (
    account_id    TEXT    NOT NULL,
    pool          TEXT    NOT NULL,
    mu            REAL    NOT NULL,
    sigma         REAL    NOT NULL,
    games         INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    PRIMARY KEY (account_id, pool)
);

-- The leaderboard: a pool's players by the conservative rating μ − 3σ.
CREATE INDEX ratings_leaderboard_idx ON ratings (pool, (mu - 3 * sigma) DESC);

-- One row per game per rated player, written in the transaction that ends the game.
CREATE TABLE rating_history (
    game_id      TEXT    NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    account_id   TEXT    NOT NULL,
    pool         TEXT    NOT NULL,
    place        INTEGER NOT NULL,
    mu_before    REAL    NOT NULL,
    sigma_before REAL    NOT NULL,
    mu_after     REAL    NOT NULL,
    sigma_after  REAL    NOT NULL,
    at_ms        INTEGER NOT NULL,
    PRIMARY KEY (game_id, account_id)
);

CREATE INDEX rating_history_account_idx ON rating_history (account_id, at_ms);
