#!/usr/bin/env bash
# Browser test of the web client: installs what is missing (Debian's chromium, the npm
# dependencies), builds the server and runs e2e/test/ with node's test runner.
# Screenshots land in artifacts/e2e/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

if [ ! -x /usr/bin/chromium ]; then
  echo "e2e: installing chromium (apt)"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "e2e: node and npm are needed (apt-get install -y nodejs npm)" >&2
  exit 1
fi
if [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/axe-core ]; then
  npm ci --no-audit --no-fund
fi

(cd .. && cargo build -p parchis-server)

node --test --test-concurrency=1 test/
