#!/usr/bin/env bash
# Writes crates/mcpkit/link/symbol-order.txt: the functions `mcpkit` runs from start to idle (a
# gateway with one stdio upstream, the upstream itself, `serve --http`), then those calls through
# the gateway add (a few over its stdio upstream, 400 at 16 connections over an HTTP one, on
# the workers of a multi-thread runtime and on one thread).
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
OUT=crates/mcpkit/link/symbol-order.txt
if [ "${1:-}" = --check ]; then
  listed=$(wc -l <"$OUT")
  found=$(nm --defined-only "$MCPKIT" | awk '$2 ~ /^[tT]$/ {print $3}' | sort | comm -12 - <(sort "$OUT") | wc -l)
  echo "$found of the $listed functions listed in $OUT are in $MCPKIT"
  [ "$found" -ge $((listed * 9 / 10)) ] || { echo "stale: run scripts/symbol-order.sh again" >&2; exit 1; }
  exit 0
fi
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
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
stop_all() { for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done; wait || true; pids=(); }

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

nm --defined-only "$MCPKIT" >"$work/nm.txt"
python3 - "$work" "$OUT" <<'PY'
import glob, re, sys
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
def names_in(f):
    names = set()
    for line in open(f, errors="replace"):
        if line.startswith("fn="):
            name = re.sub(r"^\(\d+\) ?", "", line[3:].strip())
            if name in text:
                names.add(name)
    return names
def ran(prefix):
    return set().union(*(names_in(f) for f in glob.glob(f"{work}/{prefix}[0-9]*")))
gateway = set().union(*(names_in(f) for f in files if is_gateway(f)))
serve = set().union(*(names_in(f) for f in files if not is_gateway(f))) | ran("idle-serve.")
calls = (ran("calls-gateway.") | ran("calls-http.") | ran("calls-one.")) - gateway - serve
by_address = lambda names: sorted(names, key=lambda n: text[n])
# The gateway's own, then what both run, then the server's own: each process's start-up code is
# one run of pages.
order = by_address(gateway - serve) + by_address(gateway & serve) + by_address(serve - gateway)
with open(out, "w") as f:
    f.write("\n".join(order + by_address(calls)) + "\n")
print(f"{out}: {len(gateway | serve)} functions run from start to idle ({len(gateway)} by the gateway, {len(serve)} by servers), {len(calls)} more by the first calls")
PY
