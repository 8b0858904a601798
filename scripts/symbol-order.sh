#!/usr/bin/env bash
# Writes crates/mcpkit/link/symbol-order.txt: the functions `mcpkit` runs from start to idle (a
# gateway with one stdio upstream, the upstream itself, `serve --http`), then those calls add:
# through the gateway (a few over its stdio upstream, 400 at 16 connections over an HTTP one, on
# the workers of a multi-thread runtime and on one thread), to `serve --http` itself, and to a
# server and a gateway that trace every request and push their metrics over OTLP (to the bench
# crate's `mcp-otlp-sink`). The request path (what the calls ran beyond start-up, by callgrind's
# count of each function's own instructions) is listed hottest first.
# crates/mcpkit/build.rs has the linker place them first, together, so
# that start-up maps a few MiB of code instead of most of the binary (docs/PERFORMANCE.md, "Idle
# memory"). Run it again after updating dependencies or the toolchain (the names carry hashes
# that change with them; names the build no longer has are skipped, so a stale list costs
# memory, never correctness).
#
#   cargo build --release -p mcpkit -p bench && scripts/symbol-order.sh
#   scripts/symbol-order.sh --check   # how many of the listed names the release binary has
#
# Needs valgrind (callgrind records every function that runs) and nm.
set -euo pipefail
cd "$(dirname "$0")/.."
MCPKIT=$(realpath "${MCPKIT:-target/release/mcpkit}")
MCP_LOAD=${MCP_LOAD:-target/release/mcp-load}
SINK=${SINK:-target/release/mcp-otlp-sink}
OUT=crates/mcpkit/link/symbol-order.txt
if [ "${1:-}" = --check ]; then
  listed=$(wc -l <"$OUT")
  found=$(nm --defined-only "$MCPKIT" | awk '$2 ~ /^[tT]$/ {print $3}' | sort | comm -12 - <(sort "$OUT") | wc -l)
  echo "$found of the $listed functions listed in $OUT are in $MCPKIT"
  [ "$found" -ge $((listed * 99 / 100)) ] || { echo "stale: run scripts/symbol-order.sh again" >&2; exit 1; }
  exit 0
