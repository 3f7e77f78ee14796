#!/usr/bin/env python3
# usage: cpuwin.py samples.jsonl window_end_epoch secs -> CPU cores used per category in the window
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
end = float(sys.argv[2]); secs = float(sys.argv[3]); start = end - secs
def at(t): return min(rows, key=lambda r: abs(r['t'] - t))
a, b = at(start), at(end)
dt = b['t'] - a['t']
out = {'window_s': round(dt, 1)}
for k in ['user', 'nice', 'system', 'irq', 'idle', 'postgres', 'nats', 'nodes', 'loadgen']:
    if k in a and k in b: out[k] = round((b[k] - a[k]) / dt, 3)
print(json.dumps(out))
