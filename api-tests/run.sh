#!/usr/bin/env bash
# The HTTP API as a contract (issue 31), against a real server process:
#   1. the TypeScript client generated from proto/openapi.json (openapi-typescript types,
#      openapi-fetch; ts-client/, pinned by its package-lock.json) creates a room, reads
#      the lobby and reads a finished bot game;
#   2. schemathesis (pinned in schemathesis/requirements.txt, installed into a venv under
#      the cargo target directory) fuzzes every operation of the served OpenAPI document,
#      a bounded number of examples each plus the stateful links, and fails on any 5xx,
#      any answer that does not match its schema (body, content type, headers) and any
#      undocumented status.
# Needs Python 3.9+, Node.js 20+ and network access to PyPI and npm the first time.
# Reports go to artifacts/schemathesis/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
EXAMPLES=${SCHEMATHESIS_MAX_EXAMPLES:-50}

cargo build -p parchis-server
BIN="$TARGET/debug/parchis-server"

# schemathesis, exactly the pinned versions, reinstalled when the pins change.
VENV="$TARGET/schemathesis-venv"
REQ="$ROOT/api-tests/schemathesis/requirements.txt"
if ! cmp -s "$REQ" "$VENV/installed-requirements.txt" 2>/dev/null; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQ"
    cp "$REQ" "$VENV/installed-requirements.txt"
fi

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
DATA=$(mktemp -d)
TOKEN="api-tests-admin-token"
LOG="$ROOT/artifacts/schemathesis/server.log"
mkdir -p "$ROOT/artifacts/schemathesis"
# A fresh SQLite store; limits high enough for a fuzzer on one address (the limits' own
# answers are still documented and checked when they come; the accounts' sign-up and
# log-in rates, 10 an hour and 20 a minute by default, would otherwise answer nearly
# every sign-up and log-in 429 and leave their other answers unfuzzed); bots at full speed.
# Tournaments: the fuzzer's account organises at most 3 unfinished ones, each filled with
# at most 4 bot entrants (a fuzzed `bot_fill` of 256 would otherwise start 128 bot games).
env -u DATABASE_URL -u PARCHIS_NATS_URL "$BIN" --port "$PORT" --data-dir "$DATA" \
    --admin-token "$TOKEN" \
    --room-creations-per-minute 1000000 --max-lobbies-per-address 1000000 \
    --max-bot-rooms-per-address 100000 --max-bot-rooms 100000 --max-rooms 1000000 \
    --lookups-per-minute 1000000 --min-unwatched-bot-think-ms 0 \
    --signups-per-hour 1000000 --logins-per-minute 1000000 \
    --logins-per-hour-per-username 1000000 \
    --max-open-tournaments-per-account 3 --max-tournament-bot-fill 4 \
    --public-url "http://127.0.0.1:$PORT" >"$LOG" 2>&1 &
SERVER=$!
cleanup() {
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
    rm -rf "$DATA"
}
trap cleanup EXIT
URL="http://127.0.0.1:$PORT"
for _ in $(seq 1 100); do
    curl -fs "$URL/readyz" >/dev/null && break
    sleep 0.2
done
curl -fs "$URL/readyz" >/dev/null || { echo "the server did not start" >&2; cat "$LOG" >&2; exit 1; }

# The generated TypeScript client first: its finished bot game gives the fuzzer's
# stateful phase stored games to follow links to.
(
    cd api-tests/ts-client
    [ -d node_modules/openapi-fetch ] || npm ci --no-audit --no-fund
    npm run --silent generate
    npm run --silent build
    PARCHIS_URL="$URL" node --experimental-websocket --test dist/
)

# Two accounts for the logged-in player's routes (schemathesis/schemathesis.toml): one
# for `/api/me…`, one for the tournaments and quick pairing.
sign_up() {
    curl -fs -X POST -H 'Content-Type: application/json' \
        -d "{\"username\": \"$1\", \"password\": \"fuzzing-password-31\"}" "$URL/api/accounts" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])'
}
ACCOUNT_TOKEN=$(sign_up fuzzer)
PLAYER_TOKEN=$(sign_up tourney-player-31)
# The account the admin routes act on instead of those two (schemathesis/hooks.py).
sign_up fuzz-target >/dev/null

started=$(date +%s)
FUZZ_ADMIN_TOKEN="$TOKEN" FUZZ_ACCOUNT_TOKEN="$ACCOUNT_TOKEN" FUZZ_PLAYER_TOKEN="$PLAYER_TOKEN" \
"$VENV/bin/schemathesis" --config-file "$ROOT/api-tests/schemathesis/schemathesis.toml" \
    run "$URL/api/openapi.json" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
    --phases examples,coverage,fuzzing,stateful \
    --max-examples "$EXAMPLES" --seed 31 --workers 2 \
    --report junit,ndjson --report-dir "$ROOT/artifacts/schemathesis" \
    --report-ndjson-path "$ROOT/artifacts/schemathesis/report.ndjson"
echo "schemathesis: $(( $(date +%s) - started )) s; examples per operation and phase:"
echo "tournaments the fuzzer created: $(curl -fs "$URL/api/tournaments" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["tournaments"]))')"
python3 api-tests/schemathesis/counts.py "$ROOT/artifacts/schemathesis/report.ndjson" proto/openapi.json
