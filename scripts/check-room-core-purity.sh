#!/usr/bin/env bash
# Fails when the pure room core (crates/room-core) or the records it shares with the store
# (crates/records) depend, directly or not, on an async runtime, a database driver, a web
# framework or a message bus: the crate, its build and its tests (`cargo test -p
# parchis-room-core` runs with no tokio in its tree).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for crate in parchis-room-core parchis-records parchis-tournament; do
    tree="$(cargo tree -p "$crate" --prefix none --offline 2>/dev/null \
        || cargo tree -p "$crate" --prefix none)"
    bad="$(printf '%s\n' "$tree" | awk '{print $1}' | sort -u \
        | grep -E '^(tokio|tokio-util|sqlx|sqlx-core|axum|hyper|async-nats|tracing|metrics|tower)$' || true)"
    if [ -n "$bad" ]; then
        echo "$crate depends on: $(echo "$bad" | tr '\n' ' ')(it must stay pure)" >&2
        status=1
    else
        echo "$crate: pure ($(printf '%s\n' "$tree" | awk '{print $1}' | sort -u | wc -l) crates, none of tokio/sqlx/axum/async-nats/tracing/metrics)"
    fi
done
exit "$status"