fi
work=$(mktemp -d)
pids=()
sink=
cleanup() { for p in "${pids[@]}" $sink; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

cat > "$work/gateway.toml" <<TOML
[servers.echo]
command = "$MCPKIT"
args = ["serve", "--stdio"]
TOML

grind() { # grind NAME ARGS...: runs mcpkit under callgrind, its children too
  local name=$1; shift
  valgrind --tool=callgrind --demangle=no --compress-strings=no --dump-instr=no --trace-children=yes \
    --callgrind-out-file="$work/$name.%p" "$MCPKIT" "$@" >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
}
url_of() { # url_of NAME: waits for the `listening on` line
  for _ in $(seq 1 240); do
    if grep -q "upstream echo: ready\|listening on" "$work/$1.err" 2>/dev/null \
      && url=$(grep -o 'listening on http://[^ ]*/mcp' "$work/$1.err" | head -1); then
      echo "${url#listening on }"; return 0
    fi
    sleep 0.5
  done
  echo "no URL from $1" >&2; return 1
}
stop_all() { for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done; wait "${pids[@]}" 2>/dev/null || true; pids=(); }

# 1. Start and idle.
grind idle-gateway gateway --config "$work/gateway.toml" --http 127.0.0.1:0
grind idle-serve serve --http 127.0.0.1:0
url_of idle-gateway >/dev/null; url_of idle-serve >/dev/null
for _ in $(seq 1 60); do grep -q "ready" "$work/idle-gateway.err" && break; sleep 0.5; done
sleep 4
stop_all

calls_through() { # calls_through NAME CONFIG CONNECTIONS REQUESTS [ARGS...]: a gateway under callgrind, called
  local name=$1 config=$2 connections=$3 requests=$4 url
  shift 4
  grind "$name" gateway --config "$config" --http 127.0.0.1:0 "$@"
  url=$(url_of "$name")
  for _ in $(seq 1 60); do grep -q "ready" "$work/$name.err" && break; sleep 0.5; done
  if [ -x "$MCP_LOAD" ]; then
    "$MCP_LOAD" --url "$url" --connections "$connections" --requests "$requests" --warmup 0 --json >/dev/null
  fi
  stop_all
}

# 2. A few calls through the gateway (the code the first calls bring in).
calls_through calls-gateway "$work/gateway.toml" 2 50

# 3. Calls through a gateway in front of an HTTP upstream, 16 at a time: the client's HTTP
# connections and what many calls in flight run (the benchmarks' load; code left out of the
# list is scattered, and its pages counted in the RSS under load).
http_upstream() { # http_upstream: a new `serve --http` (stop_all ends it with the gateway)
  rm -f "$work/upstream.err" # so that url_of never reads the last one's
  "$MCPKIT" serve --http 127.0.0.1:0 >"$work/upstream.out" 2>"$work/upstream.err" &
  pids+=($!)
  printf '[servers.echo]\nurl = "%s"\n' "$(url_of upstream)" >"$work/http-gateway.toml"
}
http_upstream
calls_through calls-http "$work/http-gateway.toml" 16 400
# The same on one thread: what a gateway on one CPU runs (the benchmarks pin it to one core).
http_upstream
calls_through calls-one "$work/http-gateway.toml" 16 400 --threads 1

# 4. Calls to `serve --http` itself (its own call path, which a gateway does not run), and to a
# server and a gateway that trace every request and push their metrics over OTLP to a local
# sink (the observation code an operator turns on: left out, it is scattered like the rest).
grind calls-serve serve --http 127.0.0.1:0
url=$(url_of calls-serve)
[ -x "$MCP_LOAD" ] && "$MCP_LOAD" --url "$url" --connections 16 --requests 400 --warmup 0 --json >/dev/null
stop_all
if [ -x "$SINK" ]; then
  "$SINK" --listen 127.0.0.1:0 >"$work/sink.out" &
  sink=$!
  for _ in $(seq 1 100); do grep -q '^listening' "$work/sink.out" && break; sleep 0.05; done
  export OTEL_EXPORTER_OTLP_ENDPOINT="http://$(sed -n 's/^listening .*\(127\.0\.0\.1:[0-9]*\)$/\1/p' "$work/sink.out")"
  export OTEL_BSP_SCHEDULE_DELAY=200 OTEL_METRIC_EXPORT_INTERVAL=500
  grind calls-traced-serve serve --http 127.0.0.1:0
  url=$(url_of calls-traced-serve)
  [ -x "$MCP_LOAD" ] && "$MCP_LOAD" --url "$url" --connections 16 --requests 400 --warmup 0 --json >/dev/null
  sleep 1
  stop_all
  http_upstream
  calls_through calls-traced "$work/http-gateway.toml" 16 400
  unset OTEL_EXPORTER_OTLP_ENDPOINT OTEL_BSP_SCHEDULE_DELAY OTEL_METRIC_EXPORT_INTERVAL
  kill "$sink" 2>/dev/null || true
  wait "$sink" 2>/dev/null || true
  sink=
fi

nm --defined-only "$MCPKIT" >"$work/nm.txt"
python3 - "$work" "$OUT" <<'PY'
import functools, glob, re, sys
work, out = sys.argv[1], sys.argv[2]
text = {}
for line in open(f"{work}/nm.txt"):
    p = line.split()
    if len(p) == 3 and p[1] in "tT":
        text[p[2]] = int(p[0], 16)
# The gateway's own process and its stdio upstream (`serve --stdio`), told apart by their
# command lines.
files = glob.glob(f"{work}/idle-gateway.[0-9]*")
def is_gateway(f):
    return any(line.startswith("cmd:") and " gateway " in line for line in open(f, errors="replace"))
@functools.cache  # each profile is read once, for both what ran and what it cost
def costs_in(f):
    """Each function's own instructions (callgrind's exclusive Ir) in one process's profile."""
    costs, fn, call = {}, None, False
    for line in open(f, errors="replace"):
        head = line[:1]
        if line.startswith("fn="):
            # A recursion's deeper levels are `NAME'2`, … (`--separate-recs`): the same function.
            fn = re.sub(r"'\d+$", "", re.sub(r"^\(\d+\) ?", "", line[3:].strip()))
            fn = fn if fn in text else None
            costs.setdefault(fn, 0)
        elif line.startswith("calls="):
            call = True  # the next cost line is the call's, not this function's own
        elif head.isdigit() or head in "+-*":
            # A position, then the events' counts: Ir first (a jump's line has none).
            fields = line.split()
            if not call and fn is not None and len(fields) > 1:
                costs[fn] += int(fields[1])
            call = False
    costs.pop(None, None)
    return costs
def names_in(f):
    return set(costs_in(f))
def ran(prefix):
    return set().union(*(names_in(f) for f in glob.glob(f"{work}/{prefix}[0-9]*")))
def cost(prefixes):
    total = {}
    for prefix in prefixes:
        for f in glob.glob(f"{work}/{prefix}[0-9]*"):
            for name, ir in costs_in(f).items():
                total[name] = total.get(name, 0) + ir
    return total
gateway = set().union(*(names_in(f) for f in files if is_gateway(f)))
serve = set().union(*(names_in(f) for f in files if not is_gateway(f))) | ran("idle-serve.")
runs = ["calls-gateway.", "calls-http.", "calls-one.", "calls-serve.", "calls-traced-serve.", "calls-traced."]
calls = set().union(*(ran(r) for r in runs)) - gateway - serve
# The request path: what the calls ran beyond what start-up explains, 20 instructions a call or
# more on average. The call runs start four gateways and three servers, the idle runs one and
# two: four times a function's idle count is at least what its start-ups in the call runs cost.
# (A traced process's exporter set-up counts as calls' work: a few functions, placed a little
# early.)
called, idle = cost(runs), cost(["idle-gateway.", "idle-serve."])
heat = {n: ir - 4 * idle.get(n, 0) for n, ir in called.items()}
made = 50 + 5 * 400
hot = {n for n, h in heat.items() if h >= 20 * made}
by_address = lambda names: sorted(names, key=lambda n: text[n])
by_heat = lambda names: sorted(names, key=lambda n: (-heat[n], text[n]))
started = gateway | serve
# First the request path's functions that start-up runs too, hottest first; then the rest of
# start-up, the gateway's own, what both run, the server's own (each process's start-up code
# one run of pages); then the rest of the request path, hottest first, and what else the calls
# ran. The request path's code is so in two runs of pages, each in the order of its heat.
order = (by_heat(hot & started)
         + by_address(gateway - serve - hot) + by_address((gateway & serve) - hot) + by_address(serve - gateway - hot)
         + by_heat(hot - started) + by_address(calls - hot))
with open(out, "w") as f:
    f.write("\n".join(order) + "\n")
print(f"{out}: {len(started)} functions run from start to idle ({len(gateway)} by the gateway, {len(serve)} by servers), "
      f"{len(calls)} more by the calls; {len(hot)} on the request path ({len(hot & started)} of them run at start-up too)")
PY
