#!/usr/bin/env bash
# Instructions per game action, counted by callgrind (repeatable on a busy machine):
#
#   scripts/callgrind-cluster.sh single|cluster ROOMS SECS OUTDIR
#
# The nodes (1, or 3 on NATS) run under `valgrind --tool=callgrind` with instrumentation
# off until a window, the load generator natively (one action per second per room, every
# room and socket on a node drawn at random, seed 7). Two windows of SECS seconds, each
# dumped per node to OUTDIR/cg.MODE.NODE.PID.N: .1 idle (no rooms yet), .2 playing (from
# 5 s after every game started). Instructions per action = the .2 files' totals summed
# over the nodes / the actions applied inside the windows: the calls of Game::apply in
# the .2 files ("applied" in OUTDIR/actions-MODE.txt; the actions the nodes counted in
# /metrics around the window are there too, but on a loaded machine the callgrind_control
# calls take seconds and that count covers more than the windows: docs/BENCHMARKS.md,
# "CPU per action"). Build first: `cargo build --profile profiling -p parchis-server -p
# parchis-loadgen`. Environment: BIN [target/profiling], DB [parchis_prof, dropped and
# created], PG [postgres://postgres@127.0.0.1:5432], NATS [nats://127.0.0.1:4222],
# PREFIX [parchis-cg-$$] (NATS subject prefix), BASE [18551] (node i on BASE + i), LOCK
# [none] (a lock file, e.g. ${TMPDIR:-/tmp}/parchis-load.lock, held with flock for the
# run when set). Relative paths (BIN, OUTDIR) are from the repository root. Leases
# are 20 s (callgrind slows the nodes many times). The actions file also has the link
# messages the owners published to edges and the P.edge messages carrying them, counted
# around the window like the actions.
set -euo pipefail
mode=${1:?usage: $0 single|cluster ROOMS SECS OUTDIR} rooms=$2 secs=$3 out=$4
LOCK=${LOCK:-}
if [[ -n $LOCK && -z ${BENCH_LOCKED:-} ]]; then
  exec env BENCH_LOCKED=1 flock "$LOCK" "$0" "$@"
fi
cd "$(dirname "$0")/.."
BIN=${BIN:-target/profiling}
NATS=${NATS:-nats://127.0.0.1:4222}
DB=${DB:-parchis_prof}
PG=${PG:-postgres://postgres@127.0.0.1:5432}
PREFIX=${PREFIX:-parchis-cg-$$}
BASE=${BASE:-18551}
mkdir -p "$out"
psql "$PG/postgres" -qAt -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
n=1; [[ $mode == cluster ]] && n=3
NODE_ARGS=(--max-connections 19500 --max-connections-per-address 100000
  --room-creations-per-minute 100000000 --max-lobbies-per-address 100000
  --lookups-per-minute 100000000 --watches-per-minute 100000000)
pids=(); urls=(); ports=()
for ((i = 0; i < n; i++)); do
  port=$((BASE + i)); ports+=($port)
  args=(--bind 127.0.0.1 --port "$port" "${NODE_ARGS[@]}")
  [[ $mode == cluster ]] && args+=(--nats-url "$NATS" --cluster "$PREFIX" --node-id "p$i" --lease-ttl-ms 20000)
  DATABASE_URL="$PG/$DB" PARCHIS_LOG=warn valgrind --tool=callgrind --instr-atstart=no \
    --callgrind-out-file="$out/cg.$mode.$i.%p" "$BIN/parchis-server" "${args[@]}" >"$out/node-$i.log" 2>&1 &
  pids+=($!); urls+=(--url "http://127.0.0.1:$port")
done
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait; }
trap cleanup EXIT
for port in "${ports[@]}"; do
  for _ in $(seq 1200); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
done
metric() { local s=0 v; for port in "${ports[@]}"; do
  v=$(curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 ~ "^"m"({|$)" {s+=$2} END {print s+0}'); s=$((s + ${v%.*})); done; echo $s; }
ctl() { for p in "${pids[@]}"; do callgrind_control "$@" "$p" >/dev/null; done; }
sleep 3
ctl -i on; sleep "$secs"; ctl -d; ctl -i off
echo "idle window done"
"$BIN/parchis-loadgen" "${urls[@]}" --rooms "$rooms" --think-ms 1000 \
  --warmup-secs 2 --duration-secs $((secs + 40)) --seed 7 >"$out/loadgen-$mode.json" 2>"$out/loadgen.err" &
lg=$!
for _ in $(seq 600); do [[ $(metric parchis_games_started_total) -ge $rooms ]] && break; sleep 0.5; done
sleep 5
a1=$(metric parchis_actions_total); l1=$(metric parchis_cluster_frames_published_total)
e1=$(metric parchis_cluster_edge_messages_published_total); ctl -i on; t1=$(date +%s.%N)
sleep "$secs"
ctl -d; t2=$(date +%s.%N); a2=$(metric parchis_actions_total); ctl -i off
l2=$(metric parchis_cluster_frames_published_total); e2=$(metric parchis_cluster_edge_messages_published_total)
echo "actions $a1 -> $a2 = $((a2 - a1)) in $(echo "$t2 - $t1" | bc) s" | tee "$out/actions-$mode.txt"
# Over the same span as those actions: link messages (one per relayed socket and frame)
# and the P.edge NATS messages that carried them (0 from a build before grouping: one each).
echo "edge link messages $((l2 - l1)), P.edge messages $((e2 - e1))" | tee -a "$out/actions-$mode.txt"
files=(); for ((i = 0; i < n; i++)); do files+=("$out/cg.$mode.$i.${pids[i]}.2"); done
# Callgrind compresses names: "cfn=(id) name" the first time in a file, "cfn=(id)" after.
applied=$(awk '
  FNR == 1 { delete names }
  /^c?fn=/ {
    id = $1; sub(/^c?fn=/, "", id)
    name = $0; sub(/^c?fn=\([0-9]+\) ?/, "", name)
    if (name != "") names[id] = name
    want = ($0 ~ /^cfn=/) && index(names[id], "parchis_engine::game::Game>::apply") > 0
    next
  }
  /^calls=/ { if (want) { split($0, a, /[= ]/); c += a[2] } want = 0; next }
  END { print c + 0 }' "${files[@]}")
ir=$(for f in "${files[@]}"; do awk '/^summary:/ {print $2; exit}' "$f"; done | paste -sd+ | bc)
echo "applied $applied, instructions $ir, per action $((ir / (applied > 0 ? applied : 1)))" | tee -a "$out/actions-$mode.txt"
wait $lg || true
