#!/usr/bin/env bash
# Group sizes and commit durations under load: runs the release server (pinned to core 0) and the loadgen (core 1)
# at R rooms for D s and prints the store's commit metrics scraped at the end of the run.
set -u
R=${1:-4900}; D=${2:-25}; BIN=${BIN:-/work/main/target/release}
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
ulimit -n "$(ulimit -Hn)"
port=$(free_port); tmp=$(mktemp -d)
LIMITS="--max-connections 20000 --max-connections-per-address 100000 --room-creations-per-minute 100000000 --max-lobbies-per-address 100000 --lookups-per-minute 100000000 --watches-per-minute 100000000"
( cd "$tmp" && PARCHIS_LOG=warn exec taskset -c 0 $BIN/parchis-server --port $port --data-dir "$tmp/data" $LIMITS >server.log 2>&1 ) & sp=$!
trap 'kill $sp 2>/dev/null' EXIT
for i in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
taskset -c 1 $BIN/parchis-loadgen --url http://127.0.0.1:$port --rooms "$R" --think-ms 1000 \
  --duration-secs "$D" --source-addrs 127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4 --server-pid $sp >"$tmp/lg.json" 2>"$tmp/lg.err"
curl -s "http://127.0.0.1:$port/metrics" | grep -E "parchis_store_commit_(group_size|duration_seconds)|parchis_action_latency" 
python3 -c "
import json,sys; t=open('$tmp/lg.json').read(); j=json.loads(t[t.index('{'):])
print('aps', j.get('actions_per_sec'), 'cpu_us', (j.get('server') or {}).get('cpu_us_per_action'), 'p99', (j.get('latency_ms') or {}).get('p99'))"
