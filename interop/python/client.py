"""Interop client: the official Python MCP SDK against an MCP server, over stdio or Streamable HTTP.

Usage: client.py MODE [--] SERVER_COMMAND [ARGS...]
       client.py MODE --url URL

With --url the SDK connects to an already running server's Streamable HTTP endpoint (e.g.
http://127.0.0.1:PORT/mcp) with its streamable_http_client instead of launching a command.

MODE selects how the SDK's `Client` picks the protocol:
  modern  pinned to 2026-07-28 (per-request `_meta` envelope, no handshake)
  legacy  the initialize handshake (the SDK offers 2025-11-25)
  auto    the SDK's era detection: probe `server/discover`, fall back to initialize

The client launches SERVER_COMMAND with the SDK's stdio transport, then lists tools, calls tools,
reads a resource, gets prompts and completes an elicitation round trip (MRTR `input_required` for
modern/auto, a server-to-client `elicitation/create` during the call for legacy), all through the
SDK's public client API. Each check prints one JSON line on stdout, e.g.
  {"check": "list_tools", "ok": true, ...}
and the exit status is 0 only when every check passed. The server's stderr and the client's own
diagnostics go to stderr. Environment variables named RUST_* or MCPKIT_* are passed on to the
server (the SDK otherwise hands a child only a minimal environment).

The fixtures expected are those of the conformance server (docs/CONFORMANCE.md section 4).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
STEP_TIMEOUT_S = 20
SESSION_TIMEOUT_S = 50

SIMPLE_TEXT = "This is a simple text response for testing."
STATIC_TEXT_URI = "test://static-text"
STATIC_TEXT = "This is the content of the static text resource."
SIMPLE_PROMPT = "This is a simple prompt for testing."
PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


class CheckFailed(Exception):
    """A check's expectation did not hold (as opposed to an SDK or transport error)."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def emit(record: dict[str, Any]) -> None:
    print(json.dumps(record, default=str), flush=True)


