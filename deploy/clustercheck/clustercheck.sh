#!/usr/bin/env bash
# HTTP health agent of one Galera node, for HAProxy's `option httpchk` (deploy/haproxy.cfg), in the
# manner of Percona's clustercheck: 200 when the node can serve clients, 503 (with the reason) when
# it cannot. A node serves only when all three hold:
#   wsrep_cluster_status = Primary   part of the primary component (a partitioned node is not)
#   wsrep_local_state    = 4         Synced (not joining, not a donor, not desynced)
#   wsrep_ready          = ON        accepting queries
# A login alone (`option mysql-check`) cannot tell: a node cut off from the cluster still accepts logins.
#
# One HTTP exchange per run, on stdin/stdout; socat (or xinetd) runs it for each connection:
#   socat TCP-LISTEN:9200,reuseaddr,fork EXEC:/usr/local/bin/clustercheck
#
# Environment (all optional):
#   CLUSTERCHECK_HOST / CLUSTERCHECK_PORT   the node's SQL address (127.0.0.1 / 3306), or
#   CLUSTERCHECK_SOCKET                     its socket instead
#   CLUSTERCHECK_USER                       an account with no privileges at all (clustercheck)
#   CLUSTERCHECK_DEFAULTS_FILE              a client option file with its password, if it has one
#                                           ([client] password=...), never on a command line
#   CLUSTERCHECK_TIMEOUT_S                  how long the node may take to answer (2)
set -uo pipefail

timeout_s="${CLUSTERCHECK_TIMEOUT_S:-2}"

respond() { # status line, body
  local body="$2"$'\r\n'
  printf 'HTTP/1.1 %s\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s' \
    "$1" "${#body}" "$body"
  exit 0
}

# Read the request (request line and headers, to the blank line) before answering: closing a socket
# with unread data in it resets the connection, and the checker may lose the answer.
while IFS= read -r -t "$timeout_s" line; do
  line="${line%$'\r'}"
  [ -z "$line" ] && break
done

client=mariadb
command -v "$client" >/dev/null 2>&1 || client=mysql
args=()
[ -n "${CLUSTERCHECK_DEFAULTS_FILE:-}" ] && args+=("--defaults-extra-file=$CLUSTERCHECK_DEFAULTS_FILE") || args+=(--no-defaults)
args+=(-u "${CLUSTERCHECK_USER:-clustercheck}" --connect-timeout="$timeout_s" -N -B)
if [ -n "${CLUSTERCHECK_SOCKET:-}" ]; then
  args+=(--socket="$CLUSTERCHECK_SOCKET")
else
  args+=(--protocol=tcp -h "${CLUSTERCHECK_HOST:-127.0.0.1}" -P "${CLUSTERCHECK_PORT:-3306}")
fi

# No causal wait: a node outside the primary component could not satisfy one, and SHOW waits too.
status="$(timeout "$((timeout_s + 1))" "$client" "${args[@]}" -e "SET SESSION wsrep_sync_wait = 0;
  SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_status', 'wsrep_local_state', 'wsrep_local_state_comment', 'wsrep_ready')" 2>/dev/null)" \
  || respond '503 Service Unavailable' 'Galera node is not ready: it does not answer'

cluster_status='' local_state='' state_comment='' ready=''
while IFS=$'\t' read -r name value; do
  case "$name" in
    wsrep_cluster_status) cluster_status="$value" ;;
    wsrep_local_state) local_state="$value" ;;
    wsrep_local_state_comment) state_comment="$value" ;;
    wsrep_ready) ready="$value" ;;
  esac
done <<<"$status"

summary="wsrep_cluster_status=${cluster_status:-?} wsrep_local_state=${local_state:-?} (${state_comment:-?}) wsrep_ready=${ready:-?}"
if [ "$cluster_status" = Primary ] && [ "$local_state" = 4 ] && [ "$ready" = ON ]; then
  respond '200 OK' "Galera node is synced: $summary"
fi
respond '503 Service Unavailable' "Galera node is not ready: $summary"
