#!/usr/bin/env bash
# A local three-node MariaDB Galera cluster behind HAProxy (deploy/haproxy.cfg), each node with its
# health agent (deploy/clustercheck), for development and the cluster tests. Needs mariadb-server,
# galera-4, haproxy, rsync and socat (scripts/ci/galera.sh installs them).
#
#   scripts/galera-cluster.sh start          # idempotent; prints the URLs when up (~20 s)
#   scripts/galera-cluster.sh stop           # stops everything and removes the data
#   scripts/galera-cluster.sh status         # each node's state, as its health agent reports it
#   scripts/galera-cluster.sh kill-node N    # SIGKILL node N (1-3), as a crash would
#   scripts/galera-cluster.sh start-node N [mariadbd options...]
#                                            # restart node N; it rejoins the cluster
#   scripts/galera-cluster.sh isolate-node N # cut node N off from the others (a network partition,
#                                            # with Galera's own switch); returns once it knows
#   scripts/galera-cluster.sh heal-node N    # end that; returns once it has rejoined and synced
#   scripts/galera-cluster.sh restart-haproxy # stop HAProxy (cutting every connection) and start it
#
# Everything listens on 127.0.0.1 only. GALERA_PORT_BASE (default 14300) places the ports:
# HAProxy on BASE, node N's SQL on BASE+N, its group port on BASE+10+N, IST on BASE+20+N, SST on
# BASE+30+N and its health agent on BASE+40+N. GALERA_DIR (default /tmp/plant-store-galera) holds
# data, sockets, logs and pids. The server at 3306 is never touched. Users: root without a password
# (local use only) and `clustercheck` for the health agents.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BASE="${GALERA_PORT_BASE:-14300}"
DIR="${GALERA_DIR:-${TMPDIR:-/tmp}/plant-store-galera}"
HAPROXY_PORT="$BASE"
START_TIMEOUT_S="${GALERA_START_TIMEOUT_S:-60}"
PROVIDER="${GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}"
[ -e "$PROVIDER" ] || PROVIDER=/usr/lib/libgalera_smm.so

RUN_AS="$(id -un)"; [ "$(id -u)" = 0 ] && RUN_AS=mysql

sql_port() { echo $((BASE + $1)); }
group_port() { echo $((BASE + 10 + $1)); }
check_port() { echo $((BASE + 40 + $1)); }
# A joiner takes its state transfer from a backup when it can (the trailing comma: else from any
# node), so the writer is not made a donor, which would take it out of rotation for the transfer.
donors() { case "$1" in 1) echo node2,node3, ;; 2) echo node3, ;; 3) echo node2, ;; esac; }
cluster_address() { echo "gcomm://127.0.0.1:$(group_port 1),127.0.0.1:$(group_port 2),127.0.0.1:$(group_port 3)"; }

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

sql() { # node, statement
  mariadb --no-defaults -uroot -h127.0.0.1 -P"$(sql_port "$1")" --connect-timeout=2 -N -B -e "$2" 2>/dev/null
}

status_of() { # node, status variable
  sql "$1" "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='$2'"
}

# Synced (wsrep_local_state 4) and part of the primary component: ready for clients.
node_ready() {
  [ "$(status_of "$1" WSREP_LOCAL_STATE)" = 4 ] && [ "$(status_of "$1" WSREP_CLUSTER_STATUS)" = Primary ]
}

# Out of the primary component: it has noticed that it is cut off.
node_partitioned() {
  local status; status="$(status_of "$1" WSREP_CLUSTER_STATUS)"
  [ -n "$status" ] && [ "$status" != Primary ]
}

# What node N's health agent answers HAProxy (its body; the status is 200 only when ready).
agent_says() {
  exec 3<>"/dev/tcp/127.0.0.1/$(check_port "$1")" || return 1
  printf 'GET / HTTP/1.0\r\n\r\n' >&3
  timeout 5 cat <&3 | tail -n 1 | tr -d '\r'
  exec 3<&-
}

wait_until() { # description, command...
  local what="$1"; shift
  local deadline=$((SECONDS + START_TIMEOUT_S))
  until "$@"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "galera-cluster: $what not reached within ${START_TIMEOUT_S} s; logs in $DIR/*.log" >&2
      return 1
    fi
    sleep 0.2
  done
}

