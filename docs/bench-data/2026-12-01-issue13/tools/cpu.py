#!/usr/bin/env python3
# Samples every second: machine CPU (/proc/stat user, nice, system...), and cumulative CPU
# seconds of postgres, nats-server, parchis-server, parchis-loadgen processes. Prints JSON lines.
import os, time, json, sys
HZ = os.sysconf('SC_CLK_TCK')
def procs():
    out = {}
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try:
            with open(f'/proc/{pid}/stat') as f: s = f.read()
        except OSError: continue
        name = s[s.index('(')+1:s.rindex(')')]
        f = s[s.rindex(')')+2:].split()
        cpu = (int(f[11]) + int(f[12])) / HZ
        key = {'postgres':'postgres','nats-server':'nats','parchis-server':'nodes','parchis-loadgen':'loadgen'}.get(name)
        if key: out[key] = out.get(key, 0) + cpu
    return out
while True:
    with open('/proc/stat') as f: cpu = f.readline().split()[1:]
    c = list(map(int, cpu))
    rec = {'t': time.time(), 'user': c[0]/HZ, 'nice': c[1]/HZ, 'system': c[2]/HZ, 'idle': (c[3]+c[4])/HZ, 'irq': (c[5]+c[6]+c[7])/HZ}
    rec.update(procs())
    print(json.dumps(rec), flush=True)
    time.sleep(1)
