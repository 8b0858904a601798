#!/usr/bin/env bash
# mcpkit against its peers over Streamable HTTP: mcp-load's echo calls at 16 keep-alive
# connections to `mcpkit serve --http`, to `mcpkit gateway` in front of a `mcpkit serve`, to
# rmcp's echo server (the official Rust SDK; stateless, JSON answers) and to a bare hyper echo
# (the ceiling: not an MCP server, the most this machine does for the same bytes).
#
#   cargo build --release -p mcpkit -p bench
#   PEERS=/path/to/peers scripts/bench-peers.sh      # prints a markdown table on stdout
#
# PEERS is a folder holding the two reference servers built (`rmcp-echo/target/release/rust-echo`,
# `ceiling/target/release/http-ceiling`). They are not part of this repository; to build them from
# a copy of the reference folder:
#
#   PEERS=$(mktemp -d)/peers && cp -r REFERENCE/peers "$PEERS"
#   (cd "$PEERS/rmcp-echo" && cargo build --release) && (cd "$PEERS/ceiling" && cargo build --release)
#
# Each server is pinned to core 1 and mcp-load to core 0 (`taskset`, with two cores or more); the
# gateway's upstream runs on core 0 (UPSTREAM_CORE), so that core 1 holds the process measured and
# nothing else. The four run in rotation, ROUNDS times (default 5), the order reversed every other
# round; the table holds the medians: calls a second, latency p50 and p99 (µs), the CPU of the
# process mcp-load talks to (µs a call: for the gateway its own, not its upstream's) and its peak
# RSS (MiB). Compare the ratios: the machine's speed moves between runs, a round's servers share it.
#
# Environment: MCPKIT, MCP_LOAD (default target/release/{mcpkit,mcp-load}), PEERS, ROUNDS,
# REQUESTS (default 20000), CONNECTIONS (default 16), TEXT_BYTES (default 16), UPSTREAM_CORE
# (default 0), ONLY (a space-separated subset of "serve gateway rmcp ceiling").
set -euo pipefail
cd "$(dirname "$0")/.."

MCPKIT=${MCPKIT:-target/release/mcpkit}
MCP_LOAD=${MCP_LOAD:-target/release/mcp-load}
ROUNDS=${ROUNDS:-5}
REQUESTS=${REQUESTS:-20000}
CONNECTIONS=${CONNECTIONS:-16}
TEXT_BYTES=${TEXT_BYTES:-16}
UPSTREAM_CORE=${UPSTREAM_CORE:-0}
SERVERS=${ONLY:-serve gateway rmcp ceiling}
source scripts/lib/processes.sh
require_built "$MCPKIT" "$MCP_LOAD"
MCPKIT=$(cd "$(dirname "$MCPKIT")" && pwd)/$(basename "$MCPKIT")
RMCP=${PEERS:-}/rmcp-echo/target/release/rust-echo
CEILING=${PEERS:-}/ceiling/target/release/http-ceiling
for server in $SERVERS; do
  case $server in
    rmcp) [ -x "$RMCP" ] || { echo "error: $RMCP is not built (see the head of $0; set PEERS)" >&2; exit 2; } ;;
    ceiling) [ -x "$CEILING" ] || { echo "error: $CEILING is not built (see the head of $0; set PEERS)" >&2; exit 2; } ;;
    serve | gateway) ;;
    *) echo "error: unknown server $server (serve gateway rmcp ceiling)" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d)