start_node() { # node, extra mariadbd arguments...
  local n="$1"; shift
  local data="$DIR/node$n"
  if alive "$DIR/node$n.pid"; then return 0; fi
  mkdir -p "$data"
  touch "$DIR/node$n.log"
  # As root, the server runs as the mysql user: rsync's SST daemon, started by root, would drop to
  # `nobody` and could not write the joiner's datadir.
  local user=()
  if [ "$(id -u)" = 0 ]; then user=(--user=mysql); chown -R mysql: "$DIR"; fi
  # Each node names its client address to the others (wsrep_incoming_addresses), which one that
  # listens on the loopback address alone does not do by itself: the migrations reach every node
  # there to drop a changed table's old copy (src/database/galera-old-copy.ts).
  setsid mariadbd --no-defaults "${user[@]}" \
    --datadir="$data" --socket="$DIR/node$n.sock" --pid-file="$DIR/node$n.mariadbd.pid" \
    --port="$(sql_port "$n")" --bind-address=127.0.0.1 --log-error="$DIR/node$n.log" \
    --skip-name-resolve --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci \
    --max-connections=300 --innodb-buffer-pool-size=64M --innodb-log-file-size=16M \
    --innodb-flush-log-at-trx-commit=2 --innodb-autoinc-lock-mode=2 --binlog-format=ROW \
    --default-storage-engine=InnoDB \
    --wsrep-on=ON --wsrep-provider="$PROVIDER" --wsrep-cluster-name=plant-store \
    --wsrep-cluster-address="$(cluster_address)" --wsrep-node-name="node$n" \
    --wsrep-node-address="127.0.0.1:$(group_port "$n")" \
    --wsrep-node-incoming-address="127.0.0.1:$(sql_port "$n")" \
    --wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$(group_port "$n");ist.recv_addr=127.0.0.1:$((BASE + 20 + n));gcache.size=32M;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S;evs.install_timeout=PT4S" \
    --wsrep-sst-method=rsync --wsrep-sst-receive-address="127.0.0.1:$((BASE + 30 + n))" \
    --wsrep-sst-donor="$(donors "$n")" \
    "$@" </dev/null >>"$DIR/node$n.log" 2>&1 9>&- &
  echo $! >"$DIR/node$n.pid"
}

# Node N's health agent (deploy/clustercheck): socat runs the check for each HTTP connection.
start_agent() {
  local n="$1"
  if alive "$DIR/agent$n.pid"; then return 0; fi
  CLUSTERCHECK_HOST=127.0.0.1 CLUSTERCHECK_PORT="$(sql_port "$n")" CLUSTERCHECK_USER=clustercheck \
    setsid socat "TCP-LISTEN:$(check_port "$n"),bind=127.0.0.1,reuseaddr,fork" \
    "EXEC:$ROOT/deploy/clustercheck/clustercheck.sh" </dev/null >>"$DIR/agent$n.log" 2>&1 9>&- &
  echo $! >"$DIR/agent$n.pid"
}

start_haproxy() {
  if alive "$DIR/haproxy.pid"; then return 0; fi
  # galeraN:3306 becomes 127.0.0.1:(BASE+N), and its agent's port 9200 BASE+40+N.
  local cfg; cfg="$(cat "$ROOT/deploy/haproxy.cfg")"
  cfg="${cfg//bind \*:3306/bind 127.0.0.1:$HAPROXY_PORT}"
  for n in 1 2 3; do
    cfg="${cfg//galera$n:3306 check port 9200/127.0.0.1:$(sql_port "$n") check port $(check_port "$n")}"
  done
  grep -q 'check port 9200' <<<"$cfg" && { echo "galera-cluster: deploy/haproxy.cfg has a server line this script does not know" >&2; return 1; }
  printf '%s\n' "$cfg" >"$DIR/haproxy.cfg"
  haproxy -c -q -f "$DIR/haproxy.cfg"
  setsid haproxy -f "$DIR/haproxy.cfg" -db </dev/null >>"$DIR/haproxy.log" 2>&1 9>&- &
  echo $! >"$DIR/haproxy.pid"
}

