import urllib.request, time, re, sys
port=sys.argv[1]; dur=float(sys.argv[2])
prev=None; t0=time.time()
while time.time()-t0<dur:
    try:
        txt=urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",timeout=2).read().decode()
    except Exception as e:
        time.sleep(0.5); continue
    def g(pat):
        m=re.search(pat+r' (\S+)',txt); return float(m.group(1)) if m else 0
    cur=(g(r'parchis_action_latency_seconds_count'), g(r'parchis_action_latency_seconds_bucket\{le="0.05"\}'), g(r'parchis_action_latency_seconds_bucket\{le="0.25"\}'), g(r'parchis_store_commit_duration_seconds_count'), g(r'parchis_store_commit_duration_seconds_bucket\{le="0.025"\}'), g(r'parchis_store_commit_duration_seconds_sum'))
    if prev:
        d=[a-b for a,b in zip(cur,prev)]
        print(f"{time.time()-t0:5.1f} actions={d[0]:5.0f} >50ms={d[0]-d[1]:4.0f} >250ms={d[0]-d[2]:4.0f} commits={d[3]:4.0f} >25ms={d[3]-d[4]:3.0f} commit_s={d[5]:.2f}", flush=True)
    prev=cur
    time.sleep(0.5)
