import os, time, sys
dur=float(sys.argv[1]); path='/var/lib/postgresql/fsl.tmp'
fd=os.open(path, os.O_WRONLY|os.O_CREAT, 0o600)
buf=b'x'*8192; t0=time.time(); sec=-1; worst=0; n=0; slow=0
while time.time()-t0<dur:
    a=time.time(); os.pwrite(fd, buf, (n%1024)*8192); os.fdatasync(fd); d=(time.time()-a)*1000; n+=1
    worst=max(worst,d); slow+= d>20
    s=int(time.time()-t0)
    if s!=sec:
        if sec>=0: print(f"{sec:3d}s max={worst:7.1f}ms >20ms={slow}", flush=True)
        sec=s; worst=0; slow=0
    time.sleep(0.01)
os.close(fd); os.unlink(path)
