#!/usr/bin/env bash
# Reproduces the cluster benchmarks of docs/BENCHMARKS.md ("Cluster"): the same total load
# on one node (single-node mode, PostgreSQL) and on N cluster nodes (PostgreSQL + NATS),
# then the failover measurement (kill -9 the owner of a watched room, N times).
#
#   scripts/bench-cluster.sh single  ROOMS      # one node, ROOMS rooms
#   scripts/bench-cluster.sh cluster ROOMS      # NODES nodes, ROOMS rooms in total
#   scripts/bench-cluster.sh failover           # KILLS kills of a room's owner
#
# Environment (defaults in brackets):
#   NODES [3]          cluster nodes
#   PROCESSES [2]      load-generator processes (each holds its share of the sockets;
#                      the open-file limit is per process)
#   THINK_MS [1000]    think time: 1000 ≈ one action per second per room
#   START_RATE [250]   games started per second once the rooms are set up (the load
#                      generator's --start-rate: players trickle in; 0: every game within
#                      one think time, the burst of the runs before 2026-12-01 22:30 UTC)
#   WARMUP [5] DURATION [30]  seconds
#   KILLS [20]         failover rounds
#   PGURL [postgres://postgres@127.0.0.1:5432]   PostgreSQL server (trust auth)
#   DB [parchis_bench]  database, dropped and created for each run
#   NATS [nats://127.0.0.1:4222]
#   PREFIX [parchis-bench-$$]   NATS subject prefix (--cluster): your own on a shared NATS
#   BASE_PORT [18401]  node i listens on BASE_PORT + i
#   OUT [bench-out]    reports (JSON), node logs, and each node's /metrics at the end of
#                      the measured window (STAMP-metrics-window/node-I.prom, saved by the
#                      load generator) and after the load generator exited, before the
#                      nodes are stopped (STAMP-metrics-after/node-I.prom)
#   PIN [0]            1: nodes, PostgreSQL and NATS on core 0, load generator on core 1
#   NO_BUILD [0]       1: use the release binaries as they are
#   SERVER, LOADGEN    the binaries [target/release/parchis-server, …/parchis-loadgen]
#                      (e.g. a copy of an older build, to compare; with NO_BUILD=1)
#   NICE [0]           niceness of the nodes, the load generator and PostgreSQL during
#                      the run (e.g. -10, as root: other work on a shared machine yields
#                      to the run; PostgreSQL goes back to 0 after it; say so next to the
#                      figures)
#   LOCK [none]        a lock file (e.g. ${TMPDIR:-/tmp}/parchis-load.lock): when set, the
#                      run holds it with flock, so runs sharing it go one at a time
#
# Works from any checkout (paths are relative to the repository the script is in).
# Every run prints `uptime` before and after next to the report.
set -euo pipefail

