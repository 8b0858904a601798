#!/usr/bin/env bash
# Runs the server leg of the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in scripts/conformance/package.json and package-lock.json) against
# `conformance-server --http`, for both frozen requirement sets: 2026-07-28 (stateless wire) and
# 2025-11-25 (initialize/session wire). See ../shared/CONFORMANCE.md and scripts/conformance/README.md.
#
#   1. Node.js 22 into .cache/node22 (scripts/lib/node22.sh) and the suite into .cache/conformance
#      with `npm ci`; both skipped when already there (a stamp records the pins).
#   2. The server: $CONFORMANCE_SERVER if set, else `cargo build --release -p conformance`.
#   3. `conformance-server --http 127.0.0.1:PORT` on a free port (its output goes to
#      .cache/conformance/results/server.log), killed on exit whatever happens; a server that
#      dies during a set fails the run and is started again for the next set.
#   4. `conformance server --url http://127.0.0.1:PORT/mcp --requirements REV -o OUT` per set;
#      OUT is .cache/conformance/results/REV (or $CONFORMANCE_RESULTS/REV), emptied first, and also
#      keeps the suite's stdout, stderr and exit status and its `list --requirements REV`.
#   5. scripts/conformance/summarize.py prints the suite's per-scenario lines, the failing checks
#      and one line per set; the summary is also written to .../results/summary.txt.
#
# Exit status: 0 when, in both sets, the suite passed (every scored scenario, which is what its own
# exit status says) and every not-scored scenario of REQUIRED_NOT_SCORED below passed; 1 otherwise
# (the failures are printed); other non-zero values when the setup failed.
#
# Idempotent and non-interactive (CI=true, stdin closed). Needs npm (for the first install),
# python3 and, without $CONFORMANCE_SERVER, cargo; reaches only the npm registry. Progress goes to
# stderr, the summary to stdout. RUST_LOG reaches the server.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

# The requirement sets run, in this order.
REQUIREMENT_SETS=(2026-07-28 2025-11-25)
# Not-scored scenarios (pending, added after release) that must pass all the same, in every set
# that runs them. A name that no set runs is reported as a failure, so that a typo cannot disable it.
REQUIRED_NOT_SCORED=(
  server-session-lifecycle
  server-sse-polling
  json-schema-2020-12
  http-header-validation
  http-custom-header-server-validation
)
# Seconds the server gets to accept connections, and one requirement set gets to finish.
READY_TIMEOUT=20
SET_TIMEOUT=${CONFORMANCE_SET_TIMEOUT:-300}

SUITE_DIR="$ROOT/.cache/conformance"
SUITE_BIN="$SUITE_DIR/node_modules/.bin/conformance"
RESULTS="${CONFORMANCE_RESULTS:-$SUITE_DIR/results}"

log() { echo "conformance: $*" >&2; }
fail() {
  log "error: $*"
  exit 2
}

# NODE22_PACKAGE, NODE22_DIR, NODE22_BIN and ensure_node22 (which uses log and fail).
# shellcheck source=lib/node22.sh
source "$ROOT/scripts/lib/node22.sh"

fingerprint() {
  local words=$1
  shift
  { echo "$words"; cat "$@"; } | sha256sum | cut -d' ' -f1
}

exec </dev/null
export CI=true
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

start=$SECONDS
command -v python3 >/dev/null || fail "python3 is needed (free port, summary)"
mkdir -p "$SUITE_DIR"

# One run at a time: a second one waits here (the results directory and port are per run).
exec 9>"$SUITE_DIR/.lock"
flock -w 900 9 || fail "another scripts/conformance.sh still holds $SUITE_DIR/.lock"

# --- Node.js 22 and the suite -----------------------------------------------------------------
ensure_node22
PATH="$(dirname "$NODE22_BIN"):$PATH"
export PATH

pinned=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["dependencies"]["@modelcontextprotocol/conformance"])' \
  scripts/conformance/package.json)
