#!/usr/bin/env bash
# issue 28 measurements, sequential; output appended to /work/bench28/results.txt
B=/work/main/../shared/bench/relay-vs-server.sh
B=$(readlink -f /work/shared/bench/relay-vs-server.sh)
out=/work/bench28/results.txt
run() { # label dir rooms [db]
  local label=$1 dir=$2 R=$3 db=${4:-}
  local t0=$(date +%s) la=$(cut -d' ' -f1 /proc/loadavg)
  if [ -n "$db" ]; then
    psql -h 127.0.0.1 -U postgres -qc "drop database if exists $db" -c "create database $db" >/dev/null 2>&1
    r=$(cd $dir && DATABASE_URL=postgres://postgres@127.0.0.1:5432/$db $B $R 2>&1 | tail -1)
  else
    r=$(cd $dir && $B $R 2>&1 | tail -1)
  fi
  echo "$(date -u +%H:%M:%S) $label R=$R load=$la took=$(( $(date +%s)-t0 ))s :: $r" | tee -a $out
}
for step in "$@"; do
  case $step in
    a4s) run after-sqlite /work/main 4900 ;;
    b4s) run before-sqlite /work/bench28/base 4900 ;;
    a2s) run after-sqlite /work/main 2000 ;;
    b2s) run before-sqlite /work/bench28/base 2000 ;;
    a4p) run after-pg /work/main 4900 bench28_pg ;;
    a2p) run after-pg /work/main 2000 bench28_pg ;;
    b4p) run before-pg /work/bench28/base 4900 bench28_pg ;;
  esac
  sleep 3
done
