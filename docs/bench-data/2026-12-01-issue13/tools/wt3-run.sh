#!/bin/bash
# $1 mode, $2 rooms; extra env passed through
cd /work/wt-3
tag=$1-$2-$(date -u +%H%M%S)
( while true; do echo "$(date -u +%T) $(cat /proc/loadavg)"; sleep 20; done ) > bench-out/loadavg-$tag.txt &
sp=$!
/tmp/wt3-cpu.py > bench-out/cpu-$tag.jsonl &
cp=$!
DB=wt3_bench BASE_PORT=20301 PREFIX=wt3-bench NO_BUILD=1 NICE=-10 OUT=bench-out scripts/bench-cluster.sh "$1" "$2" > bench-out/run-$tag.txt 2>&1
echo "rc=$?" >> bench-out/run-$tag.txt
kill $sp $cp
