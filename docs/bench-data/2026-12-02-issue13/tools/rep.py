import json,sys
for f in sys.argv[1:]:
    r=json.load(open(f))
    L=r['latency_ms']; s=r['server']; lg=r['loadgen']
    print(f.split('/')[-1], f"rooms={r['rooms']} started={r['games_started']} act/s={r['actions_per_sec']:.0f} p50={L['p50']:.1f} p90={L['p90']:.1f} p99={L['p99']:.1f} max={L['max']:.0f} xadd50={L['cross_node_adds']['p50']} xadd99={L['cross_node_adds']['p99']} srv_us/act={s['cpu_us_per_action']:.0f} srv_cores={s['cpu_secs_during_play']/r['measured_secs']:.2f} lg_cores={lg['cpu_share_during_play']:.2f} lg_us/act={lg['cpu_secs_during_play']/r['actions']*1e6:.0f} errors={r.get('errors')} minconn={r['connections']['min_during_play']}")
