#!/usr/bin/env bash
# The monitoring of deploy/observability (docs/operations.md, "Monitoring"), where no container can
# run: promtool checks the rules and the compose profile's Prometheus configuration and runs the
# rules' tests; then Prometheus from Debian's package, on the same rules, scrapes an API instance and
# a webhook worker of this tree (built here) on a MariaDB of their own, started here on its own port
# and data folder; the script checks that Prometheus scrapes both and reads their series, stops that
# MariaDB, and waits for PlantStoreDatabaseDown to fire for both (about a minute: the rule's `for`).
# The machine's shared MariaDB is never touched. Everything listens on 127.0.0.1, from
# MONITORING_PORT_BASE (default 14600): MariaDB +1, the API +2, its metrics +3, the worker's
# metrics +4, Prometheus +5.
# Usage: scripts/ci/monitoring.sh          # needs mariadb-server (as .ci/run installs it) and node_modules
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
say() { printf '[monitoring] %s\n' "$*"; }
started=$SECONDS

if ! command -v promtool >/dev/null || ! command -v prometheus >/dev/null; then
  apt-get update -qq
  # RUNLEVEL=1: the package's own Prometheus service is not started.
  RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >/dev/null
fi
export PATH="$PATH:/usr/sbin"

rules=deploy/observability/prometheus/plant-store.rules.yml
promtool check rules "$rules"
promtool check config deploy/observability/prometheus/prometheus.yml
(cd deploy/observability/prometheus && promtool test rules plant-store.rules.test.yml)

base="${MONITORING_PORT_BASE:-14600}"
db_port=$((base + 1)) api_port=$((base + 2)) api_metrics=$((base + 3)) worker_metrics=$((base + 4)) prom_port=$((base + 5))
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  [ ! -f "$work/mariadbd.pid" ] || kill -TERM "$(cat "$work/mariadbd.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  say "$1" >&2
  for log in "$work"/*.log; do printf '\n--- %s\n' "$log" >&2; tail -30 "$log" >&2; done
  exit 1
}
wait_until() { # <what> <seconds> <command...>
  local what="$1" deadline=$((SECONDS + $2))
  shift 2
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "$what: not within $((SECONDS - deadline + $2)) s"
    sleep 1
  done
}

# A MariaDB of this script's own.
user=()
if [ "$(id -u)" = 0 ]; then user=(--user=mysql); chown mysql: "$work"; fi
mariadb-install-db --no-defaults --datadir="$work/data" --auth-root-authentication-method=normal \
  --skip-test-db "${user[@]}" >"$work/install.log" 2>&1
setsid mariadbd --no-defaults "${user[@]}" --datadir="$work/data" --socket="$work/mariadb.sock" \
  --pid-file="$work/mariadbd.pid" --port="$db_port" --bind-address=127.0.0.1 --skip-name-resolve \
  --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci --innodb-buffer-pool-size=32M \
  </dev/null >"$work/mariadb.log" 2>&1 &
wait_until "MariaDB up" 60 test -S "$work/mariadb.sock"
mariadb --no-defaults -uroot --socket="$work/mariadb.sock" -e "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
  GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION; CREATE DATABASE plantstore CHARACTER SET utf8mb4"

# An API instance that leaves delivery to a worker, and the worker, as in production.
npm run --silent build
key=$(node -p 'require("crypto").randomBytes(32).toString("base64")')
service_env=(NODE_ENV=production HOST=127.0.0.1 LOG_LEVEL=warn WEBHOOK_SECRET_KEY="$key"
  DATABASE_URL="mariadb://root@127.0.0.1:$db_port/plantstore")
env "${service_env[@]}" PORT="$api_port" METRICS_PORT="$api_metrics" WEBHOOK_DELIVERY=false \
  node dist/main.js >"$work/api.log" 2>&1 &
pids+=($!)
env "${service_env[@]}" METRICS_PORT="$worker_metrics" node dist/cli.js worker >"$work/worker.log" 2>&1 &
pids+=($!)
wait_until "the API ready" 60 curl -fsS -o /dev/null "http://127.0.0.1:$api_port/health/ready"
wait_until "the worker's metrics" 60 curl -fsS -o /dev/null "http://127.0.0.1:$worker_metrics/metrics"

cat >"$work/prometheus.yml" <<YAML
global:
  scrape_interval: 2s
  scrape_timeout: 2s
  evaluation_interval: 1s
rule_files:
  - $root/$rules
scrape_configs:
  - job_name: plant-store
    static_configs: [{ targets: ['127.0.0.1:$api_metrics'] }]
  - job_name: plant-store-worker
    static_configs: [{ targets: ['127.0.0.1:$worker_metrics'] }]
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)

# How many series a PromQL query returns (0 while Prometheus does not answer).
count() {
  local answer
  answer=$(curl -fsS --get "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" 2>/dev/null) || {
    echo 0
    return
  }
  node -e 'console.log(JSON.parse(process.argv[1]).data.result.length)' "$answer"
}
is() { [ "$(count "$1")" = "$2" ]; }

wait_until "Prometheus scraping both" 60 is 'up{job=~"plant-store|plant-store-worker"} == 1' 2
wait_until "their series read" 30 is 'db_up == 1 and on (instance) webhook_deliveries_due >= 0' 2
is 'health_ready{job="plant-store"} == 1' 1 || fail "the API instance is not ready in Prometheus"
is 'count by (instance) (process_resident_memory_bytes)' 2 || fail "no process metrics"
say "Prometheus scrapes the API instance and the worker, and reads their series"

kill -TERM "$(cat "$work/mariadbd.pid")"
stopped=$SECONDS
wait_until "PlantStoreDatabaseDown firing for both" 150 \
  is 'ALERTS{alertname="PlantStoreDatabaseDown", alertstate="firing"}' 2
say "PlantStoreDatabaseDown fired for the API instance and the worker $((SECONDS - stopped)) s after their MariaDB stopped"
is 'health_ready{job="plant-store"} == 0' 1 || fail "readiness did not turn 0 with the database down"
say "done in $((SECONDS - started)) s"
