#!/bin/bash
# summarise node metrics dir: $1
for f in "$1"/node-*.prom; do
  echo "## $f"
  grep -E '^parchis_(connections_kicked_total|commands_refused_total|cluster_shed_episodes_total|cluster_shedding|cluster_creations_shed_total|cluster_leases_lost_total|websocket_connections|games_started_total|actions_total|cluster_rooms_owned|slow_consumer)' "$f" | grep -v '^#'
  for h in parchis_store_commit_duration_seconds parchis_cluster_lease_renewal_seconds parchis_cluster_lease_renewal_delay_seconds parchis_action_latency_seconds; do
    s=$(grep -E "^${h}_sum" "$f" | awk '{print $2}' | head -1); c=$(grep -E "^${h}_count" "$f" | awk '{print $2}' | head -1)
    [[ -n $c ]] && awk -v s="$s" -v c="$c" -v h="$h" 'BEGIN{ if (c>0) printf "%s mean %.4f s over %d\n", h, s/c, c}'
  done
done