haproxy_answers() { mariadb --no-defaults -uroot -h127.0.0.1 -P"$HAPROXY_PORT" --connect-timeout=2 -N -B -e 'SELECT 1' >/dev/null 2>&1; }

print_urls() {
  echo "haproxy  mariadb://root@127.0.0.1:$HAPROXY_PORT/"
  for n in 1 2 3; do echo "node$n    mariadb://root@127.0.0.1:$(sql_port "$n")/"; done
}

stop_pid() { # pid file, signal
  local file="$1" signal="${2:-TERM}"
  alive "$file" || { rm -f "$file"; return 0; }
  local pid; pid="$(cat "$file")"
  kill -s "$signal" "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 20))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then kill -s KILL "$pid" 2>/dev/null || true; fi
    sleep 0.1
  done
  rm -f "$file"
}

cmd="${1:-}"
case "$cmd" in
  start)
    mkdir -p "$DIR"
    exec 9>"$DIR.lock"; flock -w 120 9
    [ "$(id -u)" = 0 ] && chown mysql: "$DIR"
    started=$SECONDS
    if [ ! -d "$DIR/node1/mysql" ]; then
      mariadb-install-db --no-defaults --datadir="$DIR/node1" --auth-root-authentication-method=normal \
        --skip-test-db --user="$RUN_AS" >"$DIR/install.log" 2>&1
      start_node 1 --wsrep-new-cluster
      wait_until "node1 up" test -S "$DIR/node1.sock"
      # Over the socket: root@localhost is the only account so far. Replicated to the joiners.
      mariadb --no-defaults -uroot --socket="$DIR/node1.sock" -e "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
        GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
        CREATE USER IF NOT EXISTS 'clustercheck'@'127.0.0.1';"
      wait_until "node1 synced" node_ready 1
    else
      # Restarting a stopped cluster: the node that stopped last may bootstrap it again.
      alive "$DIR/node1.pid" || alive "$DIR/node2.pid" || alive "$DIR/node3.pid" || {
        sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$DIR/node1/grastate.dat" 2>/dev/null || true
        start_node 1 --wsrep-new-cluster
      }
      wait_until "node1 synced" node_ready 1 || true
    fi
    start_node 2
    start_node 3
    wait_until "node2 synced" node_ready 2
    wait_until "node3 synced" node_ready 3
    for n in 1 2 3; do start_agent "$n"; done
    start_haproxy
    wait_until "HAProxy forwarding" haproxy_answers
    echo "Galera cluster up in $((SECONDS - started)) s ($DIR)"
    print_urls
    ;;
  stop)
    [ -d "$DIR" ] || exit 0
    exec 9>"$DIR.lock"; flock -w 120 9
    stop_pid "$DIR/haproxy.pid"
    for n in 1 2 3; do stop_pid "$DIR/agent$n.pid"; done
    for n in 3 2 1; do stop_pid "$DIR/node$n.pid" & done
    wait
    rm -rf "$DIR" "$DIR.lock"
    ;;
  status)
    for n in 1 2 3; do
      state=down; alive "$DIR/node$n.pid" && state=running
      echo "node$n  $state; agent: $(agent_says "$n" 2>/dev/null || echo 'not answering')"
    done
    alive "$DIR/haproxy.pid" && echo "haproxy running" || echo "haproxy down"
    ;;
  kill-node)
    n="${2:?node number}"
    stop_pid "$DIR/node$n.pid" KILL
    ;;
  start-node)
    n="${2:?node number}"
    start_node "$n" "${@:3}"
    wait_until "node$n synced" node_ready "$n"
    ;;
  isolate-node)
    n="${2:?node number}"
    sql "$n" "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'"
    wait_until "node$n out of the primary component" node_partitioned "$n"
    ;;
  heal-node)
    n="${2:?node number}"
    sql "$n" "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'"
    wait_until "node$n synced" node_ready "$n"
    ;;
  restart-haproxy)
    stop_pid "$DIR/haproxy.pid"
    start_haproxy
    wait_until "HAProxy forwarding" haproxy_answers
    ;;
  urls)
    print_urls
    ;;
  *)
    echo "usage: $0 start|stop|status|kill-node N|start-node N|isolate-node N|heal-node N|restart-haproxy|urls" >&2
    exit 2
    ;;
esac
