#!/usr/bin/env bash
# Before (8824524) and after (this session) interleaved, relay-vs-server.sh, one core each.
for spec in "after 4900" "before 4900" "after 4900" "before 4900" "after 2000" "before 2000"; do
  set -- $spec
  echo "== $1 $2 rooms, $(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg)"
  ( cd /work/bench29/${1}root && timeout 400 /work/shared/bench/relay-vs-server.sh $2 20 2>&1 | tail -1 )
done
