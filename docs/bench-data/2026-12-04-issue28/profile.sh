#!/usr/bin/env bash
# perf profile of the release server at R rooms (same flags as relay-vs-server.sh), 6 s mid-window.
# usage: profile.sh R OUT [DATABASE_URL env passes through]
set -u
R=${1:-4900}; OUT=${2:-/work/bench28/perf.data}; D=24
cd /work/main
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
ulimit -n "$(ulimit -Hn)"
port=$(free_port); tmp=$(mktemp -d)
LIMITS="--max-connections 20000 --max-connections-per-address 100000 --room-creations-per-minute 100000000 --max-lobbies-per-address 100000 --lookups-per-minute 100000000 --watches-per-minute 100000000"
( cd "$tmp" && PARCHIS_LOG=warn exec taskset -c 0 /work/main/target/release/parchis-server --port $port --data-dir "$tmp/data" $LIMITS >server.log 2>&1 ) & sp=$!
trap 'kill $sp 2>/dev/null' EXIT
for i in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
taskset -c 1 ./target/release/parchis-loadgen --url http://127.0.0.1:$port --rooms "$R" --think-ms 1000 \
  --duration-secs "$D" --source-addrs 127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4 --server-pid $sp >"$tmp/lg.json" 2>"$tmp/lg.err" & lg=$!
# wait until the rooms are created and play has begun: loadgen prints to stderr? sleep a fixed share
sleep $((R/250 + 12))
perf record -e cpu-clock -F 999 --call-graph dwarf,16384 -o "$OUT" -p $sp -- sleep 6 2>/dev/null
wait $lg
tail -c 600 "$tmp/lg.json"
