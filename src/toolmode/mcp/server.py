"""`McpServer`: owns one server's process (or HTTP session), restarts it after a crash, turns its tools into `Tool`s.

Lifecycle: the server starts when its tools are first listed or called. `close()` stops the process; a
later call starts it again, so a tool list can outlive one agent. An `atexit` hook stops whatever is
still running. After a crash the failing call raises `McpConnectionError`; the next call restarts the
server (at most `max_restarts` times, then calls fail with `McpConnectionError` naming the server).
A timed-out call is cancelled and raises `McpTimeoutError`; the server keeps running.
"""

from __future__ import annotations

import concurrent.futures
import os
import tempfile
import threading
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import anyio
import mcp_types
from mcp import MCPError

from toolmode.mcp import launch
from toolmode.mcp.config import ServerSpec, Spec, parse_spec
from toolmode.mcp.connection import Connection, marked_pids
from toolmode.mcp.convert import clean_schema, output_schema, python_name, result_value, type_text
from toolmode.mcp.errors import McpConnectionError, McpStartError, McpTimeoutError, McpToolError
from toolmode.tools.base import Tool

DEFER_THRESHOLD = 10
"""`defer=None` marks a server's tools deferred (found through tool search) when it has more than this many."""

_STDERR_TAIL = 1500


class McpServer:
    """One MCP server: `tools()` lists its tools as `Tool`s, `call()` calls one, `close()` stops it."""

    def __init__(
        self,
        spec: Spec | ServerSpec | Any,
        *,
        name: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        start_timeout: float = 60.0,
        max_restarts: int = 3,
        workspace: str | os.PathLike[str] | None = ".",
        allow_env_in_workspace: bool = False,
    ) -> None:
        self.spec = spec if isinstance(spec, ServerSpec) else parse_spec(spec, name=name, env=env)
        self.workspace = workspace  # a stdio server never starts from it (see `launch`)
        self.allow_env_in_workspace = allow_env_in_workspace
        self.name = self.spec.name
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.max_restarts = max_restarts
        self.restarts = 0
        self._marker = f"{self.name}-{uuid.uuid4().hex}"
        self._stderr: IO[bytes] | None = None
        if self.spec.command:
            self._stderr = tempfile.TemporaryFile("w+b")  # noqa: SIM115 - lives as long as the server
        self._conn: Connection | None = None
        self._mcp_tools: list[mcp_types.Tool] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"McpServer({self.name!r}, {self.spec.describe()!r}, running={self.running})"

    def __enter__(self) -> McpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def running(self) -> bool:
        """Whether a session is open and, as far as is known, usable."""
        conn = self._conn
        return conn is not None and conn.alive

    @property
    def pid(self) -> int | None:
        """The server process id (stdio servers on Linux, while running), else None."""
        conn = self._conn
        return conn.pid if conn is not None and conn.alive else None

    def process_ids(self) -> list[int]:
        """Every live process started for this server, children included (Linux; empty elsewhere)."""
        return marked_pids(self._marker) if self.spec.command else []

    def stderr_tail(self, limit: int = _STDERR_TAIL) -> str:
        """The end of what the server wrote to stderr (captured, never shown on the console)."""
        if self._stderr is None or self._stderr.closed:
            return ""
        # pread, not seek + read: the server writes through the same file offset.
        fd = self._stderr.fileno()
        size = os.fstat(fd).st_size
        data = os.pread(fd, limit * 4, max(0, size - limit * 4))
        return data.decode("utf-8", "replace")[-limit:].strip()

    def start(self) -> None:
        """Start the server and list its tools, if it is not running. Raises `McpStartError`."""
        self._connection()

    def list_tools(self) -> list[mcp_types.Tool]:
        """The server's tool definitions as MCP gives them (listed once, at the first start)."""
        if self._mcp_tools is None:
            self.start()
        return list(self._mcp_tools or [])

    def tools(self, *, defer: bool | None = None, prefix: bool = False) -> list[Tool]:
        """The server's tools as `Tool`s; names are made valid Python identifiers, `prefix` adds `<server>__`.

        `defer=None` defers them when there are more than `DEFER_THRESHOLD`.
        """
        listed = self.list_tools()
        deferred = len(listed) > DEFER_THRESHOLD if defer is None else defer
        used: set[str] = set()
        result = []
        for mcp_tool in listed:
            name = python_name(mcp_tool.name)
            if prefix:
                name = f"{self.name}__{name}"
            base, n = name, 2
            while name in used:  # two server names that map to the same identifier
                name, n = f"{base}_{n}", n + 1
            used.add(name)
            result.append(self._tool(mcp_tool, name, deferred))
        return result

    def _tool(self, mcp_tool: mcp_types.Tool, name: str, deferred: bool) -> Tool:
        schema, wrapped = output_schema(mcp_tool.output_schema)
        return Tool(
            name=name,
            description=(mcp_tool.description or mcp_tool.title or "").strip(),
            parameters=clean_schema(mcp_tool.input_schema),
            fn=McpToolFunction(self, mcp_tool.name, name, structured=schema is not None, wrapped=wrapped),
            returns=type_text(schema) if schema is not None else "str",
            return_schema=schema,
            deferred=deferred,
            source=f"mcp:{self.name}",
        )

    def call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        label: str | None = None,
    ) -> mcp_types.CallToolResult:
        """Call a tool by its MCP name and return the raw result (errors in it are not raised here).

        Raises `McpTimeoutError`, `McpConnectionError`, `McpStartError`, or `McpToolError` when the
        server rejects the request (unknown tool, invalid params).
        """
        label = label or tool
        conn = self._connection()
        limit = self.timeout if timeout is None else timeout
        try:
            return conn.call(tool, dict(arguments), limit)
        except TimeoutError:
            raise McpTimeoutError(
                f"MCP server '{self.name}', tool '{label}': no result after {limit:g} s; the call was cancelled"
            ) from None
        except MCPError as exc:
            if exc.code != mcp_types.CONNECTION_CLOSED:
                raise McpToolError(f"MCP server '{self.name}', tool '{label}': {exc.message}") from None
            raise self._broken(conn, label, "closed the connection") from None
        except concurrent.futures.CancelledError:
            raise self._broken(conn, label, "cancelled the call") from None
        except (
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
            anyio.EndOfStream,
            OSError,
            RuntimeError,
        ) as exc:
            raise self._broken(conn, label, f"connection failed ({type(exc).__name__}: {exc})") from None

    def _broken(self, conn: Connection, label: str, what: str) -> McpConnectionError:
        if conn.closing:
            return McpConnectionError(f"MCP server '{self.name}' was closed during tool '{label}'")
        conn.broken = True
        tail = self.stderr_tail(600)
        left = self.max_restarts - self.restarts
        then = "it will be restarted on the next call" if left > 0 else "it will not be restarted again"
        return McpConnectionError(
            f"MCP server '{self.name}' {what} during tool '{label}' (it crashed or exited); {then}"
            + (f". Server stderr: {tail}" if tail else "")
        )

    def close(self) -> None:
        """Stop the server process (or HTTP session). Idempotent; a later call starts it again."""
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def _connection(self) -> Connection:
        with self._lock:
            conn = self._conn
            if conn is not None and conn.alive:
                return conn
            if conn is not None:  # it died on its own (crash, exit, lost HTTP session)
                self._conn = None
                conn.close()
                if self.restarts >= self.max_restarts:
                    raise McpConnectionError(
                        f"MCP server '{self.name}' ({self.spec.describe()}) stopped and was already restarted "
                        f"{self.restarts} time(s); giving up"
                    )
                self.restarts += 1
            self._conn = self._open()
            return self._conn

    def _open(self) -> Connection:
        plan = None
        if self.spec.command:
            try:
                plan = launch.plan(self.spec, self.workspace, allow_workspace=self.allow_env_in_workspace)
            except launch.LaunchRefused as exc:
                raise McpStartError(f"MCP server '{self.name}' ({self.spec.describe()}) {exc}") from None
        conn = Connection(self.spec, stderr=self._stderr, marker=self._marker, launch=plan)
        if not conn.open(self.start_timeout):
            conn.close()
            raise McpStartError(self._start_message(conn))
        if self._mcp_tools is None:
            self._mcp_tools = conn.tools
        return conn

    def _start_message(self, conn: Connection) -> str:
        reason = _start_reason(conn.error, self.spec, self.start_timeout)
        tail = self.stderr_tail()
        verb = "connect" if self.spec.url else "start"
        return f"MCP server '{self.name}' ({self.spec.describe()}) failed to {verb}: {reason}" + (
            f"\n--- server stderr (end) ---\n{tail}" if tail else ""
        )


