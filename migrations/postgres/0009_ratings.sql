-- Ratings per account and pool, and their history (issue 26). A pool is a rule set's
-- canonical full name (`online`, `classic+two-out`, `pairs`…). Accounts are referenced
-- by id WITHOUT a foreign key for now: the accounts table comes with 0008 in the accounts
-- work, and a deleted account's rows stay (its games stay readable under a neutral name).
-- Keep in step with ../sqlite/0005_ratings.sql.

CREATE TABLE ratings (
    account_id    UUID             NOT NULL,
    pool          TEXT             NOT NULL,
    mu            DOUBLE PRECISION NOT NULL,
    sigma         DOUBLE PRECISION NOT NULL,
    games         BIGINT           NOT NULL,
    updated_at_ms BIGINT           NOT NULL,
    PRIMARY KEY (account_id, pool)
);

-- The leaderboard: a pool's players by the conservative rating μ − 3σ.
CREATE INDEX ratings_leaderboard_idx ON ratings (pool, (mu - 3 * sigma) DESC);

-- One row per game per rated player, written in the transaction that ends the game.
CREATE TABLE rating_history (
    game_id      UUID             NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    account_id   UUID             NOT NULL,
    pool         TEXT             NOT NULL,
    place        INTEGER          NOT NULL,
    mu_before    DOUBLE PRECISION NOT NULL,
    sigma_before DOUBLE PRECISION NOT NULL,
    mu_after     DOUBLE PRECISION NOT NULL,
    sigma_after  DOUBLE PRECISION NOT NULL,
    at_ms        BIGINT           NOT NULL,
    PRIMARY KEY (game_id, account_id)
);

CREATE INDEX rating_history_account_idx ON rating_history (account_id, at_ms);
