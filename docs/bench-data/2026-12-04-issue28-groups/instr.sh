#!/usr/bin/env bash
# Instructions (user, kernel) per action of the release server at R rooms: perf stat on the server for 10 s mid-run,
# divided by the actions/s the loadgen reports. Robust to other load on the machine, unlike CPU time.
set -u
R=${1:-4900}; D=30; BIN=${BIN:-/work/main/target/release}
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
ulimit -n "$(ulimit -Hn)"
port=$(free_port); tmp=$(mktemp -d)
LIMITS="--max-connections 20000 --max-connections-per-address 100000 --room-creations-per-minute 100000000 --max-lobbies-per-address 100000 --lookups-per-minute 100000000 --watches-per-minute 100000000"
( cd "$tmp" && PARCHIS_LOG=warn exec taskset -c 0 $BIN/parchis-server --port $port --data-dir "$tmp/data" $LIMITS >server.log 2>&1 ) & sp=$!
trap 'kill $sp 2>/dev/null' EXIT
for i in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
taskset -c 1 $BIN/parchis-loadgen --url http://127.0.0.1:$port --rooms "$R" --think-ms 1000 \
  --duration-secs "$D" --source-addrs 127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4 --server-pid $sp >"$tmp/lg.json" 2>"$tmp/lg.err" & lg=$!
sleep $((R/250 + 15))
perf stat -x, -e instructions:u,instructions:k,context-switches -p $sp -o "$tmp/stat.txt" -- sleep 10
wait $lg
python3 - "$tmp/lg.json" "$tmp/stat.txt" <<'PY'
import json,sys
t=open(sys.argv[1]).read(); j=json.loads(t[t.index('{'):]); aps=float(j.get('actions_per_sec') or 0)
st={}
for line in open(sys.argv[2]):
    p=line.strip().split(',')
    if len(p)>3 and p[0].replace('.','').isdigit(): st[p[2]]=float(p[0])
n=aps*10
print(f"aps {aps:.0f} cpu_us {(j.get('server') or {}).get('cpu_us_per_action'):.0f} p99 {(j.get('latency_ms') or {}).get('p99')} | per action: user {st.get('instructions:u',0)/n/1e3:.0f}k instr, kernel {st.get('instructions:k',0)/n/1e3:.0f}k instr, {st.get('context-switches',0)/n:.2f} switches")
PY
