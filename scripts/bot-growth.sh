#!/usr/bin/env bash
# How much bot games grow the database (docs/BENCHMARKS.md, "Database growth from bot
# games"): plays GAMES bot games (crates/loadgen/examples/bot_growth.rs) against a fresh
# release server on SQLite, then on PostgreSQL, and prints the database size before and
# after. The per-address limits are raised so the run is short; the per-hour figures at
# the default limits are computed from the bytes per game in BENCHMARKS.md.
#
#   scripts/bot-growth.sh [GAMES] [PG_DB]      (defaults: 200, parchis_growth)
#
# Needs: a release build of both binaries (cargo build --release -p parchis-server --bin
# parchis-server, then cargo build --release -p parchis-loadgen --example bot_growth: with
# --example in one command, cargo builds the examples only, not the server), PostgreSQL on
# 127.0.0.1:5432 (trust auth), curl. Works from any checkout (the binaries are the ones of
# the repository the script is in: its ./target, so a CARGO_TARGET_DIR elsewhere needs
# them there). Environment:
# PORT [18090] (the server's), PROFILE [release] (`debug`: the target/debug binaries;
# sizes do not depend on speed), STORES ["sqlite postgres"] (the rounds to run), LOCK [none] (a lock file, e.g.
# ${TMPDIR:-/tmp}/parchis-load.lock, held with flock for the run when set).
set -euo pipefail
LOCK=${LOCK:-}
if [ -n "$LOCK" ] && [ -z "${BOT_GROWTH_LOCKED:-}" ]; then
    BOT_GROWTH_LOCKED=1 exec flock "$LOCK" "$0" "$@"
fi
cd "$(dirname "$0")/.."
GAMES=${1:-200}
PG_DB=${2:-parchis_growth}
PORT=${PORT:-18090}
PROFILE=${PROFILE:-release}
STORES=${STORES:-sqlite postgres}
BIN=./target/$PROFILE/parchis-server
GEN=./target/$PROFILE/examples/bot_growth
LIMITS=(--room-creations-per-minute 1000000 --max-bot-rooms-per-address 1000
        --max-lobbies-per-address 1000 --lookups-per-minute 1000000
        --watches-per-minute 1000000)

start() { # $@: extra env assignments are set by the caller
    PARCHIS_LOG=warn "$BIN" --port "$PORT" "${LIMITS[@]}" "$@" &
    PID=$!
    until curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null; do sleep 0.1; done
}
stop() { kill -TERM "$PID"; wait "$PID" || true; PID=; }
trap '[ -n "${PID:-}" ] && kill "$PID"' EXIT
run() { "$GEN" --addr "127.0.0.1:$PORT" --games "$GAMES" --concurrency 3; }

sqlite_round() {
    local dir
    dir=$(mktemp -d)
    start --data-dir "$dir"
    stop # migrations applied, WAL folded in
    local before
    before=$(stat -c %s "$dir/parchis.db")
    start --data-dir "$dir"
    echo "sqlite: uptime before: $(uptime)"
    run
    echo "sqlite: uptime after: $(uptime)"
    stop
    local after
    after=$(stat -c %s "$dir/parchis.db")
    echo "sqlite: $GAMES games: $before -> $after bytes ($(( (after - before) / GAMES )) per game)"
    rm -rf "$dir"
}

pg_size() {
    psql -h 127.0.0.1 -U postgres -d "$PG_DB" -Atc "SELECT pg_database_size(current_database())"
}

pg_round() {
    dropdb -h 127.0.0.1 -U postgres --if-exists "$PG_DB"
    createdb -h 127.0.0.1 -U postgres "$PG_DB"
    local url="postgres://postgres@127.0.0.1:5432/$PG_DB"
    DATABASE_URL=$url start
    local before
    before=$(pg_size)
    echo "postgres: uptime before: $(uptime)"
    run
    echo "postgres: uptime after: $(uptime)"
    stop
    psql -h 127.0.0.1 -U postgres -d "$PG_DB" -qc "CHECKPOINT" >/dev/null
    local after
    after=$(pg_size)
    echo "postgres: $GAMES games: $before -> $after bytes ($(( (after - before) / GAMES )) per game)"
    dropdb -h 127.0.0.1 -U postgres "$PG_DB"
}

for store in $STORES; do
    case $store in
        sqlite) sqlite_round ;;
        postgres) pg_round ;;
        *) echo "unknown store: $store" >&2; exit 2 ;;
    esac
done