upstream_pid=
cleanup() {
  stop_quietly "$upstream_pid"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

load_pin=() server_pin=() upstream_pin=() pinning="none"
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  load_pin=(taskset -c 0) server_pin=(taskset -c 1) upstream_pin=(taskset -c "$UPSTREAM_CORE")
  pinning="server on core 1, load on core 0, the gateway's upstream on core $UPSTREAM_CORE"
fi
source scripts/lib/net.sh

if [[ " $SERVERS " == *" gateway "* ]]; then
  upstream_port=$(free_port)
  "${upstream_pin[@]}" "$MCPKIT" serve --http "127.0.0.1:$upstream_port" 2>/dev/null &
  upstream_pid=$!
  wait_port "$upstream_port"
  printf '[servers.echo]\nurl = "http://127.0.0.1:%s/mcp"\n' "$upstream_port" >"$work/gateway.toml"
fi

results="$work/results.jsonl"
run() { # server
  local server=$1 port command
  port=$(free_port)
  case $server in
    serve) command=("$MCPKIT" serve --http "127.0.0.1:$port") ;;
    gateway) command=("$MCPKIT" gateway --config "$work/gateway.toml" --http "127.0.0.1:$port" --metrics off) ;;
    rmcp) command=(env ECHO_CACHED_ROUTER=1 "$RMCP" http "$port") ;;
    ceiling) command=("$CEILING" "$port" echo) ;;
  esac
  "${load_pin[@]}" "$MCP_LOAD" --json --quiet-server --timeout 600 --requests "$REQUESTS" --warmup 1000 \
    --text-bytes "$TEXT_BYTES" --url "http://127.0.0.1:$port/mcp" --connections "$CONNECTIONS" \
    -- "${server_pin[@]}" "${command[@]}" >"$work/out" 2>"$work/err" \
    || { echo "error: mcp-load failed ($server):" >&2; cat "$work/err" >&2; exit 1; }
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["server"]=sys.argv[2]; print(json.dumps(r))' \
    "$work/out" "$server" >>"$results"
  echo "  $server: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(round(r["requests_per_s"]), "calls/s,", round(r["server_cpu_us_per_request"], 1), "µs CPU a call")' "$work/out")" >&2
}

read -ra order <<<"$SERVERS"
for i in $(seq 1 "$ROUNDS"); do
  echo "round $i of $ROUNDS" >&2
  servers=("${order[@]}")
  if [ $((i % 2)) -eq 0 ]; then mapfile -t servers < <(printf "%s\n" "${order[@]}" | tac); fi
  for server in "${servers[@]}"; do run "$server"; done
done

echo "checkout $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d), $(nproc) cores, pinning: $pinning, medians of $ROUNDS rounds of $REQUESTS calls at $CONNECTIONS connections, $TEXT_BYTES-byte texts"
echo
python3 - "$results" $SERVERS <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
servers = sys.argv[2:]
def med(server, f):
    return statistics.median(f(r) for r in rows if r["server"] == server)
metrics = [
    ("calls/s", lambda r: r["requests_per_s"], "{:,.0f}"),
    ("p50 µs", lambda r: r["latency_us"]["p50"], "{:.0f}"),
    ("p99 µs", lambda r: r["latency_us"]["p99"], "{:.0f}"),
    ("CPU µs/call", lambda r: r["server_cpu_us_per_request"], "{:.1f}"),
    ("peak RSS MiB", lambda r: r["peak_rss_kib"] / 1024, "{:.1f}"),
]
print("| server | " + " | ".join(name for name, _, _ in metrics) + " |")
print("|---" * (len(metrics) + 1) + "|")
for server in servers:
    print(f"| {server} | " + " | ".join(fmt.format(med(server, f)) for _, f, fmt in metrics) + " |")
# Each round's own ratios of CPU a call: the machine's speed is the same within a round.
def per_round(a, b):
    ra = [r["server_cpu_us_per_request"] for r in rows if r["server"] == a]
    rb = [r["server_cpu_us_per_request"] for r in rows if r["server"] == b]
    return [x / y for x, y in zip(ra, rb) if y]
pairs = [(a, b) for a, b in (("gateway", "serve"), ("gateway", "rmcp"), ("serve", "rmcp"), ("serve", "ceiling")) if a in servers and b in servers]
if pairs:
    print()
    print("| CPU a call, each round's own ratio | median | range |")
    print("|---|---|---|")
    for a, b in pairs:
        q = per_round(a, b)
        print(f"| {a} ÷ {b} | {statistics.median(q):.2f} | {min(q):.2f}–{max(q):.2f} |")
PY
