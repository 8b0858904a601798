# What scripts/bench-observability.sh and scripts/bench-observability-paired.sh share: the
# binaries they run (checked by scripts/lib/processes.sh), a free port (scripts/lib/net.sh), and
# the trace sink. Sourced from the repository root with `work` (a temporary folder) set.
#
# Sets MCPKIT, MCP_LOAD and SINK (default target/release/{mcpkit,mcp-load,mcp-otlp-sink}) and
# exits with 2 when one is not built.

MCPKIT=${MCPKIT:-target/release/mcpkit}
MCP_LOAD=${MCP_LOAD:-target/release/mcp-load}
SINK=${SINK:-target/release/mcp-otlp-sink}
source scripts/lib/processes.sh
require_built "$MCPKIT" "$MCP_LOAD" "$SINK"

source scripts/lib/net.sh

# start_sink [PIN...]: starts mcp-otlp-sink (the bench crate), which takes every export on a
# kept-alive connection and answers 200, as a collector does, without decoding it; run under
# PIN (e.g. `taskset -c 0`) when given. Sets sink_pid and sink_port.
start_sink() {
  "$@" "$SINK" --listen 127.0.0.1:0 >"$work/sink" &
  sink_pid=$!
  sink_port=
  for _ in $(seq 1 100); do
    sink_port=$(sed -n 's/^listening .*:\([0-9]*\)$/\1/p' "$work/sink")
    [ -n "$sink_port" ] && return 0
    sleep 0.05
  done
  echo "error: $SINK did not start" >&2
  exit 1
}
