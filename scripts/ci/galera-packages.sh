#!/usr/bin/env bash
# What a local Galera cluster (scripts/galera-cluster.sh) and the migrations on it need, installed
# with apt-get when missing: mariadb-server, galera-4, haproxy, rsync, socat, and percona-toolkit
# (pt-online-schema-change, the migrations' way of changing a large table there). Prints nothing
# when everything is there.
set -euo pipefail
missing=()
[ -e /usr/lib/galera/libgalera_smm.so ] || [ -e /usr/lib/libgalera_smm.so ] || missing+=(galera-4)
command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
command -v rsync >/dev/null || missing+=(rsync)
command -v socat >/dev/null || missing+=(socat)
command -v pt-online-schema-change >/dev/null || missing+=(percona-toolkit)
command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -qq
  RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
