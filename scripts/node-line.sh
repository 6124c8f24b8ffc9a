#!/usr/bin/env bash
# Installs another Node.js line from the npm registry's `node` package into a cache folder and
# prints the folder that holds its `bin/node` and its headers (`include/node`), for PATH and
# npm_config_nodedir. Usage: scripts/node-line.sh 22
set -euo pipefail
major="$1"
cache="${NODE_LINES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/plant-store/node-lines}/$major"
if [ ! -x "$cache/node_modules/node/bin/node" ]; then
  rm -rf "$cache" && mkdir -p "$cache"
  # The package's install script fetches nothing: it installs the platform's binary package from
  # the same registry. npm runs only the install scripts a project allows.
  echo '{"private":true,"allowScripts":{"node":true}}' >"$cache/package.json"
  (cd "$cache" && npm install --no-audit --no-fund --no-save "node@$major" >&2)
fi
# The package installs the platform's binary and headers as a dependency of its own.
home=$(dirname "$(dirname "$(ls "$cache"/node_modules/node/node_modules/node-*/bin/node 2>/dev/null | head -1)")")
[ -x "$home/bin/node" ] && [ -f "$home/include/node/node_api.h" ] || { echo "node@$major: no binary or headers in $cache" >&2; exit 1; }
echo "$home"
