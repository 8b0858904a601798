#!/usr/bin/env bash
# mcpkit against the reference servers, side by side, measured by mcp-load (crates/bench).
#
#   cargo build --release -p mcpkit -p bench
#   RMCP_ECHO=.../rust-echo CEILING_STDIO=.../stdio-ceiling CEILING_HTTP=.../http-ceiling scripts/bench.sh
#
# Every scenario of the table is run RUNS times (default 3) against every server given, the
# servers alternating (their order rotates from one run to the next), the server pinned to core 1
# and mcp-load to core 0 with `taskset` when there are two cores or more. The table printed on
# stdout (markdown) holds the medians and the ratios mcpkit ÷ rmcp and mcpkit ÷ limit; compare
# ratios, not figures, on a shared machine. Progress and any failure go to stderr.
#
# Environment:
#   MCPKIT, MCP_LOAD  the binaries measured (default target/release/mcpkit, target/release/mcp-load)
#   RMCP_ECHO         the rmcp echo peer (`rust-echo`): run as `stdio-pipes` and `http PORT`, with
#                     ECHO_CACHED_ROUTER=1 (its best mode); the column is left out when unset
#   CEILING_STDIO     the stdio limit (`stdio-ceiling`, run as `stdio-ceiling echo`)
#   CEILING_HTTP      the HTTP limit (`http-ceiling`, run as `http-ceiling PORT echo`). The limit
#                     knows no `initialize`: in the legacy rows it answers the 2026-07-28 requests.
#   RUNS              runs of every scenario (default 3)
#   SCALE             percent of the default request counts (default 100; e.g. 25 for a quick look)
#   JSON_OUT          also keep every mcp-load report (one JSON object a line) in this file
#
# Bounded: every run has a request count and a timeout, HTTP servers listen on free loopback
# ports, and every process started here is stopped on exit (mcp-load stops the servers it starts).
set -euo pipefail
cd "$(dirname "$0")/.."

MCPKIT=${MCPKIT:-target/release/mcpkit}
MCP_LOAD=${MCP_LOAD:-target/release/mcp-load}
RUNS=${RUNS:-3}
SCALE=${SCALE:-100}
source scripts/lib/processes.sh
require_built "$MCPKIT" "$MCP_LOAD"
for var in RMCP_ECHO CEILING_STDIO CEILING_HTTP; do
  if [ -n "${!var:-}" ] && [ ! -x "${!var}" ]; then
    echo "error: $var=${!var} is not an executable" >&2
    exit 2
  fi
done
case "$RUNS$SCALE" in *[!0-9]*) echo "error: RUNS and SCALE are whole numbers" >&2; exit 2 ;; esac

work=$(mktemp -d)
load_pid=
cleanup() {
  stop_quietly "$load_pid"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

load_pin=() server_pin=() pinning="none"
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  load_pin=(taskset -c 0) server_pin=(taskset -c 1) pinning="server on core 1, load on core 0"
fi

source scripts/lib/net.sh

# The server command for SERVER ("mcpkit", "rmcp", "limit") on TRANSPORT in ERA, or nothing when
# that server was not given; PORT is used on HTTP. rmcp serves a legacy client over HTTP with
# sessions (its stateless mode has none to name).
server_command() {
  local server=$1 transport=$2 port=${3:-} era=${4:-modern}
  case "$server/$transport/$era" in
    rmcp/http/legacy) [ -n "${RMCP_ECHO:-}" ] && echo "env ECHO_CACHED_ROUTER=1 $RMCP_ECHO http $port --sessions" ;;
  esac
  [ "$server/$transport/$era" = rmcp/http/legacy ] && return 0
  case "$server/$transport" in
    mcpkit/stdio) echo "$MCPKIT serve --stdio" ;;
    mcpkit/http) echo "$MCPKIT serve --http 127.0.0.1:$port" ;;
    rmcp/stdio) [ -n "${RMCP_ECHO:-}" ] && echo "env ECHO_CACHED_ROUTER=1 $RMCP_ECHO stdio-pipes" ;;
    rmcp/http) [ -n "${RMCP_ECHO:-}" ] && echo "env ECHO_CACHED_ROUTER=1 $RMCP_ECHO http $port" ;;
    limit/stdio) [ -n "${CEILING_STDIO:-}" ] && echo "$CEILING_STDIO echo" ;;
    limit/http) [ -n "${CEILING_HTTP:-}" ] && echo "$CEILING_HTTP $port echo" ;;
  esac
  return 0
}

