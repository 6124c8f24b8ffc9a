#!/usr/bin/env bash
# A rolling upgrade under load (test/rollout.e2e-spec.ts, docs/operations.md "Upgrades"): the
# previous release, taken from git as the commit before the newest migration, and this tree, each
# installed and built in a folder of its own, serve one MariaDB database while instances are
# replaced one at a time: on the MariaDB server at 127.0.0.1:3306, then on a three-node Galera
# cluster behind HAProxy (scripts/galera-cluster.sh on ports 14600+, stopped at the end; what it
# needs is installed when missing, by scripts/ci/galera-packages.sh). Needs the git history (run
# from a clone) and the Node.js found on PATH.
# Usage: scripts/ci/rollout.sh [<folder for jest-results-rollout.json and jest-results-rollout-galera.json>]
set -euo pipefail
cd "$(dirname "$0")/../.."
results="${1:-$PWD/test-artifacts}"
say() { printf '[rollout] %s\n' "$*"; }

# Migrations are named <timestamp>-<Name>.ts; the folder's helpers (online-ddl.ts) are not migrations.
newest=$(git ls-files 'src/database/migrations/[0-9]*-*.ts' | sort | tail -1)
introduced=$(git log --diff-filter=A --format=%H -1 -- "$newest")
previous=$(git rev-parse "$introduced^")
say "previous release: $(git log --format='%h %s' -1 "$previous") (before $newest)"

export GALERA_PORT_BASE=14600 GALERA_DIR="${TMPDIR:-/tmp}/plant-store-galera-rollout"
work=$(mktemp -d)
trap 'scripts/galera-cluster.sh stop; rm -rf "$work"' EXIT
build() { # <commit-ish> <folder> [a built folder whose node_modules it may share]
  mkdir -p "$2"
  git archive "$1" | tar -x -C "$2"
  # The same lockfile installs the same files: linked from the other tree rather than installed
  # again (minutes on a slow network). Each tree's folders stay its own, so its caches do too.
  if [ -n "${3:-}" ] && cmp -s "$2/package-lock.json" "$3/package-lock.json"; then
    say "$1: the same package-lock.json as $3, its node_modules linked"
    cp -al "$3/node_modules" "$2/node_modules"
  else
    # The previous release's lockfile names versions this tree no longer installs, so they come
    # from the registry; a failed fetch there (one run met a TLS error midway) is tried again.
    local try tries=3
    for ((try = 1; ; try++)); do
      (cd "$2" && npm ci --no-audit --no-fund >/dev/null) && break
      [ "$try" -lt "$tries" ] || return 1
      say "$1: npm ci failed (try $try of $tries), trying again in 10 s"
      sleep 10
    done
  fi
  (cd "$2" && npm run --silent build)
}
build "$previous" "$work/previous"
build HEAD "$work/current" "$work/previous"

mkdir -p "$results"
rollout() { # <server URL> <results file>
  (cd "$work/current" && ROLLOUT_PREVIOUS="$work/previous" ROLLOUT_CURRENT="$work/current" ROLLOUT_MYSQL_URL="$1" \
    npx jest --selectProjects e2e --runTestsByPath test/rollout.e2e-spec.ts --json --outputFile="$results/$2")
}
status=0
say "on the MariaDB server"
rollout mysql://root@127.0.0.1:3306 jest-results-rollout.json || status=1
say "on a Galera cluster behind HAProxy"
scripts/ci/galera-packages.sh
PATH="$PATH:/usr/sbin" scripts/galera-cluster.sh start
rollout "mysql://root@127.0.0.1:$GALERA_PORT_BASE" jest-results-rollout-galera.json || status=1
exit "$status"
