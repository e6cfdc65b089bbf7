"""MCP tools against real servers: the project's test server (stdio and HTTP), mcp-server-time, server-everything."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from toolmode.mcp import (
    McpConnectionError,
    McpServer,
    McpStartError,
    McpTimeoutError,
    McpToolError,
    mcp_tools,
    mcp_tools_from_config,
)
from toolmode.mcp.connection import MARKER_ENV
from toolmode.tools.base import Tool, ToolArgumentError

ROOT = Path(__file__).resolve().parent.parent
TEST_SERVER = Path(__file__).resolve().parent / "mcp_servers" / "test_server.py"
EVERYTHING = ROOT / ".ci/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
TEST_TOOLS = {"echo", "add", "fail", "crash", "hang", "slow", "pid", "image", "header"}


def server_spec(*flags: str) -> dict:
    """The project's test server over stdio, with flags."""
    return {"command": sys.executable, "args": [str(TEST_SERVER), *flags]}


def processes_of(server_name: str) -> list[int]:
    """Live processes started for any McpServer named `server_name` (found by their environment marker)."""
    needle = f"{MARKER_ENV}={server_name}-".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and any(
                v.startswith(needle) for v in (entry / "environ").read_bytes().split(b"\0")
            ):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {t.name: t for t in tools}


def server_of(tool: Tool) -> McpServer:
    return tool.fn.server  # type: ignore[attr-defined, no-any-return]



@pytest.fixture(scope="module", autouse=True)
def _outside_the_checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Run from a folder of its own: the current directory is the default workspace, and this checkout (which
    holds the test venv's python) would be one from which MCP servers are refused."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("cwd"))
        yield

@pytest.fixture(scope="module")
def shared() -> Iterator[dict[str, Tool]]:
    """One test-server process for the tests that do not break it."""
    tools = mcp_tools(server_spec(), timeout=20)
    yield by_name(tools)
    server_of(tools[0]).close()


@pytest.fixture
def fresh() -> Iterator[McpServer]:
    """A test server of its own, for tests that crash, hang or close it."""
    server = McpServer(server_spec(), timeout=20)
    yield server
    server.close()
    assert server.process_ids() == []


# --- the project's test server over stdio ---


def test_listing_and_signatures(shared: dict[str, Tool]) -> None:
    assert set(shared) == TEST_TOOLS
    assert all(t.source == "mcp:test" and not t.deferred for t in shared.values())
    assert shared["add"].signature() == "add(a: int, b: int) -> {sum: int, inputs: list[int]}"
    assert shared["echo"].signature() == "echo(text: str) -> str"
    assert shared["fail"].signature() == "fail(message: str = 'it failed') -> str"
    assert shared["image"].signature() == "image() -> str"  # no output schema: text
    assert shared["add"].description == "Add two integers."
    assert shared["add"].schema()["function"]["parameters"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }


def test_structured_and_text_results(shared: dict[str, Tool]) -> None:
    assert shared["add"](a=2, b=3) == {"sum": 5, "inputs": [2, 3]}
    assert shared["echo"](text="héllo") == "héllo"  # the SDK's {"result": ...} wrapper is unwrapped
    assert shared["image"]() == "a tiny image\n[image: image/png, 68 bytes]"
    assert shared["pid"]() == server_of(shared["pid"]).pid


def test_error_result_raises_with_server_and_tool(shared: dict[str, Tool]) -> None:
    with pytest.raises(McpToolError, match=r"^MCP server 'test', tool 'fail': .*disk on fire"):
        shared["fail"](message="disk on fire")
    with pytest.raises(McpToolError, match=r"(?s)MCP server 'test', tool 'add': .*valid integer"):
        shared["add"](a="x", b=1)
    with pytest.raises(ToolArgumentError, match="missing required argument"):
        shared["add"](a=1)


def test_parallel_calls_from_threads(shared: dict[str, Tool]) -> None:
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: shared["add"](a=i, b=i), range(16)))
    assert [r["sum"] for r in results] == [2 * i for i in range(16)]


