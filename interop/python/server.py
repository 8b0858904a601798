"""Interop server: an MCP server written with the official Python SDK, for the mcpkit client to talk to.

Usage: server.py stdio [--legacy] [--started-file FILE]
       server.py http [--port P] [--legacy] [--started-file FILE]

Built with the SDK's high-level `MCPServer` (mcp 2.3.0). It offers:

  tools      add(a: int, b: int) -> int   structured output: {"result": a + b}, plus the text "5"
             echo(text: str) -> str        the text back, unchanged
             slow(seconds: float) -> str   sleeps, then answers "slept"; with --started-file FILE
                                           it first creates FILE (the tests wait for it before
                                           killing the server mid-call)
             stats(values: list[float])    a pydantic model: structured output with an outputSchema
  resources  interop://static/greeting     the text GREETING below
  templates  interop://items/{item_id}     "item <item_id>"
  prompts    greet(name: str)              one user message, "Please greet <name> warmly."

Eras. Out of the box the SDK serves both eras on both transports, and the client's first request
decides which one a connection gets:
  * stdio: `Server.run` drives `serve_dual_era_loop`: a first request carrying the 2026-07-28
    `_meta` envelope (e.g. `server/discover`) opens a modern connection, anything else (notably
    `initialize`) a legacy one;
  * Streamable HTTP: the session manager routes every POST by its `MCP-Protocol-Version` header:
    absent or a handshake version (2025-11-25 and earlier) goes to the legacy, session-based
    transport; any other value to the single-exchange 2026-07-28 entry.

The SDK has no public switch for a legacy-only server; `--legacy` builds one from its parts:
  * stdio: the connection is driven with `mcp.server.runner.serve_loop` (the handshake-only loop
    the SDK's own HTTP sessions use) instead of `serve_dual_era_loop`. A `server/discover` before
    `initialize` is then answered with -32601 "Method not found".
  * HTTP: an ASGI wrapper removes an `MCP-Protocol-Version` header that names no handshake version
    before the SDK sees the request, so every request takes the SDK's legacy path; a sessionless
    probe is then answered `400 Bad Request: Missing session ID`, as the 2025-era SDKs answer it.

The HTTP server binds 127.0.0.1 (port 0 by default: the kernel picks one) and serves the MCP
endpoint at /mcp. Once it accepts connections it prints one line on stderr:
  server.py: listening on http://127.0.0.1:PORT/mcp (both eras)      [or "(legacy only)"]
The stdio server prints `server.py: serving stdio (...)` on stderr before it reads its stdin.
Everything else the SDK logs goes to stderr too.
"""

from __future__ import annotations

import argparse
import socket
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

NAME = "mcpkit-interop-python-server"
VERSION = "1.0.0"
GREETING = "Hello from the Python SDK interop server."

server = MCPServer(NAME, version=VERSION, instructions="The mcpkit interop fixture server.", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Returns the text unchanged."""
    return text


# Set from --started-file: created when `slow` starts.
started_file: str | None = None


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps for the given number of seconds, then answers "slept"."""
    if started_file is not None:
        with open(started_file, "w", encoding="utf-8") as out:
            out.write("started\n")
    log(f"slow: sleeping {seconds} s")
    await anyio.sleep(seconds)
    return "slept"


class Stats(BaseModel):
    count: int
    total: float
    mean: float


@server.tool()
def stats(values: list[float]) -> Stats:
    """Count, total and mean of a list of numbers (structured output)."""
    total = sum(values)
    return Stats(count=len(values), total=total, mean=total / len(values) if values else 0.0)


@server.resource("interop://static/greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    return GREETING


@server.resource("interop://items/{item_id}", name="item", mime_type="text/plain")
def item(item_id: str) -> str:
    return f"item {item_id}"


@server.prompt()
def greet(name: str) -> str:
    """Asks for a greeting."""
    return f"Please greet {name} warmly."


def log(message: str) -> None:
    print(f"server.py: {message}", file=sys.stderr, flush=True)


# --- stdio ---------------------------------------------------------------------------------------


async def run_stdio_legacy() -> None:
    """The stdio connection driven by the handshake-only loop (no 2026-07-28 era)."""
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    # No public accessor: MCPServer keeps its low-level Server (the registry) private.
    lowlevel = server._lowlevel_server  # noqa: SLF001
    async with stdio_server() as (read_stream, write_stream):
        async with lowlevel.lifespan(lowlevel) as state:
            await serve_loop(
                lowlevel,
                read_stream,
                write_stream,
                lifespan_state=state,
                init_options=lowlevel.create_initialization_options(),
            )


def run_stdio(legacy: bool) -> None:
    log(f"serving stdio ({'legacy only' if legacy else 'both eras'})")
    if legacy:
        anyio.run(run_stdio_legacy)
    else:
        server.run("stdio")


# --- Streamable HTTP -----------------------------------------------------------------------------


def legacy_only(app: Any) -> Any:
    """ASGI wrapper: drops an `MCP-Protocol-Version` header that names no handshake version."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    header = b"mcp-protocol-version"
    known = {v.encode("latin-1") for v in HANDSHAKE_PROTOCOL_VERSIONS}

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            headers = scope.get("headers") or []
            kept = [(k, v) for k, v in headers if k.lower() != header or v in known]
            if len(kept) != len(headers):
                scope = {**scope, "headers": kept}
        await app(scope, receive, send)

    return wrapped


async def run_http(port: int, legacy: bool) -> None:
    import uvicorn

    app: Any = server.streamable_http_app(host="127.0.0.1")
    if legacy:
        app = legacy_only(app)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    actual = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    http_server = uvicorn.Server(config)

    async def announce() -> None:
        while not http_server.started:
            if http_server.should_exit:
                return
            await anyio.sleep(0.02)
        era = "legacy only" if legacy else "both eras"
        log(f"listening on http://127.0.0.1:{actual}/mcp ({era})")

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await http_server.serve(sockets=[sock])
        tg.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=0, help="HTTP port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--legacy", action="store_true", help="serve only the 2025 handshake era")
    parser.add_argument("--started-file", default=None, help="created when the slow tool starts")
    args = parser.parse_args()
    global started_file
    started_file = args.started_file
    if args.transport == "stdio":
        run_stdio(args.legacy)
    else:
        anyio.run(run_http, args.port, args.legacy)


if __name__ == "__main__":
    main()
