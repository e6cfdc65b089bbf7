"""One live session with one MCP server: a dedicated thread runs an event loop holding an `mcp.Client`.

Tools are called from synchronous code on any thread (the agent loop, its worker threads, the code-mode
bridge), so the async client lives on its own loop and calls are submitted with
`asyncio.run_coroutine_threadsafe`. Closing cancels an anyio cancel scope around the client (not the
task), so the SDK's shielded stdio shutdown runs to the end: close stdin, wait, SIGTERM the process
group, SIGKILL.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import threading
from contextlib import AsyncExitStack
from pathlib import Path
from typing import IO, Any

import anyio
import httpx2
import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from toolmode.mcp.config import ServerSpec
from toolmode.mcp.launch import LaunchPlan

MARKER_ENV = "TOOLMODE_MCP_ID"  # set in each stdio server's environment to find its processes
_CLIENT_INFO = mcp_types.Implementation(name="toolmode", version="0.1.0")
_MAX_PAGES = 100
# Strong references: a connection must be closed at exit even if its server and tools were dropped.
_OPEN: set[Connection] = set()
_OPEN_LOCK = threading.Lock()


class Connection:
    """A background thread with an event loop and a connected `mcp.Client`; `open()` blocks until ready."""

    def __init__(self, spec: ServerSpec, *, stderr: IO[Any] | None, marker: str, launch: LaunchPlan | None = None) -> None:
        self.spec = spec
        self._launch = launch  # where and with what environment a stdio server starts (see `launch.plan`)
        self.marker = marker
        self.tools: list[mcp_types.Tool] = []
        self.error: BaseException | None = None
        self.broken = False
        self.pid: int | None = None
        self._stderr = stderr
        self._client: Client | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._scope: anyio.CancelScope | None = None
        self._closing = False
        self._lock = threading.Lock()
        self._opened = threading.Event()
        self._thread = threading.Thread(target=self._thread_main, name=f"mcp-{spec.name}", daemon=True)

    def open(self, timeout: float) -> bool:
        """Start the thread, connect, list the tools. False if not ready in time; `error` says why it failed."""
        with _OPEN_LOCK:
            _OPEN.add(self)
        self._thread.start()
        ready = self._opened.wait(timeout)
        if self.spec.command and self._client is not None:
            self.pid = _root_pid(self.marker)
        return ready and self._client is not None and self.error is None

    @property
    def closing(self) -> bool:
        """True once `close()` was called."""
        return self._closing

    @property
    def alive(self) -> bool:
        """True while the session is usable as far as we know (thread running, process present)."""
        if self.broken or self._closing or self._client is None or not self._thread.is_alive():
            return False
        return self.pid is None or _has_marker(self.pid, self.marker)

    def call(self, name: str, arguments: dict[str, Any], timeout: float) -> mcp_types.CallToolResult:
        """Call a tool and wait. Raises `TimeoutError` (the call is cancelled) or the client's exception."""
        loop, client = self._loop, self._client
        if loop is None or client is None:
            raise RuntimeError("not connected")
        future = asyncio.run_coroutine_threadsafe(client.call_tool(name, arguments), loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            if future.done():
                raise
            future.cancel()
            raise TimeoutError(f"no result after {timeout:g} s") from None

    def close(self, timeout: float = 15.0) -> None:
        """Stop the session and its process; waits for the SDK's bounded shutdown (at most ~7 s)."""
        with _OPEN_LOCK:
            _OPEN.discard(self)
        with self._lock:
            self._closing = True
            loop, scope = self._loop, self._scope
        if loop is not None and scope is not None:
            with contextlib.suppress(RuntimeError):  # the loop already finished
                loop.call_soon_threadsafe(scope.cancel)
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _thread_main(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        try:
            with anyio.CancelScope() as scope:
                with self._lock:
                    self._loop, self._scope = asyncio.get_running_loop(), scope
                    if self._closing:
                        scope.cancel()
                async with AsyncExitStack() as stack:
                    transport = await self._transport(stack)
                    client = await stack.enter_async_context(Client(transport, client_info=_CLIENT_INFO))
                    self.tools = await _list_tools(client)
                    self._client = client
                    self._opened.set()
                    await anyio.sleep_forever()
        except BaseException as exc:  # noqa: BLE001 - recorded for the caller; this thread has no one to raise to
            self.error = exc
        finally:
            self._opened.set()

    async def _transport(self, stack: AsyncExitStack) -> Any:
        spec = self.spec
        if spec.url:
            http = httpx2.AsyncClient(headers=dict(spec.headers), timeout=httpx2.Timeout(30.0, read=300.0))
            await stack.enter_async_context(http)
            return streamable_http_client(spec.url, http_client=http)
        launch = self._launch or LaunchPlan(cwd=spec.cwd or os.getcwd())
        params = StdioServerParameters(
            command=spec.command or "",
            args=list(spec.args),
            env={**launch.env, **spec.env, MARKER_ENV: self.marker},  # the spec's own env may set them back
            cwd=launch.cwd,
        )
        if self._stderr is None:
            return stdio_client(params)
        return stdio_client(params, errlog=self._stderr)  # type: ignore[arg-type]  # a text file


def close_all() -> None:
    """Stop every MCP server of this process that is still running (also run at exit)."""
    with _OPEN_LOCK:
        conns = list(_OPEN)
    for conn in conns:
        conn.close()


atexit.register(close_all)


async def _list_tools(client: Client) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def marked_pids(marker: str) -> list[int]:
    """Live processes whose environment carries `TOOLMODE_MCP_ID=marker` (a server and its children). Linux only."""
    needle = f"{MARKER_ENV}={marker}".encode()
    pids = []
    for entry in Path("/proc").iterdir() if Path("/proc/self").exists() else ():
        if entry.name.isdigit() and _environ_has(entry / "environ", needle):
            pids.append(int(entry.name))
    return pids


def _root_pid(marker: str) -> int | None:
    """The server process itself: the marked process that is our own child."""
    for pid in marked_pids(marker):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
            return pid
    return None


def _has_marker(pid: int, marker: str) -> bool:
    return _environ_has(Path(f"/proc/{pid}/environ"), f"{MARKER_ENV}={marker}".encode())


def _environ_has(path: Path, needle: bytes) -> bool:
    try:
        return needle in path.read_bytes().split(b"\0")
    except OSError:  # gone, a zombie, or another user's process
        return False