def test_server_stderr_is_captured_not_printed(capfd: pytest.CaptureFixture[str]) -> None:
    server = McpServer(server_spec("--name", "quiet"))
    try:
        server.start()
        assert "test server quiet starting" in server.stderr_tail()
    finally:
        server.close()
    assert "test server quiet starting" not in capfd.readouterr().err


def test_hang_times_out_and_the_server_keeps_working(fresh: McpServer) -> None:
    tools = by_name(fresh.tools())
    pid = fresh.pid
    fresh.timeout = 1.0
    with pytest.raises(McpTimeoutError, match=r"MCP server 'test', tool 'hang': no result after 1 s"):
        tools["hang"]()
    assert tools["echo"](text="still here") == "still here"
    assert fresh.pid == pid


def test_crash_mid_run_gives_a_clear_error_then_restarts(fresh: McpServer) -> None:
    tools = by_name(fresh.tools())
    first = tools["pid"]()
    with pytest.raises(McpConnectionError) as info:
        tools["crash"]()
    message = str(info.value)
    assert "MCP server 'test'" in message and "tool 'crash'" in message
    assert "crashing on purpose" in message  # the server's stderr, quoted
    assert "restarted on the next call" in message
    assert tools["echo"](text="back") == "back"
    assert tools["pid"]() != first
    assert fresh.restarts == 1


def test_restarts_are_limited() -> None:
    server = McpServer(server_spec(), max_restarts=0)
    try:
        tools = by_name(server.tools())
        with pytest.raises(McpConnectionError, match="will not be restarted"):
            tools["crash"]()
        with pytest.raises(McpConnectionError, match=r"MCP server 'test' .* giving up"):
            tools["echo"](text="x")
    finally:
        server.close()
    assert server.process_ids() == []


def test_close_leaves_no_process_and_a_later_call_restarts(fresh: McpServer) -> None:
    tools = by_name(fresh.tools())
    pid = fresh.pid
    assert pid is not None and fresh.process_ids() == [pid]
    fresh.close()
    assert fresh.process_ids() == [] and not fresh.running
    assert tools["echo"](text="again") == "again"
    assert fresh.pid not in (None, pid) and fresh.restarts == 0


def test_server_that_ignores_stdin_close_is_killed() -> None:
    server = McpServer(server_spec("--linger"))
    server.start()
    assert server.pid is not None
    server.close()  # stdin closed, then SIGTERM (ignored), then SIGKILL
    assert server.process_ids() == []


def test_lazy_start_stops_after_listing_and_starts_on_first_call() -> None:
    tools = by_name(mcp_tools(server_spec(), start="lazy"))
    server = server_of(tools["echo"])
    try:
        assert set(tools) == TEST_TOOLS
        assert server.process_ids() == []
        assert tools["echo"](text="woke") == "woke"
        assert server.pid is not None
    finally:
        server.close()


def test_start_failure_names_the_server_and_quotes_stderr() -> None:
    with pytest.raises(McpStartError) as info:
        mcp_tools(server_spec("--fail-start", "boom: bad config"), name="broken")
    message = str(info.value)
    assert message.startswith(f"MCP server 'broken' ({sys.executable} {TEST_SERVER} --fail-start")
    assert "failed to start: the process exited before the MCP handshake completed" in message
    assert "boom: bad config" in message


def test_missing_command() -> None:
    with pytest.raises(
        McpStartError,
        match=r"MCP server 'nope' \(no-such-mcp-command --x\) failed to start: command not found",
    ):
        mcp_tools("no-such-mcp-command --x", name="nope")


def test_missing_uvx_says_where_it_comes_from() -> None:
    # The README's own example is `mcp_tools("uvx mcp-server-time")`; uvx is not there until uv is installed.
    with pytest.raises(McpStartError, match=r"command not found: /no/such/dir/uvx \(it comes with uv: pip install uv\)"):
        mcp_tools("/no/such/dir/uvx mcp-server-time", name="time")