# id | row of the table | transport | era | in flight | text bytes | requests | warm-up | starts | idle wait
# (`starts`: how many times the server is started in each run; the start-up rows, whose figures
# are single samples, start it several times and take the median of all. `idle wait`: ms to wait
# after the start before reading the idle memory and sending the first request; 0 = at once.)
scenarios="\
s1|stdio, 1 in flight, 100 B|stdio|legacy|1|100|20000|1000|1|0
s1m|stdio, 1 in flight, 100 B, 2026-07-28|stdio|modern|1|100|20000|1000|1|0
s64|stdio, 64 in flight, 100 B|stdio|legacy|64|100|100000|2000|1|0
s64m|stdio, 64 in flight, 100 B, 2026-07-28|stdio|modern|64|100|100000|2000|1|0
s64k|stdio, 64 in flight, 10 KB|stdio|legacy|64|10240|40000|1000|1|0
s8M|stdio, 8 in flight, 1 MB|stdio|legacy|8|1048576|400|40|1|0
h1|HTTP, 1 connection, 100 B, 2026-07-28|http|modern|1|100|10000|500|1|0
h16|HTTP, 16 connections, 100 B, 2026-07-28|http|modern|16|100|50000|1000|1|0
h16l|HTTP, 16 connections, 100 B, legacy session|http|legacy|16|100|50000|1000|1|0
h8M|HTTP, 8 connections, 1 MB, 2026-07-28|http|modern|8|1048576|300|30|1|0
up|start-up, stdio, 2026-07-28|stdio|modern|1|100|1|0|10|0
uh|start-up, HTTP, 2026-07-28|http|modern|1|100|1|0|5|0
is|idle, stdio, 2026-07-28|stdio|modern|1|100|1|0|2|500
ih|idle, HTTP, 2026-07-28|http|modern|1|100|1|0|2|500"

results=$work/results.jsonl
: >"$results"

# One mcp-load run of scenario ID against SERVER; its JSON report is appended to $results.
measure() {
  local run=$1 server=$2 id=$3 row=$4 transport=$5 era=$6 inflight=$7 bytes=$8 requests=$9 warmup=${10}
  local idle_wait=${11} port= command status=0
  [ "$transport" = http ] && port=$(free_port)
  command=$(server_command "$server" "$transport" "$port" "$era")
  [ -n "$command" ] || return 0
  local args=(--json --quiet-server --timeout 300 --requests "$requests" --warmup "$warmup" --text-bytes "$bytes"
    --idle-wait "$idle_wait")
  if [ "$transport" = stdio ]; then
    args+=(--concurrency "$inflight")
    # The limit knows no initialize: it answers the 2026-07-28 requests in the legacy rows.
    [ "$era" = legacy ] && [ "$server" != limit ] && args+=(--legacy)
  else
    args+=(--url "http://127.0.0.1:$port/mcp" --connections "$inflight")
    # One session for all connections; the limit knows no initialize (as on stdio).
    [ "$era" = legacy ] && [ "$server" != limit ] && args+=(--legacy)
  fi
  echo "run $run/$RUNS: $row: $server" >&2
  # shellcheck disable=SC2086 # the server command is split into its words on purpose
  "${load_pin[@]}" "$MCP_LOAD" "${args[@]}" -- "${server_pin[@]}" $command >"$work/out" 2>"$work/err" &
  load_pid=$!
  wait "$load_pid" || status=$?
  load_pid=
  if [ "$status" -ne 0 ]; then
    echo "  failed (exit $status): $(tail -n 3 "$work/err" "$work/out" | tr '\n' ' ')" >&2
    return 0
  fi
  python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); r.update(scenario=sys.argv[1], peer=sys.argv[2], run=int(sys.argv[3])); print(json.dumps(r))' \
    "$id" "$server" "$run" <"$work/out" >>"$results"
}

