"""A small MCP server for toolmode's MCP tests, built on the official SDK.

Run over stdio (default) or streamable HTTP (`--http PORT`). Tools: echo, add (with an output
schema), fail (an isError result), crash (the process exits), hang (never answers), slow, pid,
image, header (an HTTP request header), plus `--extra N` filler tools.

Other flags: `--name` (server name), `--fail-start MSG` (print MSG to stderr and exit 2 before
the handshake), `--linger` (after stdin closes, ignore SIGTERM and keep running, so only SIGKILL
stops it).
"""

from __future__ import annotations

import argparse
import base64
import os
import signal
import sys
import time
from typing import TypedDict

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

# A 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


class Sum(TypedDict):
    """The result of add."""

    sum: int
    inputs: list[int]


def build(name: str, extra: int) -> MCPServer:
    """Create the server with its tools."""
    server = MCPServer(name, log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def add(a: int, b: int) -> Sum:
        """Add two integers."""
        return {"sum": a + b, "inputs": [a, b]}

    @server.tool()
    def fail(message: str = "it failed") -> str:
        """Always fail with the given message."""
        raise ToolError(message)

    @server.tool()
    def crash() -> str:
        """Exit the server process at once."""
        print("test server: crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)

    @server.tool()
    async def hang() -> str:
        """Never return."""
        await anyio.sleep_forever()
        return "unreachable"

    @server.tool()
    async def slow(seconds: float = 0.2) -> str:
        """Sleep, then answer."""
        print(f"test server: slow call sleeping {seconds} s", file=sys.stderr, flush=True)
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.tool(structured_output=False)
    def image() -> list[object]:
        """A caption and a tiny PNG."""
        return ["a tiny image", Image(data=PNG, format="png")]

    @server.tool()
    def header(name: str, ctx: Context) -> str:
        """The value of an HTTP request header ('' when absent or not over HTTP)."""
        return (ctx.headers or {}).get(name.lower(), "")

    for i in range(extra):
        server.add_tool(_filler(i), name=f"extra_{i}", description=f"Filler tool number {i}.")
    return server


def _filler(i: int):  # noqa: ANN202 - a generated function
    def fn(x: int = 0) -> str:
        return f"extra {i}: {x}"

    return fn


def main() -> None:
    """Parse the flags and run the server."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="test")
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    parser.add_argument("--extra", type=int, default=0)
    parser.add_argument("--fail-start", default=None, metavar="MSG")
    parser.add_argument("--linger", action="store_true")
    args = parser.parse_args()
    print(f"test server {args.name} starting", file=sys.stderr, flush=True)
    if args.fail_start:
        print(args.fail_start, file=sys.stderr, flush=True)
        sys.exit(2)
    server = build(args.name, args.extra)
    if args.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()
    if args.linger:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("test server: lingering after stdin closed", file=sys.stderr, flush=True)
        while True:
            time.sleep(60)


if __name__ == "__main__":
    main()
