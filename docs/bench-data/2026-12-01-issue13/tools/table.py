import json, glob, os, re, subprocess
# Run in the directory of the reports; cpuwin.py is taken from this script's directory.
CPUWIN=os.path.join(os.path.dirname(os.path.abspath(__file__)), 'cpuwin.py')
rows=[]
for f in sorted(glob.glob('20261201T22*Z-*.json')):
    stamp=f.split('-')[0]; hh=stamp[9:15]
    r=json.load(open(f)); l=r['latency_ms']
    kind='3 nodes' if 'cluster3' in f else 'single'
    # cpu/loadavg/run files: tag time <= stamp, closest
    cands=[]
    for c in glob.glob('run-*.txt'):
        t=c.split('-')[-1][:-4]
        if t<=hh: cands.append((t,c))
    t,run=max(cands)
    txt=open(run).read()
    la=re.findall(r'load average: ([\d.]+)', txt)
    cpu=glob.glob(f'cpu-*-{t}.jsonl')
    end=os.stat(f'{stamp}-metrics-window/node-0.prom').st_mtime
    w=json.loads(subprocess.check_output([CPUWIN,cpu[0],str(end),'30'])) if cpu else {k: float('nan') for k in ['nodes','postgres','nats','loadgen','nice','idle','user','system']}
    s=r['server']
    print(f"| {stamp[9:11]}:{stamp[11:13]} | {kind} | {r['rooms']:,} ({r['rooms']*4:,}) | {r.get('start_rate')} | {la[0]} → {la[1]} | {r['setup_secs']:.1f} s | {r['games_started']:,} in {r['starts_secs']:.1f} s | {r['actions_per_sec']:,.0f} | {l['p50']:.1f} | {l['p90']:.1f} | {l['p99']:.1f} | {l['cross_node_adds']['p50']} / {l['cross_node_adds']['p99']} | {s['cpu_us_per_action']:.0f} | {w['nodes']:.2f} / {w['postgres']:.2f} / {w['nats']:.2f} / {w['loadgen']:.2f} | {w['nice']:.2f} | {w['idle']:.2f} | {r['connections']['min_during_play']:,} | {r['errors'] or 'none'} |")
