#!/usr/bin/env bash
# What `mcpkit gateway` adds to a call: mcp-load's echo calls sent straight to `mcpkit serve`, and
# through `mcpkit gateway` in front of the same server, side by side, over stdio and over HTTP.
#
#   cargo build --release -p mcpkit -p bench
#   scripts/bench-gateway.sh            # prints a markdown table on stdout
#
# Every row is run RUNS times (default 3), direct and gateway alternating; the table holds the
# medians: calls a second, latency p50 and p99 (µs), CPU of the process mcp-load talks to (µs a
# call; for the gateway its own, not its upstream's), and its peak RSS (MiB). "added" is the
# gateway's median minus the direct one. mcp-load is pinned to core 0 and the server (or the
# gateway) to core 1 with `taskset` when there are two cores or more; the gateway's upstream is
# pinned to core 1 too (the gateway's hop then shares the server's core, as on a busy host).
# Pinned to one core, `serve --http` and the gateway each run on one thread (their runtime on
# one CPU; docs/OPERATIONS.md, "Threads").
#
# Environment: MCPKIT, MCP_LOAD (default target/release/{mcpkit,mcp-load}), RUNS, REQUESTS
# (default 20000), CONCURRENCY (in flight at once; default 1), TEXT_BYTES (default 16), TRANSPORTS
# (default "stdio http"). RATE: HTTP calls a second in all, sent when due (mcp-load --rate; latency
# counted from when each was due) instead of each connection's next as soon as it can.
# UPSTREAM_CORE: the core of the HTTP gateway's upstream (default: the gateway's, core 1). With
# RATE, 0 keeps the two processes of the gateway's path from taking turns on one core (whose
# scheduler slices of milliseconds then show as the tail), the upstream beside a load generator
# that mostly sleeps. RELAY=1: a third HTTP route, mcp-relay (built with mcp-load; default beside
# MCP_LOAD, or RELAY_BIN) in front of the same upstream, copying bytes without parsing them: the
# floor under any gateway that makes one upstream exchange a call, printed as a second table. METRICS: the gateway's --metrics (default off, as the figures before metrics existed; 127.0.0.1:0 measures their cost).
set -euo pipefail
cd "$(dirname "$0")/.."

MCPKIT=${MCPKIT:-target/release/mcpkit}
MCP_LOAD=${MCP_LOAD:-target/release/mcp-load}
RUNS=${RUNS:-3}
REQUESTS=${REQUESTS:-20000}
CONCURRENCY=${CONCURRENCY:-1}
TEXT_BYTES=${TEXT_BYTES:-16}
RELAY_BIN=${RELAY_BIN:-$(dirname "$MCP_LOAD")/mcp-relay}
source scripts/lib/processes.sh
require_built "$MCPKIT" "$MCP_LOAD" ${RELAY:+"$RELAY_BIN"}
MCPKIT=$(cd "$(dirname "$MCPKIT")" && pwd)/$(basename "$MCPKIT")

