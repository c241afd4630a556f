#!/usr/bin/env bash
# Install everything msmap's tests need (idempotent), then run the whole suite.
# Used by the README's test command and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

# Python packages go into the checkout's own virtual environment, .venv/ (created here when
# missing; PYTHON=/path/to/python uses another interpreter instead), never into the system Python.
if [ -n "${PYTHON:-}" ]; then
  PY="$PYTHON"
else
  if [ ! -x .venv/bin/python ]; then
    echo "== virtual environment: .venv"
    if ! python3 -m venv .venv; then  # Debian/Ubuntu ship venv's pip separately
      rm -rf .venv
      apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
      python3 -m venv .venv
    fi
  fi
  PY="$PWD/.venv/bin/python"
  export PATH="$PWD/.venv/bin:$PATH"  # msmap, pytest and friends from .venv for every later step
fi

echo "== system packages"
if ! command -v nvim >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq neovim >/dev/null
fi
nvim --version | head -1
if [ "$(id -u)" = 0 ] && ! command -v setpriv >/dev/null 2>&1; then  # tests/reliability drop root's
  apt-get update -qq && apt-get install -y -qq util-linux >/dev/null  # file-permission override with it
fi

# The end-to-end run's installs (apt packages, Node 24, code-server: several minutes on a new machine,
# mostly downloads and native builds) go on in the background while Python packages install and the
# knowledge base builds; the end-to-end section below waits for them. Its log: build/e2e-install.log.
mkdir -p build
echo "== vscode extension end to end: installing in the background (build/e2e-install.log)"
bash scripts/e2e.sh --install-only >build/e2e-install.log 2>&1 &
E2E_INSTALL=$!
trap 'kill "$E2E_INSTALL" 2>/dev/null || true' EXIT  # a failed step stops it too

echo "== python packages (into $("$PY" -c 'import sys; print(sys.prefix)'))"
# torch: only ever the pinned CPU wheel (an unpinned torch pulls gigabytes of CUDA packages).
# mindspore 2.10 is compiled against NumPy 1: keep numpy<2.
"$PY" -m pip install -q --disable-pip-version-check "torch==2.13.0" "mindspore==2.10.0" "numpy<2"
"$PY" -m pip install -q --disable-pip-version-check -e ".[test,serve,check]"

if [ -f vscode-extension/ci.sh ]; then
  echo "== vscode extension"
  bash vscode-extension/ci.sh
fi

echo "== knowledge base"
"$PY" -m kb build
"$PY" -m kb stats
if "$PY" -m kb check --help >/dev/null 2>&1; then
  "$PY" -m kb check
fi
if "$PY" -m kb docs --help >/dev/null 2>&1; then
  "$PY" -m kb docs --check  # the pages the repository keeps (index pages, a sample of API pages)
  # the full site (every API page, mapping.html with its search): a build artifact, not in git
  "$PY" -m kb docs --out build/docs-site --no-readme >/dev/null
  echo "full docs site: build/docs-site ($(find build/docs-site -type f | wc -l) files)"
fi

# ---- VS Code extension end to end (helper vscode): the .vsix in a real code-server + Chromium.
# Installs Node 24, code-server and apt packages once (cached under ~/.cache/msmap-e2e), then
# runs tests/e2e, which the plain pytest run below does not collect.
echo "== vscode extension end to end"
e2e_rc=0
wait "$E2E_INSTALL" || e2e_rc=$?
cat build/e2e-install.log
if [ "$e2e_rc" != 0 ]; then
  echo "end-to-end install failed (exit $e2e_rc): see the log above" >&2
  exit "$e2e_rc"
fi
PYTHON="$PY" bash scripts/e2e.sh
# ---- end of the VS Code end-to-end section

echo "== lint (ruff, mypy; settings in pyproject.toml)"
# The whole library and server; of the tests, those kept lint-clean so far.
"$PY" -m ruff check kb lsp tests/test_imports.py tests/reliability/test_lsp_protocol.py tests/reliability/test_lsp_storm.py
"$PY" -m mypy kb lsp

echo "== tests"
export MSMAP_NO_SKIP=1  # a missing install step must fail, not skip
# On every core (pytest-xdist), a test file per worker at a time (module fixtures built once);
# the real knowledge base is built once and shared (tests/conftest.py: real_kb).
"$PY" -m pytest -q -p no:cacheprovider -n auto --dist loadfile --durations=25 "$@"  # the 25 slowest, to keep the suite fast
