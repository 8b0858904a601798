#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# scripts/conformance/package.json and package-lock.json), both legs, for both frozen requirement
# sets: 2026-07-28 (stateless wire) and 2025-11-25 (initialize/session wire). The server leg tests
# `conformance-server --http`, the client leg `conformance-client`. See docs/CONFORMANCE.md and
# scripts/conformance/README.md.
#
#   1. Node.js 22 into .cache/node22 (scripts/lib/node22.sh) and the suite into .cache/conformance
#      with `npm ci`; both skipped when already there (a stamp records the pins).
#   2. The binaries: $CONFORMANCE_SERVER and $CONFORMANCE_CLIENT if set, else
#      `cargo build --release -p conformance` (which builds both) and the ones it built.
#   3. Server leg: `conformance-server --http 127.0.0.1:PORT` on a free port (its output goes to
#      .cache/conformance/results/server.log), killed on exit whatever happens; a server that
#      dies during a set fails the run and is started again for the next set. Then
#      `conformance server --url http://127.0.0.1:PORT/mcp --requirements REV -o OUT` per set, OUT
#      being .cache/conformance/results/REV (or $CONFORMANCE_RESULTS/REV).
#   4. Client leg (no server process: the suite starts one mock server per scenario and runs the
#      client with its URL as the last argument, all scenarios of a set in parallel):
#      `conformance client --command "exec setpriv --pdeathsig KILL CLIENT" --requirements REV --timeout 60000
#       --expected-failures scripts/conformance/client-expected-failures.yml -o OUT` per set, OUT
#      being .../results/client-REV.
#      Every OUT is emptied first and also keeps the suite's stdout, stderr and exit status and its
#      `list --requirements REV`.
#   5. scripts/conformance/summarize.py prints the suite's per-scenario lines, the failing checks,
#      the expected failures and one line per leg and set; the summary is also written to
#      .../results/summary.txt.
#
# CONFORMANCE_LEGS (default "server client") selects the legs, e.g. CONFORMANCE_LEGS=client.
# CONFORMANCE_SET_TIMEOUT (default 300) bounds one set of one leg, in seconds.
# SERVER_EXPECTED_FAILURES (a file's path, none by default) lists server checks that may fail (its
# `server:` list; summarize.py --expected-server): for the fixtures behind a gateway that bridges
# them from a legacy upstream, where a check cannot pass by construction.
#
# Exit status: 0 when, in every leg run and both sets, every scored scenario passed except the
# client leg's expected failures, and every not-scored scenario of REQUIRED_NOT_SCORED (server) and
# REQUIRED_NOT_SCORED_CLIENT (client) below passed; 1 otherwise (the failures are printed); other
# non-zero values when the setup failed. An expected failure that passes does not fail the run: a
# NOTE says to delete its line from the file. (Given that file, the suite itself exits 1 on such a
# "stale" entry and on any WARNING of a scored scenario, so the client leg's verdict comes from the
# checks, and summarize.py only verifies that the suite's exit status agrees with them.)
#
# Idempotent and non-interactive (CI=true, stdin closed). Needs npm (for the first install),
# python3, setpriv (util-linux; without it a client left running when the suite is stopped stays
# behind) and, without $CONFORMANCE_SERVER / $CONFORMANCE_CLIENT, cargo; reaches only the npm
# registry. Progress goes to stderr, the summary to stdout. RUST_LOG reaches the server and the
# client (the client's stdout and stderr are kept per scenario in OUT/<scenario>-<time>/).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

# The requirement sets run, in this order, by each leg.
REQUIREMENT_SETS=(2026-07-28 2025-11-25)
# Not-scored scenarios (pending, added after release) that must pass all the same, in every set
# that runs them. A name that no set of its leg runs is reported as a failure, so that a typo cannot
# disable it.
REQUIRED_NOT_SCORED=(
  server-session-lifecycle
  server-sse-polling
  json-schema-2020-12
  http-header-validation
  http-custom-header-server-validation
  # The tasks extension (SEP-2663), run with the 2026-07-28 set.
  tasks-lifecycle
  tasks-capability-negotiation
  tasks-wire-fields
  tasks-request-state-removal
  tasks-mrtr-input
  tasks-request-headers
  tasks-dispatch-and-envelope
  tasks-status-notifications
  tasks-required-task-error
  tasks-mrtr-composition
)
REQUIRED_NOT_SCORED_CLIENT=(
  json-schema-2020-12-preservation
  auth/client-credentials-basic
  auth/client-credentials-jwt
  auth/enterprise-managed-authorization
  auth/dpop
  auth/dpop-nonce
  auth/wif-jwt-bearer
)
# Extension scenarios no requirement set selects, run one by one (`--scenario NAME --force`) at
# 2026-07-28, each into its own folder (`ext-NAME`, `client-ext-NAME`): every check must pass,
# and a scenario that verified nothing (the extension undeclared, all SKIPPED) fails.
EXTENSION_SCENARIOS=(
  sep-2640-skills-directory
  sep-2640-skills-enumeration
  sep-2640-skills-manifest
)
EXTENSION_SCENARIOS_CLIENT=(
  sep-2640-client-no-prefetch
  sep-2640-client-verify-digest
  sep-2640-client-verify-size
  sep-2640-client-verify-frontmatter
)
EXTENSION_REVISION=2026-07-28
# Scored client scenarios allowed to fail for now (none since the authorization issue).
CLIENT_EXPECTED_FAILURES=scripts/conformance/client-expected-failures.yml
# Seconds the server gets to accept connections, and one requirement set gets to finish.
READY_TIMEOUT=20
SET_TIMEOUT=${CONFORMANCE_SET_TIMEOUT:-300}
# Milliseconds the suite gives one client process before killing it (its default, 30000, is short
# for ~40 scenarios started at once on a small machine).
CLIENT_TIMEOUT_MS=60000

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