def dump(value: Any) -> Any:
    """A pydantic model (or anything else) as plain JSON-able data, for messages."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


def texts(content: list[Any]) -> list[str]:
    return [block.text for block in content if isinstance(block, types.TextContent)]


class Elicitations:
    """The SDK's elicitation callback: records each request and answers from a canned reply."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.reply: dict[str, Any] = {}

    async def __call__(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        record = dump(params)
        self.seen.append(record)
        print(f"client.py: elicitation request: {json.dumps(record)}", file=sys.stderr, flush=True)
        return types.ElicitResult(action="accept", content=dict(self.reply))


class Checks:
    """Runs named checks, printing one JSON line each and remembering whether all passed."""

    def __init__(self) -> None:
        self.all_ok = True

    def record(self, name: str, ok: bool, **details: Any) -> None:
        self.all_ok &= ok
        emit({"check": name, "ok": ok, **details})

    async def run(self, name: str, body: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        try:
            with anyio.fail_after(STEP_TIMEOUT_S):
                details = await body()
        except Exception as exc:  # noqa: BLE001 - every failure becomes a reported check
            print(f"client.py: check {name} failed:", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            self.record(name, False, error=f"{type(exc).__name__}: {exc}")
        else:
            self.record(name, True, **details)


async def run(mode: str, command: list[str], url: str | None = None) -> bool:
    server: StdioServerParameters | str
    if url is not None:
        # A URL string: the SDK's Streamable HTTP client.
        server = url
    else:
        env = {k: v for k, v in os.environ.items() if k.startswith(("RUST_", "MCPKIT_"))}
        server = StdioServerParameters(command=command[0], args=command[1:], env=env)
    elicitations = Elicitations()
    checks = Checks()
    client = Client(
        server,
        mode=MODERN if mode == "modern" else mode,
        client_info=types.Implementation(name="mcpkit-interop-python", version="1.0.0"),
        elicitation_callback=elicitations,
        read_timeout_seconds=STEP_TIMEOUT_S,
    )
    # One overall bound: the SDK's task groups must nest inside a single cancel scope, so
    # connecting gets no scope of its own (read_timeout_seconds bounds each request too).
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with client:
            expected_version = LEGACY if mode == "legacy" else MODERN
            checks.record(
                "connect",
                client.protocol_version == expected_version,
                mode=mode,
                protocol_version=client.protocol_version,
                expected_version=expected_version,
                server_info=dump(client.server_info),
            )
            await run_checks(client, mode, elicitations, checks)
    return checks.all_ok


async def run_checks(client: Client, mode: str, elicitations: Elicitations, checks: Checks) -> None:
    check = checks.run

    async def list_tools() -> dict[str, Any]:
        result = await client.list_tools()
        names = [tool.name for tool in result.tools]
        wanted = ["test_simple_text", "test_image_content"]
        wanted.append("test_elicitation" if mode == "legacy" else "test_input_required_result_elicitation")
        missing = [name for name in wanted if name not in names]
        expect(not missing, f"tools/list lacks {missing}; got {names}")
        return {"count": len(names)}

    async def call_simple_text() -> dict[str, Any]:
        result = await client.call_tool("test_simple_text")
        expect(not result.is_error, f"isError result: {dump(result)}")
        expect(texts(result.content) == [SIMPLE_TEXT], f"unexpected content: {dump(result.content)}")
        return {"text": SIMPLE_TEXT}

    async def call_image() -> dict[str, Any]:
        result = await client.call_tool("test_image_content")
        images = [block for block in result.content if isinstance(block, types.ImageContent)]
        expect(len(images) == 1, f"expected one image block: {dump(result.content)}")
        expect(images[0].mime_type == "image/png", f"mimeType {images[0].mime_type!r}")
        expect(images[0].data == PNG_1X1, "image data is not the fixture PNG")
        return {"mime_type": images[0].mime_type}

    async def read_resource() -> dict[str, Any]:
        result = await client.read_resource(STATIC_TEXT_URI)
        expect(len(result.contents) == 1, f"expected one content: {dump(result)}")
        content = result.contents[0]
        expect(isinstance(content, types.TextResourceContents), f"not text contents: {dump(content)}")
        expect(str(content.uri) == STATIC_TEXT_URI, f"uri {content.uri!r}")
        expect(content.text == STATIC_TEXT, f"text {content.text!r}")
        return {"uri": STATIC_TEXT_URI, "mime_type": content.mime_type}

    async def get_simple_prompt() -> dict[str, Any]:
        result = await client.get_prompt("test_simple_prompt")
        got = [(m.role, m.content.text if isinstance(m.content, types.TextContent) else None) for m in result.messages]
        expect(got == [("user", SIMPLE_PROMPT)], f"unexpected messages: {dump(result)}")
        return {"messages": len(result.messages)}

    async def get_prompt_with_arguments() -> dict[str, Any]:
        result = await client.get_prompt("test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"})
        joined = " ".join(m.content.text for m in result.messages if isinstance(m.content, types.TextContent))
        expect("testValue1" in joined and "testValue2" in joined, f"arguments not in prompt: {dump(result)}")
        return {"messages": len(result.messages)}

    async def elicitation_input_required() -> dict[str, Any]:
        # MRTR: the tool answers `input_required`; the SDK fulfils the embedded
        # elicitation/create through the elicitation callback and retries the call.
        elicitations.seen.clear()
        elicitations.reply = {"name": "Alice"}
        result = await client.call_tool("test_input_required_result_elicitation")
        expect(len(elicitations.seen) == 1, f"elicitation callback ran {len(elicitations.seen)} times")
        request = elicitations.seen[0]
        expect(request.get("message") == "What is your name?", f"elicitation message {request.get('message')!r}")
        schema = request.get("requestedSchema") or {}
        expect("name" in (schema.get("properties") or {}), f"requestedSchema lacks name: {schema}")
        expect(not result.is_error, f"isError result: {dump(result)}")
        expect(texts(result.content) == ["Hello, Alice!"], f"unexpected content: {dump(result.content)}")
        return {"text": "Hello, Alice!"}

    async def elicitation_server_request() -> dict[str, Any]:
        # 2025-11-25: the server sends elicitation/create while tools/call is in flight.
        elicitations.seen.clear()
        elicitations.reply = {"username": "alice", "email": "alice@example.com"}
        result = await client.call_tool("test_elicitation", {"message": "Please provide your details"})
        expect(len(elicitations.seen) == 1, f"elicitation callback ran {len(elicitations.seen)} times")
        request = elicitations.seen[0]
        expect(request.get("message") == "Please provide your details", f"message {request.get('message')!r}")
        properties = (request.get("requestedSchema") or {}).get("properties") or {}
        expect({"username", "email"} <= set(properties), f"requestedSchema properties {list(properties)}")
        expect(not result.is_error, f"isError result: {dump(result)}")
        text = " ".join(texts(result.content))
        expect(text.startswith("User response: action=accept"), f"unexpected text {text!r}")
        expect("alice@example.com" in text, f"content not echoed: {text!r}")
        return {"text": text}

    await check("list_tools", list_tools)
    await check("call_tool", call_simple_text)
    await check("call_tool_image", call_image)
    await check("read_resource", read_resource)
    await check("get_prompt", get_simple_prompt)
    await check("get_prompt_with_arguments", get_prompt_with_arguments)
    if mode == "legacy":
        await check("elicitation", elicitation_server_request)
    else:
        await check("elicitation", elicitation_input_required)


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("modern", "legacy", "auto"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, command = argv[0], argv[1:]
    url: str | None = None
    if command and command[0] == "--url":
        if len(command) != 2:
            print("client.py: --url takes exactly one URL", file=sys.stderr)
            return 2
        url, command = command[1], []
    else:
        if command and command[0] == "--":
            command = command[1:]
        if not command:
            print("client.py: no server command given", file=sys.stderr)
            return 2
    try:
        ok = anyio.run(run, mode, command, url)
    except BaseException as exc:  # noqa: BLE001 - report and fail, whatever it was
        traceback.print_exc(file=sys.stderr)
        emit({"check": "session", "ok": False, "error": f"{type(exc).__name__}: {exc}"})
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
