import os, time, sys
def snap():
    tot={}
    for p in os.listdir('/proc'):
        if not p.isdigit(): continue
        try:
            st=open(f'/proc/{p}/stat').read()
        except: continue
        name=st[st.index('(')+1:st.rindex(')')]
        f=st[st.rindex(')')+2:].split()
        t=(int(f[11])+int(f[12]))/os.sysconf('SC_CLK_TCK')
        key='postgres' if name.startswith('postgres') else name
        tot[key]=tot.get(key,0)+t
    return tot
dur=float(sys.argv[1]); a=snap(); t0=time.time(); time.sleep(dur); b=snap(); dt=time.time()-t0
for k in ['postgres','nats-server','parchis-server','parchis-loadgen']:
    print(k, round((b.get(k,0)-a.get(k,0))/dt,3))