def test_server_that_never_answers_the_handshake_is_stopped() -> None:
    server = McpServer(
        {"command": sys.executable, "args": ["-c", "import time; time.sleep(600)"]}, start_timeout=1
    )
    with pytest.raises(McpStartError, match=r"failed to start: no MCP handshake within 1 s"):
        server.start()
    assert server.process_ids() == []


def test_defer_when_a_server_has_many_tools() -> None:
    tools = mcp_tools(server_spec("--extra", "2"), start="lazy")
    assert len(tools) == 11 and all(t.deferred for t in tools)
    kept = mcp_tools(server_spec("--extra", "2"), start="lazy", defer=False)
    assert not any(t.deferred for t in kept)
    assert by_name(kept)["extra_1"](x=4) == "extra 1: 4"
    server_of(kept[0]).close()


def test_config_with_colliding_names(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    config = {
        "mcpServers": {
            "alpha": server_spec("--name", "alpha"),
            "beta": server_spec("--name", "beta", "--extra", "1"),
        }
    }
    path.write_text(json.dumps(config))
    tools = by_name(mcp_tools_from_config(path))
    try:
        assert "extra_0" in tools  # unique: no prefix
        assert {"alpha__echo", "beta__echo", "alpha__add", "beta__add"} <= set(tools)
        assert "echo" not in tools
        assert tools["alpha__echo"].source == "mcp:alpha"
        assert tools["beta__add"](a=1, b=1) == {"sum": 2, "inputs": [1, 1]}
        assert tools["alpha__echo"].signature() == "alpha__echo(text: str) -> str"
        with pytest.raises(McpToolError, match=r"MCP server 'beta', tool 'beta__fail': .*nope"):
            tools["beta__fail"](message="nope")
    finally:
        for t in tools.values():
            server_of(t).close()


def test_config_start_failure_stops_the_other_servers() -> None:
    good = f"good_{uuid.uuid4().hex[:8]}"
    config = {"mcpServers": {good: server_spec(), "bad": server_spec("--fail-start", "no token")}}
    with pytest.raises(McpStartError, match=r"MCP server 'bad' .*no token"):
        mcp_tools_from_config(config)
    assert processes_of(good) == []


# --- streamable HTTP ---


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(TEST_SERVER), "--http", str(port), "--name", "web"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read().decode() if proc.stderr else ""
                    pytest.fail(f"test server did not listen on port {port}: {err}")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


def test_streamable_http(http_server: str) -> None:
    tools = by_name(mcp_tools({"url": http_server, "headers": {"X-Toolmode-Test": "yes"}}, name="web"))
    server = server_of(tools["echo"])
    try:
        assert set(tools) == TEST_TOOLS and tools["echo"].source == "mcp:web"
        assert tools["header"](name="X-Toolmode-Test") == "yes"
        assert tools["add"](a=1, b=2) == {"sum": 3, "inputs": [1, 2]}
        with pytest.raises(McpToolError, match="MCP server 'web', tool 'fail'"):
            tools["fail"]()
        with pytest.raises(McpConnectionError, match="MCP server 'web' .* during tool 'crash'"):
            tools["crash"]()  # the HTTP server process exits
        with pytest.raises(McpStartError, match=rf"MCP server 'web' \({http_server}\) failed to connect"):
            tools["echo"](text="gone")
    finally:
        server.close()


def test_unreachable_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with pytest.raises(McpStartError, match=r"MCP server 'mcp_\d+' .* failed to connect: ConnectError"):
        mcp_tools(url)


# --- mcp-server-time (PyPI) ---

needs_time = pytest.mark.skipif(
    importlib.util.find_spec("mcp_server_time") is None,
    reason="mcp-server-time is not installed: pip install mcp-server-time",
)


@needs_time
def test_mcp_server_time() -> None:
    tools = by_name(mcp_tools(f"{sys.executable} -m mcp_server_time"))
    try:
        assert set(tools) == {"get_current_time", "convert_time"}
        assert all(t.source == "mcp:time" for t in tools.values())
        sig = tools["get_current_time"].signature()
        assert (
            sig
            == "get_current_time(timezone: str) -> {timezone: str, datetime: str, day_of_week: str, is_dst: bool}"
        )
        now = tools["get_current_time"](timezone="Asia/Tokyo")
        assert now["timezone"] == "Asia/Tokyo" and now["datetime"].endswith("+09:00")
        converted = tools["convert_time"](
            source_timezone="Etc/UTC", time="12:00", target_timezone="Asia/Tokyo"
        )
        assert converted["target"]["datetime"][11:16] == "21:00"
        with pytest.raises(McpToolError, match=r"MCP server 'time', tool 'get_current_time': .*Not/AZone"):
            tools["get_current_time"](timezone="Not/AZone")
    finally:
        server_of(tools["convert_time"]).close()


# --- @modelcontextprotocol/server-everything (npm) ---


def everything_spec() -> str:
    if shutil.which("node") is None:
        pytest.skip("server-everything needs Node.js: `node` is not on PATH")
    if not EVERYTHING.exists():
        pytest.skip(
            f"server-everything is not installed ({EVERYTHING} missing): "
            "npm install --prefix .ci/node @modelcontextprotocol/server-everything"
        )
    return f"node {EVERYTHING} stdio"


def test_server_everything() -> None:
    tools = by_name(mcp_tools(everything_spec()))
    try:
        assert len(tools) > 10 and all(t.deferred for t in tools.values())  # many tools: deferred for search
        assert {"echo", "get_sum", "get_tiny_image", "get_structured_content"} <= set(tools)
        assert tools["get_sum"].signature() == "get_sum(a: float, b: float) -> str"
        assert tools["echo"](message="hi") == "Echo: hi"
        assert tools["get_sum"](a=1, b=2) == "The sum of 1 and 2 is 3."
        assert "[image: image/png," in tools["get_tiny_image"]()
        weather = tools["get_structured_content"](location="Chicago")
        assert isinstance(weather, dict) and set(weather) == {"temperature", "conditions", "humidity"}
        assert (
            tools["get_structured_content"]
            .signature()
            .endswith("-> {temperature: float, conditions: str, humidity: float}")
        )
        assert "Starting default (STDIO) server" in server_of(tools["echo"]).stderr_tail()
    finally:
        server = server_of(tools["echo"])
        server.close()
        assert server.process_ids() == []


def test_close_during_a_call(fresh: McpServer) -> None:
    slow = by_name(fresh.tools())["slow"]
    errors: list[BaseException] = []

    def call() -> None:
        try:
            slow(seconds=30)
        except BaseException as exc:  # noqa: BLE001 - inspected below
            errors.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    deadline = time.monotonic() + 60
    while (
        "slow call sleeping" not in fresh.stderr_tail() and time.monotonic() < deadline
    ):  # the call is in flight
        time.sleep(0.05)
    assert "slow call sleeping" in fresh.stderr_tail(), "the slow call never started"
    fresh.close()
    worker.join(30)
    assert not worker.is_alive()
    assert [type(e) for e in errors] == [McpConnectionError]
    assert "MCP server 'test' was closed during tool 'slow'" in str(errors[0])


ATEXIT_PROGRAM = """
import gc
import sys
import threading
from toolmode.mcp import McpServer
server = McpServer({"command": sys.executable, "args": [sys.argv[1], "--linger"]}, name=sys.argv[2])
server.start()
print(server.pid, flush=True)
del server  # dropped without close(): the exit hook must still stop the process
gc.collect()
"""


def test_servers_left_running_are_stopped_at_exit() -> None:
    """The server ignores stdin close and SIGTERM, so only the atexit hook's kill can stop it."""
    name = f"atexit_{uuid.uuid4().hex[:8]}"  # unique: other runs of this suite may share the machine
    done = subprocess.run(
        [sys.executable, "-c", ATEXIT_PROGRAM, str(TEST_SERVER), name],
        capture_output=True,
        text=True,
        timeout=60,
    )
    left = processes_of(name)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) > 0
    assert left == []
