#!/usr/bin/env bash
# Builds the production artifact as the Dockerfile does (compile, then `npm prune --omit=dev`) in a
# copy of the tree, on the Node.js found first on PATH, and starts it as the image does
# (`npm run start:prod`, NODE_ENV=production) against MariaDB: a token from the CLI of the pruned
# tree, then create, list and delete, readiness, and a clean exit on SIGTERM.
# Usage: scripts/ci/production-smoke.sh <mysql-url-of-an-existing-server> [port]
set -euo pipefail
cd "$(dirname "$0")/../.."
server_url="$1"
port="${2:-3998}"
say() { printf '[production smoke, node %s] %s\n' "$(node -v)" "$*"; }

work=$(mktemp -d)
app=""
trap '[ -z "$app" ] || kill -TERM -- "-$app" 2>/dev/null || true; rm -rf "$work"' EXIT
cp -a package.json package-lock.json tsconfig.json tsconfig.build.json nest-cli.json src node_modules "$work/"
cd "$work"

# The native SQLite driver must match this Node's ABI, as `npm ci` in the image's build stage makes it.
if ! node -e 'new (require("better-sqlite3"))(":memory:").close()' 2>/dev/null; then
  say "compiling better-sqlite3 for this Node"
  npm rebuild better-sqlite3 >/dev/null 2>&1 || { npm rebuild better-sqlite3; exit 1; }
fi
npm run --silent build
npm prune --omit=dev --no-audit --no-fund >/dev/null
# What the image holds: the test and build tooling is gone (a production dependency may still
# bring a dev dependency of ours, such as typescript, along).
for dev in jest ts-jest eslint @nestjs/testing @nestjs/cli supertest; do
  [ ! -e "node_modules/$dev" ] || { say "dev dependency $dev survived the prune" >&2; exit 1; }
done
rm -rf src tsconfig.json tsconfig.build.json nest-cli.json

db="plantstore_prod_smoke_$(node -p 'process.versions.node.split(".")[0]')_$$"
mysql --protocol=tcp -h127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS \`$db\`; CREATE DATABASE \`$db\` CHARACTER SET utf8mb4"
export NODE_ENV=production DATABASE_URL="${server_url%/}/$db" PORT="$port" HOST=127.0.0.1 METRICS_PORT=0 LOG_LEVEL=warn

token=$(node dist/cli.js token create --user prod-smoke | tail -1)
[[ "$token" == pst_* ]] || { say "the CLI printed no token" >&2; exit 1; }

setsid npm run start:prod >"$work/out.log" 2>&1 &
app=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 60); do curl -fsS "$base/health/ready" >/dev/null 2>&1 && break; sleep 0.5; done
auth=(-H "Authorization: Bearer $token")
fail() { say "$1" >&2; cat "$work/out.log" >&2; exit 1; }
curl -fsS "$base/health/ready" | grep -q '"status":"ok"' || fail "not ready"
curl -fsS "${auth[@]}" -H 'Content-Type: application/json' -d '{"id":9223372036854775807,"name":"Shipped"}' \
  "$base/plants" | grep -q '"id":9223372036854775807' || fail "create failed"
curl -fsS "${auth[@]}" "$base/plants" | grep -q '"name":"Shipped"' || fail "list failed"
[ "$(curl -sS -o /dev/null -w '%{http_code}' -X DELETE "${auth[@]}" "$base/plants/9223372036854775807")" = 204 ] || fail "delete failed"
[ "$(curl -fsS "${auth[@]}" "$base/plants")" = '[]' ] || fail "the plant is still listed"
curl -fsS "$base/docs-json" >/dev/null || fail "no OpenAPI document"

# SIGTERM to the service itself, as the orchestrator sends it to the image's node; npm then exits
# with the service's own exit code.
pkill -TERM -s "$app" -f '^node .*dist/main\.js'
code=0; wait "$app" || code=$?
app=
[ "$code" -eq 0 ] || fail "exit code $code after SIGTERM"
mysql --protocol=tcp -h127.0.0.1 -uroot -e "DROP DATABASE \`$db\`"
say "the pruned production tree served create, list and delete on MariaDB and stopped cleanly"