mode=${1:?usage: $0 single|cluster|failover [ROOMS]}
rooms=${2:-0}
NODES=${NODES:-3}
PROCESSES=${PROCESSES:-2}
THINK_MS=${THINK_MS:-1000}
START_RATE=${START_RATE:-250}
WARMUP=${WARMUP:-5}
DURATION=${DURATION:-30}
KILLS=${KILLS:-20}
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
DB=${DB:-parchis_bench}
NATS=${NATS:-nats://127.0.0.1:4222}
PREFIX=${PREFIX:-parchis-bench-$$}
BASE_PORT=${BASE_PORT:-18401}
OUT=${OUT:-bench-out}
PIN=${PIN:-0}
NICE=${NICE:-0}
LOCK=${LOCK:-}

if [[ -n $LOCK && -z ${BENCH_LOCKED:-} ]]; then
  exec env BENCH_LOCKED=1 flock "$LOCK" "$0" "$@"
fi
cd "$(dirname "$0")/.."
if [[ ${NO_BUILD:-0} != 1 ]]; then
  cargo build --release -p parchis-server -p parchis-loadgen
fi
SERVER=${SERVER:-target/release/parchis-server}
LOADGEN=${LOADGEN:-target/release/parchis-loadgen}
mkdir -p "$OUT"
stamp=$(date -u +%Y%m%dT%H%M%SZ)

fresh_db() {
  psql "$PGURL/postgres" -qAt -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
}

# Limits raised for a load generator that opens thousands of connections from four
# addresses (the checks still run); turn clock 600 s (the load generator's rooms).
NODE_ARGS=(--max-connections 19500 --max-connections-per-address 100000
  --room-creations-per-minute 100000000 --max-lobbies-per-address 100000
  --lookups-per-minute 100000000 --watches-per-minute 100000000)

pids=()
urls=()
start_nodes() { # $1: number of nodes, $2: cluster (1) or single-node mode (0)
  local n=$1 cluster=$2 i port
  for ((i = 0; i < n; i++)); do
    port=$((BASE_PORT + i))
    local args=(--bind 127.0.0.1 --port "$port" "${NODE_ARGS[@]}")
    if [[ $cluster == 1 ]]; then
      args+=(--nats-url "$NATS" --cluster "$PREFIX" --node-id "bench-$i")
    fi
    DATABASE_URL="$PGURL/$DB" PARCHIS_LOG=warn nice -n "$NICE" "$SERVER" "${args[@]}" \
      >"$OUT/$stamp-node-$i.log" 2>&1 &
    pids+=($!)
    urls+=(--url "http://127.0.0.1:$port")
  done
  for ((i = 0; i < n; i++)); do
    port=$((BASE_PORT + i))
    for _ in $(seq 600); do
      curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
      sleep 0.1
    done
    curl -sf "http://127.0.0.1:$port/readyz" >/dev/null || { echo "node $i not ready" >&2; exit 1; }
  done
  if [[ $PIN == 1 ]]; then
    for p in "${pids[@]}" $(pgrep -x nats-server) $(pgrep -x postgres); do
      taskset -a -c -p 0 "$p" >/dev/null || true
    done
  fi
}

stop_nodes() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
  urls=()
  if [[ $PIN == 1 ]]; then
    for p in $(pgrep -x nats-server) $(pgrep -x postgres); do taskset -a -c -p 0-1 "$p" >/dev/null || true; done
  fi
}
# Every node's /metrics into $1/node-I.prom (while the nodes still run).
save_metrics() {
  local dir=$1 i
  mkdir -p "$dir"
  for ((i = 0; i < ${#pids[@]}; i++)); do
    curl -sf --max-time 10 "http://127.0.0.1:$((BASE_PORT + i))/metrics" >"$dir/node-$i.prom" ||
      echo "node $i: no /metrics" >&2
  done
}
renicer=
# PostgreSQL's processes (the postmaster, whose new backends inherit its niceness, and the
# running ones) at $NICE during the run, restored to 0 at the end.
renice_db() {
  [[ $NICE == 0 ]] && return
  while true; do
    for p in $(pgrep -x postgres); do renice -n "$NICE" -p "$p" >/dev/null 2>&1 || true; done
    sleep 1
  done &
  renicer=$!
}
cleanup() {
  if [[ -n $renicer ]]; then
    kill "$renicer" 2>/dev/null || true
    for p in $(pgrep -x postgres); do renice -n 0 -p "$p" >/dev/null 2>&1 || true; done
  fi
  stop_nodes
}
trap cleanup EXIT

load() { # $1: name of the run
  local name=$1 pin=()
  [[ $PIN == 1 ]] && pin=(taskset -c 1)
  local server_pids
  server_pids=$(IFS=,; echo "${pids[*]}")
  echo "== $name: $(uptime)"
  renice_db
  "${pin[@]}" nice -n "$NICE" "$LOADGEN" "${urls[@]}" --rooms "$rooms" --processes "$PROCESSES" \
    --think-ms "$THINK_MS" --warmup-secs "$WARMUP" --duration-secs "$DURATION" \
    --setup-timeout-secs 300 --start-rate "$START_RATE" \
    --metrics-dir "$OUT/$stamp-metrics-window" \
    --source-addrs 127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4 \
    --server-pid "$server_pids" >"$OUT/$stamp-$name.json"
  echo "== $name done: $(uptime)"
  save_metrics "$OUT/$stamp-metrics-after"
  echo "report: $OUT/$stamp-$name.json"
}

echo "open files: $(ulimit -n); PostgreSQL max_connections: $(psql "$PGURL/postgres" -qAt -c 'show max_connections')"
case $mode in
  single)
    fresh_db
    start_nodes 1 0
    load "single-$rooms"
    ;;
  cluster)
    fresh_db
    start_nodes "$NODES" 1
    load "cluster$NODES-$rooms"
    ;;
  failover)
    fresh_db
    echo "== failover: $(uptime)"
    renice_db
    nice -n "$NICE" "$LOADGEN" failover --server-bin "$SERVER" --nodes "$NODES" --kills "$KILLS" \
      --base-port "$BASE_PORT" --nats-url "$NATS" --cluster "$PREFIX" \
      --database-url "$PGURL/$DB" --log-dir "$OUT/$stamp-failover-logs" \
      >"$OUT/$stamp-failover.json"
    echo "== failover done: $(uptime)"
    echo "report: $OUT/$stamp-failover.json"
    ;;
  *)
    echo "unknown mode $mode" >&2
    exit 2
    ;;
esac