# The legs to run, in the order server, client.
run_server=0
run_client=0
read -r -a legs <<<"${CONFORMANCE_LEGS-server client}"
for leg in "${legs[@]}"; do
  case $leg in
    server) run_server=1 ;;
    client) run_client=1 ;;
    *) fail "CONFORMANCE_LEGS: unknown leg '$leg' (the legs are server and client)" ;;
  esac
done
[ $((run_server + run_client)) -gt 0 ] || fail "CONFORMANCE_LEGS selects no leg (the legs are server and client)"
legs=()
[ "$run_server" -eq 0 ] || legs+=(server)
[ "$run_client" -eq 0 ] || legs+=(client)

exec </dev/null
export CI=true
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

start=$SECONDS
command -v python3 >/dev/null || fail "python3 is needed (free port, summary)"
[[ $SET_TIMEOUT =~ ^[1-9][0-9]*$ ]] || fail "CONFORMANCE_SET_TIMEOUT must be a number of seconds, not '$SET_TIMEOUT'"
[ "$run_client" -eq 0 ] || [ -f "$CLIENT_EXPECTED_FAILURES" ] || fail "$CLIENT_EXPECTED_FAILURES is missing"
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

# --- The binaries -----------------------------------------------------------------------------
built=""
if { [ "$run_server" -eq 1 ] && [ -z "${CONFORMANCE_SERVER:-}" ]; } \
  || { [ "$run_client" -eq 1 ] && [ -z "${CONFORMANCE_CLIENT:-}" ]; }; then
  log "building conformance-server and conformance-client (cargo build --release -p conformance)"
  cargo build --release --locked -p conformance 9>&- >&2 || fail "cargo build failed"
  built="$(cargo metadata --format-version 1 --no-deps 9>&- \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release"
fi
if [ "$run_server" -eq 1 ]; then
  if [ -n "${CONFORMANCE_SERVER:-}" ]; then
    server=$CONFORMANCE_SERVER
    log "server: $server (\$CONFORMANCE_SERVER)"
  else
    server="$built/conformance-server"
  fi
  [ -x "$server" ] || fail "$server is not an executable"