stamp="$SUITE_DIR/.mcpkit-stamp"
want=$(fingerprint "$NODE22_PACKAGE" scripts/conformance/package.json scripts/conformance/package-lock.json)
if [ -x "$SUITE_BIN" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  log "suite present: @modelcontextprotocol/conformance@$pinned (${SUITE_DIR#"$ROOT"/})"
else
  log "installing @modelcontextprotocol/conformance@$pinned into ${SUITE_DIR#"$ROOT"/} (npm ci)"
  install_start=$SECONDS
  rm -f "$stamp"
  cp scripts/conformance/package.json scripts/conformance/package-lock.json "$SUITE_DIR/"
  npm ci --prefix "$SUITE_DIR" --no-audit --no-fund --loglevel=error 9>&- >&2 || fail "npm ci failed in $SUITE_DIR"
  echo "$want" >"$stamp"
  log "suite installed in $((SECONDS - install_start)) s"
fi
version=$("$SUITE_BIN" --version 9>&-) || fail "$SUITE_BIN does not run under $(node --version)"
[ "$version" = "$pinned" ] || fail "$SUITE_BIN is $version, not the pinned $pinned"

# --- The server -------------------------------------------------------------------------------
if [ -n "${CONFORMANCE_SERVER:-}" ]; then
  server=$CONFORMANCE_SERVER
  log "server: $server (\$CONFORMANCE_SERVER)"
else
  log "building conformance-server (cargo build --release -p conformance)"
  cargo build --release --locked -p conformance 9>&- >&2 || fail "cargo build failed"
  server="$(cargo metadata --format-version 1 --no-deps 9>&- \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/conformance-server"
fi
[ -x "$server" ] || fail "$server is not an executable"

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
server_log="$RESULTS/server.log"

# The server and the running suite are background jobs, waited for with `wait` so that a signal
# is handled at once; whatever way the script ends, both are stopped.
server_pid=""
suite_pid=""
stop() {
  local pid
  for pid in $suite_pid $server_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  suite_pid=""
  server_pid=""
}
trap stop EXIT
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM

# Starts the server on a free port (its output appended to server.log) and sets `url`, once it
# accepts connections.
start_server() {
  local port deadline status
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  url="http://127.0.0.1:$port/mcp"
  log "starting $server --http 127.0.0.1:$port (output: ${server_log#"$ROOT"/})"
  echo "=== $server --http 127.0.0.1:$port" >>"$server_log"
  "$server" --http "127.0.0.1:$port" >>"$server_log" 2>&1 9>&- &
  server_pid=$!
  deadline=$((SECONDS + READY_TIMEOUT))
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    if ! kill -0 "$server_pid" 2>/dev/null; then
      status=0
      wait "$server_pid" || status=$?
      server_pid=""
      log "the server exited with status $status before accepting connections; its output:"
      tail -n 40 "$server_log" >&2
      exit 2
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      log "the server did not accept connections on 127.0.0.1:$port within $READY_TIMEOUT s; its output:"
      tail -n 40 "$server_log" >&2
      exit 2
    fi
    sleep 0.1
  done
  log "server ready on $url"
}

# --- The suite --------------------------------------------------------------------------------
declare -A suite_status
outdirs=()
crashes=()
for rev in "${REQUIREMENT_SETS[@]}"; do
  out="$RESULTS/$rev"
  mkdir -p "$out"
  outdirs+=("$out")
  "$SUITE_BIN" list --requirements "$rev" >"$out/requirements.txt" 9>&- || fail "conformance list --requirements $rev failed"
  [ -n "$server_pid" ] || start_server
  log "running the $rev set (stdout: ${out#"$ROOT"/}/suite.stdout.log)"
  set_start=$SECONDS
  status=0
  timeout --foreground --kill-after=10 "$SET_TIMEOUT" \
    "$SUITE_BIN" server --url "$url" --requirements "$rev" -o "$out" \
    >"$out/suite.stdout.log" 2>"$out/suite.stderr.log" 9>&- &
  suite_pid=$!
  wait "$suite_pid" || status=$?
  suite_pid=""
  echo "$status" >"$out/suite.exit"
  suite_status[$rev]=$status
  [ "$status" -ne 124 ] || log "the $rev set was stopped after $SET_TIMEOUT s"
  log "$rev set done in $((SECONDS - set_start)) s, suite exit status $status"
  if ! kill -0 "$server_pid" 2>/dev/null; then
    # The server died: say how, and start a new one for the next set.
    status=0
    wait "$server_pid" || status=$?
    server_pid=""
    crashes+=("$rev (exit status $status)")
    log "the server died during the $rev set with exit status $status; its output:"
    tail -n 40 "$server_log" >&2
  fi
done
stop

# --- Summary ----------------------------------------------------------------------------------
requires=()
for name in "${REQUIRED_NOT_SCORED[@]}"; do
  requires+=(--require "$name")
done
summary_status=0
python3 scripts/conformance/summarize.py "${requires[@]}" "${outdirs[@]}" >"$RESULTS/summary.txt" || summary_status=$?
cat "$RESULTS/summary.txt"
[ "$summary_status" -le 1 ] || fail "summarize.py failed (status $summary_status)"

bad=$summary_status
for rev in "${REQUIREMENT_SETS[@]}"; do
  if [ "${suite_status[$rev]}" -ne 0 ]; then
    echo "FAILED: the suite exited with status ${suite_status[$rev]} for $rev"
    bad=1
  fi
done
for crash in "${crashes[@]}"; do
  echo "FAILED: the server died during the $crash (see ${server_log#"$ROOT"/})"
  bad=1
done
if [ "$summary_status" -ne 0 ]; then
  echo "FAILED: see the failing scenarios above"
fi
log "done in $((SECONDS - start)) s; results in ${RESULTS#"$ROOT"/}"
[ "$bad" -eq 0 ] && echo "conformance: all scored scenarios and required not-scored scenarios passed"
exit "$bad"
