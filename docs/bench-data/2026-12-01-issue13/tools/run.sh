#!/bin/bash
# $1 mode, $2 rooms; extra env passed through to scripts/bench-cluster.sh.
# Runs from the checkout this file is in (four levels up); DB, PREFIX and BASE_PORT may be
# set in the environment (defaults below).
tools=$(cd "$(dirname "$0")" && pwd)
cd "$tools/../../../.."
tag=$1-$2-$(date -u +%H%M%S)
( while true; do echo "$(date -u +%T) $(cat /proc/loadavg)"; sleep 20; done ) > bench-out/loadavg-$tag.txt &
sp=$!
"$tools/cpu.py" > bench-out/cpu-$tag.jsonl &
cp=$!
DB=${DB:-parchis_bench} BASE_PORT=${BASE_PORT:-20301} PREFIX=${PREFIX:-parchis-bench} NO_BUILD=1 NICE=-10 OUT=bench-out scripts/bench-cluster.sh "$1" "$2" > bench-out/run-$tag.txt 2>&1
echo "rc=$?" >> bench-out/run-$tag.txt
kill $sp $cp