fi
if [ "$run_client" -eq 1 ]; then
  if [ -n "${CONFORMANCE_CLIENT:-}" ]; then
    client=$CONFORMANCE_CLIENT
    log "client: $client (\$CONFORMANCE_CLIENT)"
  else
    client="$built/conformance-client"
  fi
  [ -f "$client" ] && [ -x "$client" ] || fail "$client is not an executable"
  [[ $client == /* ]] || client="$ROOT/$client"
  # The suite splits --command on spaces and runs it through /bin/sh.
  [[ $client =~ ^[A-Za-z0-9_./+=:@%,-]+$ ]] \
    || fail "the client path $client has a character the suite's --command cannot take (space or shell syntax)"
  # The suite runs `/bin/sh -c "COMMAND URL"` and, on its per-client timeout, kills that process:
  # `exec` makes it the client itself rather than a shell that would leave the client behind, and
  # setpriv's parent-death signal ends the client when the suite itself dies (set timeout, signal).
  if command -v setpriv >/dev/null; then
    client_command="exec setpriv --pdeathsig KILL $client"
  else
    client_command="exec $client"
    log "setpriv (util-linux) not found: a client still running when the suite is stopped is left behind"
  fi
fi

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

# Runs the suite (the arguments after `conformance`) for one set of one leg into $out, bounded by
# SET_TIMEOUT, keeping its stdout, stderr and exit status; sets `status`.
run_suite() {
  local label=$1 set_start=$SECONDS
  shift
  log "running the $label set (stdout: ${out#"$ROOT"/}/suite.stdout.log)"
  status=0
  timeout --foreground --kill-after=10 "$SET_TIMEOUT" "$SUITE_BIN" "$@" \
    >"$out/suite.stdout.log" 2>"$out/suite.stderr.log" 9>&- &
  suite_pid=$!
  wait "$suite_pid" || status=$?
  suite_pid=""
  echo "$status" >"$out/suite.exit"
  [ "$status" -ne 124 ] || log "the $label set was stopped after $SET_TIMEOUT s"
  log "$label set done in $((SECONDS - set_start)) s, suite exit status $status"
}

# --- The suite --------------------------------------------------------------------------------
declare -A suite_status
extension_status=()
outdirs=()
crashes=()
timings=""
if [ "$run_server" -eq 1 ]; then
  leg_start=$SECONDS
  for rev in "${REQUIREMENT_SETS[@]}"; do
    out="$RESULTS/$rev"
    mkdir -p "$out"
    outdirs+=("$out")
    "$SUITE_BIN" list --requirements "$rev" >"$out/requirements.txt" 9>&- || fail "conformance list --requirements $rev failed"
    [ -n "$server_pid" ] || start_server
    run_suite "server $rev" server --url "$url" --requirements "$rev" -o "$out"
    suite_status[server/$rev]=$status
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
  for scenario in "${EXTENSION_SCENARIOS[@]}"; do
    out="$RESULTS/ext-$scenario"
    mkdir -p "$out"
    outdirs+=("$out")
    [ -n "$server_pid" ] || start_server
    run_suite "server $scenario" server --url "$url" --scenario "$scenario" \
      --spec-version "$EXTENSION_REVISION" --force -o "$out"
    extension_status+=("$scenario:$status")
  done
  stop
  timings+="; server leg $((SECONDS - leg_start)) s"
fi
if [ "$run_client" -eq 1 ]; then
  leg_start=$SECONDS
  log "client: $client_command URL (each set runs all its scenarios at once)"
  for rev in "${REQUIREMENT_SETS[@]}"; do
    out="$RESULTS/client-$rev"
    mkdir -p "$out"
    outdirs+=("$out")
    "$SUITE_BIN" list --requirements "$rev" >"$out/requirements.txt" 9>&- || fail "conformance list --requirements $rev failed"
    run_suite "client $rev" client --command "$client_command" --requirements "$rev" \
      --timeout "$CLIENT_TIMEOUT_MS" --expected-failures "$ROOT/$CLIENT_EXPECTED_FAILURES" -o "$out"
    suite_status[client/$rev]=$status
  done
  for scenario in "${EXTENSION_SCENARIOS_CLIENT[@]}"; do
    out="$RESULTS/client-ext-$scenario"
    mkdir -p "$out"
    outdirs+=("$out")
    run_suite "client $scenario" client --command "$client_command" --scenario "$scenario" \
      --spec-version "$EXTENSION_REVISION" --force --timeout "$CLIENT_TIMEOUT_MS" -o "$out"
    extension_status+=("$scenario:$status")
  done
  timings+="; client leg $((SECONDS - leg_start)) s"
fi

# --- Summary ----------------------------------------------------------------------------------
summarize_args=()
if [ "$run_server" -eq 1 ]; then
  for name in "${REQUIRED_NOT_SCORED[@]}"; do
    summarize_args+=(--require "$name")
  done
fi
if [ "$run_server" -eq 1 ] && [ -n "${SERVER_EXPECTED_FAILURES:-}" ]; then
  summarize_args+=(--expected-server "$SERVER_EXPECTED_FAILURES")
fi
if [ "$run_client" -eq 1 ]; then
  for name in "${REQUIRED_NOT_SCORED_CLIENT[@]}"; do
    summarize_args+=(--require-client "$name")
  done
  summarize_args+=(--expected "$CLIENT_EXPECTED_FAILURES")
fi
summary_status=0
python3 scripts/conformance/summarize.py "${summarize_args[@]}" "${outdirs[@]}" >"$RESULTS/summary.txt" || summary_status=$?
cat "$RESULTS/summary.txt"
[ "$summary_status" -le 1 ] || fail "summarize.py failed (status $summary_status)"

bad=$summary_status
for leg in "${legs[@]}"; do
  for rev in "${REQUIREMENT_SETS[@]}"; do
    status=${suite_status[$leg/$rev]}
    # The server leg runs without a baseline: its suite exits 0 exactly when every scored scenario
    # passed. The client leg's suite exits 1 also on stale expected failures and on warnings (the
    # summary checked that its status agrees with the checks); anything else is a crash or timeout.
    # With SERVER_EXPECTED_FAILURES the server leg is judged the same way (its status 1 means a
    # failing check, which the summary weighed against the file).
    lenient=0
    { [ "$leg" = client ] || [ -n "${SERVER_EXPECTED_FAILURES:-}" ]; } && lenient=1
    if [ "$status" -ne 0 ] && { [ "$lenient" -eq 0 ] || [ "$status" -ne 1 ]; }; then
      echo "FAILED: the suite exited with status $status for the $leg leg, $rev"
      bad=1
    fi
  done
done
# An extension scenario's run: 0 passed, 1 a failing check (weighed by the summary); anything
# else is a crash or a timeout.
for entry in "${extension_status[@]}"; do
  if [ "${entry##*:}" -gt 1 ]; then
    echo "FAILED: the suite exited with status ${entry##*:} for the extension scenario ${entry%:*}"
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
log "done in $((SECONDS - start)) s$timings; results in ${RESULTS#"$ROOT"/}"
[ "$bad" -eq 0 ] \
  && echo "conformance: ${legs[*]}: all scored scenarios (expected failures aside) and required not-scored scenarios passed"
exit "$bad"
