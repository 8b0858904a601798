#!/usr/bin/env bash
# What metrics and traces cost, measured in pairs: in each round, a server with one kind of
# observation on and a server with none run AT THE SAME TIME on the same core, each loaded by
# its own mcp-load (CONCURRENCY connections, REQUESTS calls), so that whatever this machine's
# other tenants do falls on both alike. The figure is the CPU a call of the observed server over
# the plain one's, from the scheduler's own count (/proc/PID/task/*/schedstat, nanoseconds):
# a server that is saturated serves in inverse proportion to it, so 1 ÷ ratio is the throughput
# kept. scripts/bench-observability.sh runs the modes one after another instead; on a quiet
# machine the two agree, on a noisy one only this one resolves a few percent.
#
#   cargo build --release -p mcpkit -p bench
#   scripts/bench-observability-paired.sh      # prints a markdown table on stdout
#
# Modes: `metrics` (--metrics 127.0.0.1:0), `traces` (OTLP traces of every request to a local
# sink that answers 200, OTEL_METRICS_EXPORTER=none), `otlp` (traces and the metrics pushed, as
# OpenTelemetry's variables turn them on together), `sampled` (otlp, traces sampled at
# $SAMPLED_RATIO). Linux only (taskset, schedstat); needs two cores (servers on core 1, loads
# and the sink on core 0).
# Environment: MCPKIT, MCP_LOAD, SINK (default target/release/{mcpkit,mcp-load,mcp-otlp-sink}),
# ROUNDS (default 6), REQUESTS (default 30000 per server), CONCURRENCY (default 8 per server),
# MODES (default "metrics traces otlp sampled"), SAMPLED_RATIO (default 0.1).
#
# Two builds compared instead: AGAINST=path/to/another/mcpkit runs that build as the first
# server of each pair, observed in the same mode as $MCPKIT (mode `off`: neither observed), so
# the ratio is $MCPKIT's CPU a call over $AGAINST's.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-6}
REQUESTS=${REQUESTS:-30000}
CONCURRENCY=${CONCURRENCY:-8}
MODES=${MODES:-metrics traces otlp sampled}
AGAINST=${AGAINST:-}
SAMPLED_RATIO=${SAMPLED_RATIO:-0.1}
[ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null \
  || { echo "error: needs two cores and taskset (servers on core 1, loads on core 0)" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
source scripts/lib/observation.sh

# Nanoseconds the process has run on a CPU, all its threads.
ran() { cat /proc/"$1"/task/*/schedstat | awk '{ns += $1} END {printf "%d", ns}'; }

start_sink taskset -c 0
pids+=("$sink_pid")
otlp="OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$sink_port"

results="$work/results.txt"
pair() { # mode round
  local mode=$1 round=$2 plain_port observed_port extra=() env=(env -u OTEL_EXPORTER_OTLP_ENDPOINT)
  case $mode in
    metrics) extra=(--metrics 127.0.0.1:0) ;;
    traces) env=(env "$otlp" OTEL_METRICS_EXPORTER=none) ;;
    otlp) env=(env "$otlp") ;;
    sampled) env=(env "$otlp" OTEL_TRACES_SAMPLER=parentbased_traceidratio "OTEL_TRACES_SAMPLER_ARG=$SAMPLED_RATIO") ;;
    off) [ -n "$AGAINST" ] || { echo "error: mode off compares two builds: set AGAINST" >&2; exit 2; } ;;
    *) echo "error: unknown mode $mode" >&2; exit 2 ;;
  esac
  plain_port=$(free_port)
  observed_port=$(free_port)
  if [ -n "$AGAINST" ]; then
    "${env[@]}" taskset -c 1 "$AGAINST" serve --http "127.0.0.1:$plain_port" "${extra[@]}" 2>/dev/null &
  else
    env -u OTEL_EXPORTER_OTLP_ENDPOINT taskset -c 1 "$MCPKIT" serve --http "127.0.0.1:$plain_port" 2>/dev/null &
  fi
  local plain=$!
  "${env[@]}" taskset -c 1 "$MCPKIT" serve --http "127.0.0.1:$observed_port" "${extra[@]}" 2>/dev/null &
  local observed=$!
  pids+=("$plain" "$observed")
  wait_port "$plain_port"
  wait_port "$observed_port"
  local load=(taskset -c 0 "$MCP_LOAD" --json --timeout 600 --text-bytes 16 --connections "$CONCURRENCY")
  for port in "$plain_port" "$observed_port"; do
    "${load[@]}" --requests 3000 --warmup 100 --url "http://127.0.0.1:$port/mcp" >/dev/null
  done
  local plain0 observed0 plain1 observed1
  plain0=$(ran "$plain")
  observed0=$(ran "$observed")
  "${load[@]}" --requests "$REQUESTS" --warmup 0 --url "http://127.0.0.1:$plain_port/mcp" >"$work/plain.json" &
  local plain_load=$!
  "${load[@]}" --requests "$REQUESTS" --warmup 0 --url "http://127.0.0.1:$observed_port/mcp" >"$work/observed.json" &
  local observed_load=$!
  wait "$plain_load" "$observed_load"
  plain1=$(ran "$plain")
  observed1=$(ran "$observed")
  kill "$plain" "$observed" 2>/dev/null || true
  wait "$plain" "$observed" 2>/dev/null || true
  python3 - "$mode" "$round" "$REQUESTS" "$((plain1 - plain0))" "$((observed1 - observed0))" \
    "$work/plain.json" "$work/observed.json" >>"$results" <<'PY'
import json, sys
mode, round_, n, plain_ns, observed_ns = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
plain, observed = (json.load(open(f)) for f in sys.argv[6:8])
print(mode, round_, plain_ns / n / 1e3, observed_ns / n / 1e3, plain["requests_per_s"], observed["requests_per_s"])
PY
  echo "  $mode: $(tail -1 "$results" | awk '{printf "plain %.2f µs a call, observed %.2f µs: %.3f", $3, $4, $4 / $3}')" >&2
}

for round in $(seq 1 "$ROUNDS"); do
  echo "round $round of $ROUNDS" >&2
  for mode in $MODES; do pair "$mode" "$round"; done
done

[ -z "$AGAINST" ] || echo "$MCPKIT against $AGAINST (\"plain\" below), each in the same mode"
echo "checkout $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d), $(nproc) cores, both servers of a pair on core 1 at once, loads and sink on core 0, $ROUNDS rounds of $REQUESTS calls per server, $CONCURRENCY connections each, sampled at $SAMPLED_RATIO"
echo
python3 - "$results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
modes = list(dict.fromkeys(r[0] for r in rows))
print("| mode | plain CPU µs/call | observed CPU µs/call | CPU ratio, median (lowest–highest) | throughput kept (1 ÷ ratio) |")
print("|---|---|---|---|---|")
for m in modes:
    mine = [r for r in rows if r[0] == m]
    ratios = [float(r[3]) / float(r[2]) for r in mine]
    med = statistics.median(ratios)
    print(f"| {m} | {statistics.median(float(r[2]) for r in mine):.2f} | {statistics.median(float(r[3]) for r in mine):.2f} "
          f"| {med:.3f} ({min(ratios):.3f}–{max(ratios):.3f}) | {1 / med:.3f} |")
PY