class McpToolFunction:
    """The `fn` of an MCP `Tool`: a sync callable taking the tool's arguments as keywords."""

    def __init__(
        self, server: McpServer, mcp_name: str, name: str, *, structured: bool, wrapped: bool
    ) -> None:
        self.server = server
        self.mcp_name = mcp_name
        self.__name__ = name
        self._structured = structured
        self._wrapped = wrapped

    def __repr__(self) -> str:
        return f"<MCP tool {self.mcp_name!r} of server {self.server.name!r}>"

    def __call__(self, **arguments: Any) -> Any:
        """Call the tool; structured content comes back as data, other content as text.

        An error result raises `McpToolError` with the server's message.
        """
        result = self.server.call(self.mcp_name, arguments, label=self.__name__)
        if result.is_error:
            text = result_value(result, structured=False, wrapped=False) or "(no message)"
            raise McpToolError(f"MCP server '{self.server.name}', tool '{self.__name__}': {text}")
        return result_value(result, structured=self._structured, wrapped=self._wrapped)

    def close(self) -> None:
        """Stop the tool's server (it starts again on the next call)."""
        self.server.close()


def _start_reason(error: BaseException | None, spec: ServerSpec, timeout: float) -> str:
    if error is None:
        return f"no MCP handshake within {timeout:g} s"
    leaf = _first_leaf(error)
    if isinstance(leaf, FileNotFoundError) and spec.command:
        hint = {"uvx": " (it comes with uv: pip install uv)", "npx": " (it comes with Node.js)"}.get(
            Path(spec.command).name, ""
        )
        return f"command not found: {spec.command}{hint}"
    if isinstance(leaf, MCPError) and leaf.code == mcp_types.CONNECTION_CLOSED:
        return "the process exited before the MCP handshake completed"
    return f"{type(leaf).__name__}: {leaf}"


def _first_leaf(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error
