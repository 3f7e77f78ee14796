#!/bin/bash
# Runs from the checkout this file is in (four levels up); the node's data, log, report
# and metrics go to $REPRO (default ${TMPDIR:-/tmp}/parchis-repro).
cd "$(dirname "$0")/../../../.."
REPRO=${REPRO:-${TMPDIR:-/tmp}/parchis-repro}
rm -rf "$REPRO/data"; mkdir -p "$REPRO/data"
PARCHIS_PING_INTERVAL_SECS=1 PARCHIS_PONG_TIMEOUT_SECS=1 PARCHIS_LOG=info target/debug/parchis-server --bind 127.0.0.1 --port 20310 --data-dir "$REPRO/data" \
  --max-connections 19500 --max-connections-per-address 100000 --room-creations-per-minute 100000000 --max-lobbies-per-address 100000 --lookups-per-minute 100000000 --watches-per-minute 100000000 > "$REPRO/node.log" 2>&1 &
pid=$!
for i in $(seq 100); do curl -sf http://127.0.0.1:20310/readyz >/dev/null && break; sleep 0.1; done
target/debug/parchis-loadgen --url http://127.0.0.1:20310 --rooms 60 --setup-concurrency 1 --warmup-secs 2 --duration-secs 5 --setup-timeout-secs 30 > "$REPRO/report.json"
curl -s http://127.0.0.1:20310/metrics | grep -E 'kicked|parchis_ws' > "$REPRO/metrics.txt"
kill -TERM $pid; wait $pid
