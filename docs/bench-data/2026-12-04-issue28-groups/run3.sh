#!/usr/bin/env bash
# 8110084 (no defer_foreign_keys pragmas) against 8824524, interleaved.
for spec in "after 4900" "before 4900" "after 4900" "after 2000"; do
  set -- $spec
  echo "== sqlite $1 $2 rooms, $(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg)"
  ( cd /work/bench29/${1}root && timeout 400 /work/shared/bench/relay-vs-server.sh $2 20 2>&1 | tail -1 )
done
