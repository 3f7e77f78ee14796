#!/usr/bin/env bash
for spec in "after 4900" "before 4900" "after 4900" "before 2000" "after 2000"; do
  set -- $spec
  echo "== sqlite $1 $2 rooms, $(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg)"
  ( cd /work/bench29/${1}root && timeout 400 /work/shared/bench/relay-vs-server.sh $2 20 2>&1 | tail -1 )
done
for spec in "after 2000" "before 2000"; do
  set -- $spec
  db=bench29_$1_$(date +%s)
  createdb -h 127.0.0.1 -U postgres $db
  echo "== postgres $1 $2 rooms, $(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg)"
  ( cd /work/bench29/${1}root && DATABASE_URL=postgres://postgres@127.0.0.1:5432/$db timeout 400 /work/shared/bench/relay-vs-server.sh $2 20 2>&1 | tail -1 )
  dropdb -h 127.0.0.1 -U postgres $db
done
