#!/usr/bin/env bash
# Check and build the VS Code extension: install (from package-lock.json),
# typecheck, lint, unit tests, package. Prints the path of the .vsix last.
# Needs Node 20+ and the npm registry (for `npm ci` only).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

step() { printf '\n== %s\n' "$*"; }

version="$(node -p "require('./package.json').version")"
vsix="msmap-${version}.vsix"
rm -f "$vsix"  # no stale package after a failed run

step "npm ci"
npm ci --no-audit --no-fund
step "typecheck"
npm run --silent typecheck
step "lint"
npm run --silent lint
step "unit tests"
npm test --silent
step "package"
npm run --silent package
test -s "$vsix"
echo "$PWD/$vsix"