servers=(mcpkit rmcp limit)
for ((run = 1; run <= RUNS; run++)); do
  # Rotate the order of the servers from one run to the next.
  shift_by=$(((run - 1) % ${#servers[@]}))
  order=("${servers[@]:shift_by}" "${servers[@]:0:shift_by}")
  while IFS='|' read -r id row transport era inflight bytes requests warmup starts idle_wait; do
    requests=$((requests * SCALE / 100))
    [ "$requests" -ge 1 ] || requests=1
    for server in "${order[@]}"; do
      for ((start = 1; start <= starts; start++)); do
        measure "$run" "$server" "$id" "$row" "$transport" "$era" "$inflight" "$bytes" "$requests" "$warmup" \
          "$idle_wait"
      done
    done
  done <<<"$scenarios"
done
[ -z "${JSON_OUT:-}" ] || cp "$results" "$JSON_OUT"

echo "checkout $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d), $(nproc) cores, pinning: $pinning, medians of $RUNS runs, requests at $SCALE %"
echo
SCENARIOS=$scenarios python3 - "$results" <<'EOF'
import json, os, statistics, sys

runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
scenarios = [line.split("|") for line in os.environ["SCENARIOS"].splitlines()]
peers = ["limit", "rmcp", "mcpkit"]
present = [p for p in peers if any(r["peer"] == p for r in runs)]

def median(scenario, peer, key):
    values = [r[key] for r in runs if r["scenario"] == scenario and r["peer"] == peer and r.get(key) is not None]
    return statistics.median(values) if values else None

def rate(v):
    return "–" if v is None else f"{v / 1000:.3g}k" if v >= 1000 else f"{v:.0f}"

def us(v):
    return "–" if v is None else f"{v:.1f} µs"

def mib(v):
    return "–" if v is None else f"{v / 1024:.1f} MiB"

def ms(v):
    return "–" if v is None else f"{v:.1f} ms"

def ratio(a, b):
    return "–" if a is None or b is None or b == 0 else f"{a / b:.2f}"

names = {"limit": "limit", "rmcp": "rmcp best mode", "mcpkit": "mcpkit"}
head = ["scenario"] + [names[p] for p in present]
head += [f"mcpkit ÷ {names[p]}" for p in ("rmcp", "limit") if p in present]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))

def row(label, values):
    cells = [label] + [fmt(values[p]) for p in present]
    cells += [ratio(values["mcpkit"], values[p]) for p in ("rmcp", "limit") if p in present]
    print("| " + " | ".join(cells) + " |")

fmt = rate
for scenario, label, *_ in scenarios:
    if not label.startswith(("start-up", "idle")):
        row(f"{label} (req/s)", {p: median(scenario, p, "requests_per_s") for p in peers})
fmt = lambda v: "–" if v is None else f"{v / 1000:.2f} ms"
for scenario, label in [("s1", "stdio, 1 in flight, 100 B"), ("h1", "HTTP, 1 connection, 100 B")]:
    for p in ("p50", "p99"):
        values = {}
        for peer in peers:
            lat = [r["latency_us"][p] for r in runs if r["scenario"] == scenario and r["peer"] == peer]
            values[peer] = statistics.median(lat) if lat else None
        row(f"latency {p}, {label}", values)
fmt = us
for scenario, label in [("s64k", "stdio 64 in flight, 10 KB"), ("s64", "stdio 64 in flight, 100 B"),
                        ("h16", "HTTP 16 connections, 100 B")]:
    row(f"server CPU per request, {label}", {p: median(scenario, p, "server_cpu_us_per_request") for p in peers})
fmt = mib
row("idle RSS, before the first request (stdio)", {p: median("is", p, "idle_rss_kib") for p in peers})
row("idle RSS, before the first request (HTTP)", {p: median("ih", p, "idle_rss_kib") for p in peers})
row("RSS after the first answer (stdio)", {p: median("up", p, "first_answer_rss_kib") for p in peers})
row("peak RSS, stdio 8 in flight, 1 MB", {p: median("s8M", p, "peak_rss_kib") for p in peers})
row("peak RSS, HTTP 8 connections, 1 MB", {p: median("h8M", p, "peak_rss_kib") for p in peers})
fmt = ms
row("start-up to first answer (stdio)", {p: median("up", p, "startup_ms") for p in peers})
row("start-up to first answer (HTTP)", {p: median("uh", p, "startup_ms") for p in peers})
EOF
