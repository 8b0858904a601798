#!/usr/bin/env bash
# The conformance fixtures behind `mcpkit gateway`: what scripts/conformance.sh runs as its server
# (`CONFORMANCE_SERVER=scripts/conformance/gateway-server.sh`), so that the suite's server leg
# checks the gateway — tools, resources, prompts, errors, progress, logging, elicitation and
# sampling — with the fixtures one hop away.
#
# Usage: gateway-server.sh --http ADDR
#   MCPKIT            the mcpkit binary (default: target/debug/mcpkit)
#   UPSTREAM          the conformance-server binary (default: target/debug/conformance-server)
#   GATEWAY_UPSTREAM  how the gateway reaches it: stdio (default; the gateway starts it), http
#                     (Streamable HTTP, the era detected), http-legacy (pinned to 2025-11-25) or
#                     sse (the deprecated HTTP+SSE transport) — started here on a free port,
#                     stopped with the gateway
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ "${1:-}" = --http ] && [ -n "${2:-}" ] || { echo "usage: $0 --http ADDR" >&2; exit 2; }
mcpkit=${MCPKIT:-$root/target/debug/mcpkit}
upstream=${UPSTREAM:-$root/target/debug/conformance-server}
mkdir -p "$root/.cache/conformance"
config="$root/.cache/conformance/gateway-$$.toml"
upstream_pid=""
gateway=""
cleanup() {
  local pid
  for pid in $gateway $upstream_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -f "$config"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
case "${GATEWAY_UPSTREAM:-stdio}" in
  stdio)
    printf '[servers.conformance]\ncommand = "%s"\nargs = ["--stdio"]\n' "$upstream" >"$config"
    ;;
  http | http-legacy | sse)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$upstream" --http "127.0.0.1:$port" &
    upstream_pid=$!
    for _ in $(seq 1 100); do
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      sleep 0.1
    done
    case "$GATEWAY_UPSTREAM" in
      http) printf '[servers.conformance]\nurl = "http://127.0.0.1:%s/mcp"\n' "$port" >"$config" ;;
      http-legacy)
        printf '[servers.conformance]\nurl = "http://127.0.0.1:%s/mcp"\nprotocol_version = "2025-11-25"\n' "$port" >"$config" ;;
      sse) printf '[servers.conformance]\nurl = "http://127.0.0.1:%s/sse"\ntype = "sse"\n' "$port" >"$config" ;;
    esac
    ;;
  *) echo "GATEWAY_UPSTREAM: stdio, http, http-legacy or sse" >&2; exit 2 ;;
esac
# No metrics listener: a test listens on the ports it picks only (the default is 127.0.0.1:9464).
MCPKIT_METRICS=off "$mcpkit" gateway --config "$config" --http "$2" &
gateway=$!
wait "$gateway"
