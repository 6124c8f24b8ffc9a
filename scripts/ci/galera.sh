#!/usr/bin/env bash
# CI: the Galera part (docs/scaling.md). Installs what a cluster needs when missing
# (scripts/ci/galera-packages.sh), runs the cluster tests (test/galera*.e2e-spec.ts, one after
# another, each on a cluster of its own that it starts and stops), then the e2e specs that run on
# MySQL against a cluster behind HAProxy (scripts/galera-cluster.sh), which is stopped at the end whatever happens.
#
#   scripts/ci/galera.sh [results folder]      # needs mariadb-server (as .ci/run installs it) and Redis on 6379
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-test-artifacts}"
mkdir -p "$out"

scripts/ci/galera-packages.sh
export PATH="$PATH:/usr/sbin"

status=0
# The cluster tests: instances on different nodes directly and through HAProxy, each way a node can
# stop serving, and schema changes of a large table under load (ports 14400+). In band: their
# timings are measured, and two clusters at once would share the machine's cores.
# The schema change on a million plants: the old table's drop, node by node, is what the size
# tested (two million by default, as recorded in docs/scaling.md) would add, and CI's time is bounded.
TEST_GALERA_SCHEMA_ROWS="${TEST_GALERA_SCHEMA_ROWS:-1000000}" \
  TEST_GALERA=1 TEST_REQUIRE_GALERA=1 TEST_REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379}" \
  npx jest test/galera --runInBand --coverage=false --json --outputFile="$out/jest-results-galera.json" || status=1

# The e2e suite with HAProxy in front of a cluster as its MySQL (ports 14500+): every spec that
# runs on MySQL (those that ask for testDatabases()), on MySQL alone. Their SQLite runs, and the
# specs that never reach a database, are the same here as in the line's suite, which ran them.
export GALERA_PORT_BASE=14500 GALERA_DIR="${TMPDIR:-/tmp}/plant-store-galera-ci"
trap 'scripts/galera-cluster.sh stop' EXIT
scripts/galera-cluster.sh start
mapfile -t on_mysql < <(grep -l 'testDatabases()' test/*.e2e-spec.ts)
TEST_DATABASE_URL="mariadb://root@127.0.0.1:14500/plantstore_ci_galera" TEST_REQUIRE_MYSQL=1 TEST_DATABASES=mysql \
  TEST_REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379}" \
  npx jest --selectProjects e2e --runTestsByPath "${on_mysql[@]}" -w 2 --coverage=false \
  --json --outputFile="$out/jest-results-galera-haproxy.json" || status=1
exit "$status"