work=$(mktemp -d)
upstream_pid=
cleanup() {
  stop_quietly "$upstream_pid"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

load_pin=() server_pin=() pinning="none"
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  load_pin=(taskset -c 0) server_pin=(taskset -c 1) pinning="gateway/server and upstream on core 1, load on core 0"
fi
source scripts/lib/net.sh

# The upstream of the HTTP gateway: one `mcpkit serve --http`, for every HTTP run.
upstream_port=$(free_port)
upstream_pin=("${server_pin[@]}")
if [ -n "${UPSTREAM_CORE:-}" ] && [ ${#server_pin[@]} -gt 0 ]; then
  upstream_pin=(taskset -c "$UPSTREAM_CORE")
  pinning="gateway/server on core 1, the HTTP upstream on core $UPSTREAM_CORE, load on core 0"
fi
# The relay copies the downstream's Host unchanged: it listens on one port the upstream accepts.
relay_port=$(free_port)
"${upstream_pin[@]}" "$MCPKIT" serve --http "127.0.0.1:$upstream_port" --allow-host "127.0.0.1:$relay_port" 2>/dev/null &
upstream_pid=$!
wait_port "$upstream_port"
printf '[servers.echo]\nurl = "http://127.0.0.1:%s/mcp"\n' "$upstream_port" >"$work/http.toml"
printf '[servers.echo]\ncommand = "%s"\nargs = ["serve", "--stdio"]\n' "$MCPKIT" >"$work/stdio.toml"
# The gateway's stdio upstream inherits the gateway's pinning (taskset is inherited).

results="$work/results.jsonl"
run() { # transport (stdio|http), route (direct|gateway)
  local transport=$1 route=$2 args=(--json --quiet-server --timeout 600 --requests "$REQUESTS" --warmup 1000
    --text-bytes "$TEXT_BYTES")
  local command
  if [ "$transport" = stdio ]; then
    args+=(--concurrency "$CONCURRENCY")
    if [ "$route" = direct ]; then command=("$MCPKIT" serve --stdio); else command=("$MCPKIT" gateway --config "$work/stdio.toml" --stdio --metrics "${METRICS:-off}"); fi
  else
    local port
    port=$(free_port)
    if [ "$route" = relay ]; then port=$relay_port; fi
    args+=(--url "http://127.0.0.1:$port/mcp" --connections "$CONCURRENCY")
    if [ -n "${RATE:-}" ]; then args+=(--rate "$RATE"); fi
    case $route in
      direct) command=("$MCPKIT" serve --http "127.0.0.1:$port") ;;
      relay) command=("$RELAY_BIN" --listen "127.0.0.1:$port" --upstream "127.0.0.1:$upstream_port") ;;
      *) command=("$MCPKIT" gateway --config "$work/http.toml" --http "127.0.0.1:$port" --metrics "${METRICS:-off}") ;;
    esac
  fi
  "${load_pin[@]}" "$MCP_LOAD" "${args[@]}" -- "${server_pin[@]}" "${command[@]}" >"$work/out" 2>"$work/err" \
    || { echo "error: mcp-load failed ($transport, $route):" >&2; cat "$work/err" >&2; exit 1; }
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["route"]=sys.argv[2]; print(json.dumps(r))' \
    "$work/out" "$route" >>"$results"
  echo "  $transport $route: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(round(r["requests_per_s"]), "calls/s, p50", r["latency_us"]["p50"], "µs")' "$work/out")" >&2
}

for transport in ${TRANSPORTS:-stdio http}; do
  for i in $(seq 1 "$RUNS"); do
    echo "run $i of $RUNS, $transport" >&2
    routes=(direct gateway)
    if [ -n "${RELAY:-}" ] && [ "$transport" = http ]; then routes=(direct relay gateway); fi
    if [ $((i % 2)) -eq 0 ]; then mapfile -t routes < <(printf "%s\n" "${routes[@]}" | tac); fi
    for route in "${routes[@]}"; do run "$transport" "$route"; done
  done
done

echo "checkout $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d), $(nproc) cores, pinning: $pinning, medians of $RUNS runs of $REQUESTS calls, $CONCURRENCY in flight${RATE:+ (HTTP at $RATE calls/s)}, $TEXT_BYTES-byte texts"
echo
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def med(transport, route, f):
    return statistics.median(f(r) for r in rows if r["transport"] == transport and r["route"] == route)
metrics = [
    ("calls/s", lambda r: r["requests_per_s"], "{:,.0f}"),
    ("p50 µs", lambda r: r["latency_us"]["p50"], "{:.0f}"),
    ("p99 µs", lambda r: r["latency_us"]["p99"], "{:.0f}"),
    ("CPU µs/call", lambda r: r["server_cpu_us_per_request"], "{:.1f}"),
    ("peak RSS MiB", lambda r: r["peak_rss_kib"] / 1024, "{:.1f}"),
]
print("| transport | measure | direct | through the gateway | added | ratio |")
print("|---|---|---|---|---|---|")
for transport in [t for t in ("stdio", "http") if any(r["transport"] == t for r in rows)]:
    for name, f, fmt in metrics:
        d, g = med(transport, "direct", f), med(transport, "gateway", f)
        ratio = g / d if d else float("nan")
        print(f"| {transport} | {name} | {fmt.format(d)} | {fmt.format(g)} | {fmt.format(g - d)} | {ratio:.2f} |")
if any(r["route"] == "relay" for r in rows):
    print()
    print("| http | direct | relay (bytes copied) | gateway | relay ÷ direct | gateway ÷ direct | gateway ÷ relay |")
    print("|---|---|---|---|---|---|---|")
    for name, f, fmt in metrics:
        d, r, g = (med("http", route, f) for route in ("direct", "relay", "gateway"))
        q = lambda a, b: f"{a / b:.2f}" if b else "nan"
        print(f"| {name} | {fmt.format(d)} | {fmt.format(r)} | {fmt.format(g)} | {q(r, d)} | {q(g, d)} | {q(g, r)} |")
PY
