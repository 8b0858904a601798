#!/usr/bin/env bash
# What metrics, traces and the request log cost: mcp-load's echo calls to `mcpkit serve --http`
# with each off, then on, side by side (the issue's goal: at most 5 % of throughput at 16
# connections when on, nothing when off).
#
#   cargo build --release -p mcpkit -p bench
#   CONCURRENCY=16 scripts/bench-observability.sh     # prints a markdown table on stdout
#
# Modes, alternating within every run (their order rotates): `off` (no observer at all),
# `metrics` (--metrics 127.0.0.1:0), `otlp` (OTEL_EXPORTER_OTLP_ENDPOINT to a local sink that
# answers every export with 200: traces of every request and the metrics pushed, the two
# signals OpenTelemetry's variables turn on together), `traces` (the same with
# OTEL_METRICS_EXPORTER=none: traces alone), `sampled` (otlp with
# OTEL_TRACES_SAMPLER=parentbased_traceidratio and OTEL_TRACES_SAMPLER_ARG=$SAMPLED_RATIO,
# default 0.1), `all` (metrics, traces and --request-log to /dev/null).
# With two cores or more the server is pinned to core 1, where it runs on one thread (its
# runtime on one CPU). On a noisy machine, scripts/bench-observability-paired.sh resolves a few
# percent where this one cannot: it runs the observed and the plain server at the same time.
# Environment: MCPKIT, MCP_LOAD, SINK (default target/release/{mcpkit,mcp-load,mcp-otlp-sink}), RUNS (default 3),
# REQUESTS (default 20000), CONCURRENCY (default 16), TEXT_BYTES (default 16).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
REQUESTS=${REQUESTS:-20000}
CONCURRENCY=${CONCURRENCY:-16}
TEXT_BYTES=${TEXT_BYTES:-16}
SAMPLED_RATIO=${SAMPLED_RATIO:-0.1}

work=$(mktemp -d)
sink_pid=
cleanup() {
  stop_quietly "$sink_pid"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
source scripts/lib/observation.sh

load_pin=() server_pin=() pinning="none"
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  load_pin=(taskset -c 0) server_pin=(taskset -c 1) pinning="server on core 1, load and trace sink on core 0"
fi
start_sink "${load_pin[@]}"

results="$work/results.jsonl"
run() { # mode
  local mode=$1 port
  port=$(free_port)
  local args=(--json --quiet-server --timeout 600 --requests "$REQUESTS" --warmup 1000 --text-bytes "$TEXT_BYTES"
    --url "http://127.0.0.1:$port/mcp" --connections "$CONCURRENCY")
  local command=("$MCPKIT" serve --http "127.0.0.1:$port") env=(env -u OTEL_EXPORTER_OTLP_ENDPOINT)
  case $mode in
    off) ;;
    metrics) command+=(--metrics 127.0.0.1:0) ;;
    otlp) env=(env "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$sink_port") ;;
    traces) env=(env "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$sink_port" OTEL_METRICS_EXPORTER=none) ;;
    sampled) env=(env "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$sink_port"
      OTEL_TRACES_SAMPLER=parentbased_traceidratio "OTEL_TRACES_SAMPLER_ARG=$SAMPLED_RATIO") ;;
    all) command+=(--metrics 127.0.0.1:0 --request-log)
      env=(env "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$sink_port") ;;
  esac
  "${load_pin[@]}" "$MCP_LOAD" "${args[@]}" -- "${env[@]}" "${server_pin[@]}" "${command[@]}" >"$work/out" 2>"$work/err" \
    || { echo "error: mcp-load failed ($mode):" >&2; cat "$work/err" >&2; exit 1; }
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["mode"]=sys.argv[2]; r["round"]=int(sys.argv[3]); print(json.dumps(r))' \
    "$work/out" "$mode" "$round" >>"$results"
  echo "  $mode: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(round(r["requests_per_s"]), "calls/s, p50", r["latency_us"]["p50"], "µs")' "$work/out")" >&2
}

modes=(off metrics traces otlp sampled all)
for i in $(seq 1 "$RUNS"); do
  echo "run $i of $RUNS" >&2
  round=$i
  for j in 0 1 2 3 4 5; do run "${modes[$(((i + j) % 6))]}"; done
done

echo "checkout $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d), $(nproc) cores, pinning: $pinning, medians of $RUNS runs of $REQUESTS calls, $CONCURRENCY connections, $TEXT_BYTES-byte texts, sampled at $SAMPLED_RATIO"
echo
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def med(mode, f):
    return statistics.median(f(r) for r in rows if r["mode"] == mode)
measures = [
    ("calls/s", lambda r: r["requests_per_s"], "{:,.0f}"),
    ("p50 µs", lambda r: r["latency_us"]["p50"], "{:.0f}"),
    ("p99 µs", lambda r: r["latency_us"]["p99"], "{:.0f}"),
    ("CPU µs/call", lambda r: r["server_cpu_us_per_request"], "{:.1f}"),
]
others = ("metrics", "traces", "otlp", "sampled", "all")
print("| measure | off | " + " | ".join(others) + " | " + " | ".join(f"{m} ÷ off" for m in others) + " |")
print("|---" * (2 + 2 * len(others)) + "|")
for name, f, fmt in measures:
    off = med("off", f)
    cells = [fmt.format(med(m, f)) for m in ("off",) + others]
    ratios = ["{:.3f}".format(med(m, f) / off) if off else "-" for m in others]
    print(f"| {name} | " + " | ".join(cells + ratios) + " |")
# Each round runs every mode once, one after another: its own ratio to its own `off` leaves out
# what drifts between rounds (the machine's other load), so it is the steadier figure.
print()
print("| calls/s ÷ off, each round's own | " + " | ".join(others) + " |")
print("|---" * (1 + len(others)) + "|")
rounds = sorted({r["round"] for r in rows})
per = {m: [] for m in others}
for n in rounds:
    base = [r["requests_per_s"] for r in rows if r["round"] == n and r["mode"] == "off"]
    for m in others:
        mine = [r["requests_per_s"] for r in rows if r["round"] == n and r["mode"] == m]
        if base and mine:
            per[m].append(mine[0] / base[0])
print("| median (lowest–highest) | " + " | ".join(
    "{:.3f} ({:.3f}–{:.3f})".format(statistics.median(v), min(v), max(v)) for v in per.values()) + " |")
PY
