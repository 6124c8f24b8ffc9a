#!/usr/bin/env bash
# A rolling upgrade under load (test/rollout.e2e-spec.ts, docs/operations.md "Upgrades"): the
# previous release, taken from git as the commit before the newest migration, and this tree, each
# installed and built in a folder of its own, serve one MariaDB database while instances are
# replaced one at a time. Needs the git history (run from a clone) and the Node.js found on PATH.
# Usage: scripts/ci/rollout.sh [<folder for jest-results-rollout.json>]
set -euo pipefail
cd "$(dirname "$0")/../.."
results="${1:-$PWD/test-artifacts}"
say() { printf '[rollout] %s\n' "$*"; }

# Migrations are named <timestamp>-<Name>.ts; the folder's helpers (online-ddl.ts) are not migrations.
newest=$(git ls-files 'src/database/migrations/[0-9]*-*.ts' | sort | tail -1)
introduced=$(git log --diff-filter=A --format=%H -1 -- "$newest")
previous=$(git rev-parse "$introduced^")
say "previous release: $(git log --format='%h %s' -1 "$previous") (before $newest)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build() { # <commit-ish> <folder>
  mkdir -p "$2"
  git archive "$1" | tar -x -C "$2"
  (cd "$2" && npm ci --no-audit --no-fund >/dev/null && npm run --silent build)
}
build "$previous" "$work/previous"
build HEAD "$work/current"

mkdir -p "$results"
cd "$work/current"
ROLLOUT_PREVIOUS="$work/previous" ROLLOUT_CURRENT="$work/current" \
  npx jest --selectProjects e2e --runTestsByPath test/rollout.e2e-spec.ts --json \
  --outputFile="$results/jest-results-rollout.json"
