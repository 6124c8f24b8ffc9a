#!/usr/bin/env bash
# Makes sure redis-server and redis-sentinel are installed, for the Redis Sentinel failover test
# (test/redis-sentinel.e2e-spec.ts starts its own primary, replica and sentinels on free ports).
# The package's own sentinel service is not started (RUNLEVEL=1): the test needs none.
# Usage: scripts/ci/redis-sentinel.sh
set -euo pipefail
if ! command -v redis-server >/dev/null || ! command -v redis-sentinel >/dev/null; then
  apt-get update -qq
  RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-sentinel >/dev/null
fi
redis-sentinel --version
