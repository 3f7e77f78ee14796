-- Championships (issue 27, docs/TOURNAMENTS.md): a tournament is stored as the log of its
-- director's events (`parchis_tournament::Entry` as JSON text, format version inside),
-- replayed by `Tournament::from_entries` when its director starts. Appends are
-- write-ahead: the director stores an input's events before it acts on them.
-- Keep in step with ../postgres/0010_tournaments.sql.

CREATE TABLE tournaments (
    id            TEXT    PRIMARY KEY,
    created_at_ms INTEGER NOT NULL
);

CREATE TABLE tournament_entries (
    tournament_id TEXT    NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    entry         TEXT    NOT NULL,
    PRIMARY KEY (tournament_id, seq)
);
