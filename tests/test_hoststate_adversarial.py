"""The host-state attacks of issue 16 (items 6 and 7), done from inside the sandbox, on every tier this
host has, then followed by what the user does next: resume the bench, read the trace, start an MCP server.

Each `tests/adversarial/hoststate_*.py` program runs as model code in a Sandbox on the episode's workspace
(its containment in general is checked by test_sandbox_adversarial, like every corpus program); here the
host's next step must not trust what it planted. A tier that refuses the plant itself passes as well:
the host-side checks are proven on their own, from an unconfined writer, in the test_hoststate_* modules.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from toolmode import Agent, tool
from toolmode.bench.cli import bench_main
from toolmode.bench.fixtures import FixtureServer
from toolmode.bench.source import _load
from toolmode.bench.task import TaskEnv
from toolmode.bench.tasks.common import builtins
from toolmode.mcp import McpStartError, mcp_tools
from toolmode.mcp.config import ServerSpec
from toolmode.sandbox import Sandbox, SandboxLimits, StubSpec
from toolmode.sandbox.spec import SandboxUnavailable
from toolmode.testing import ScriptedModelServer, call, reply

CORPUS = Path(__file__).parent / "adversarial"
KEY = "sk-hoststate-adversarial-0123456789"
LIMITS = SandboxLimits(timeout=5, memory_mb=256, max_output=4000)
TIERS = ["landlock", "bwrap"]


def _tier(policy: str, ws: Path) -> Sandbox:
    try:
        return Sandbox(ws, LIMITS, policy=policy)
    except SandboxUnavailable as exc:
        pytest.skip(f"{policy}: {exc}")


def _run(program: str, ws: Path, policy: str, tools: list[Any] = (), **values: str) -> str:
    """Run a corpus program as model code on `ws`; its `{{NAME}}` placeholders filled from `values`."""
    code = (CORPUS / program).read_text()
    for name, value in values.items():
        code = code.replace("{{" + name + "}}", value)
    by_name = {t.name: t for t in tools}
    stubs = [StubSpec(t.name, list(t.parameters.get("properties", {})), t.signature(), t.description) for t in tools]
    sb = _tier(policy, ws)
    try:
        return sb.run(code, stubs, lambda name, kwargs: by_name[name](**kwargs)).text()
    except SandboxUnavailable as exc:  # a tier this host has but cannot use (the worker could not confine itself)
        pytest.skip(f"{policy}: {exc}")
    finally:
        sb.close()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory that is the workspace and the current directory, holding a finished bench."""
    ws = tmp_path / "project"
    ws.mkdir()
    monkeypatch.chdir(ws)
    monkeypatch.setenv("DEEPSEEK_API_KEY", KEY)
    _load.cache_clear()
    assert bench_main(["--scripted", "--tasks", "log_stats", "--modes", "code", "--runs", "1", "--no-progress",
                       "--no-charts", "--out", "runs/bench-1"]) == 0  # fmt: skip
    return ws


@pytest.mark.parametrize("policy", TIERS)
def test_a_task_file_planted_through_bench_json_is_not_imported(project: Path, policy: str, tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    text = _run("hoststate_bench_json_tasks.py", project, policy, MARKER=repr(str(marker)))
    assert "'planted'" in text or "refused" in text  # a tier that keeps runs/ read-only refuses the plant itself
    _load.cache_clear()
    assert bench_main(["--resume", "runs/bench-1", "--runs", "2", "--no-progress", "--no-charts"]) in (0, 2)
    assert not marker.exists()


@pytest.mark.parametrize("policy", TIERS)
def test_an_endpoint_planted_through_bench_json_gets_no_key(project: Path, policy: str) -> None:
    with ScriptedModelServer([reply("done")] * 8) as evil:
        text = _run("hoststate_bench_json_endpoint.py", project, policy, EVIL_URL=evil.base_url)
        assert "'planted'" in text or "refused" in text
        _load.cache_clear()
        assert bench_main(["--resume", "runs/bench-1", "--runs", "2", "--no-progress", "--no-charts"]) in (0, 2)
        assert evil.requests == []


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@pytest.mark.parametrize("policy", TIERS)
def test_the_live_trace_holds_no_key_for_the_program_to_read(project: Path, policy: str) -> None:
    with ScriptedModelServer([call("echo", text=f"Authorization: Bearer {KEY}"), reply("ok")]) as server:
        url = server.base_url.replace("http://", f"http://me:{KEY}@")
        with Agent(tools=[echo], mode="react", model="m", base_url=url, console=False, runs_dir="runs") as agent:
            agent.run("go")
    text = _run("hoststate_read_trace_keys.py", project, policy)
    assert "searched" in text and "[REDACTED]@" in text  # the URL was written, its credentials were not
    assert KEY not in text and KEY[:12] not in text


@pytest.mark.parametrize("policy", TIERS)
def test_modules_planted_for_mcp_servers_never_run(project: Path, policy: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    assert "planted" in _run("hoststate_plant_mcp_module.py", project, policy, MARKER=repr(str(marker)))
    tools = mcp_tools(f"{sys.executable} -X utf8 -W ignore -m mcp_server_time", timeout=20, workspace=project)
    tools[0].fn.server.close()  # type: ignore[attr-defined]
    for command in (f"/usr/bin/env {sys.executable} -um toolmode_planted_srv", f"{sys.executable} -Bc 'import toolmode_planted_srv'"):
        with pytest.raises(McpStartError):
            mcp_tools(command, timeout=20, workspace=project)
    with pytest.raises(McpStartError, match="inside the workspace"):
        mcp_tools(ServerSpec("s", command=sys.executable, args=(str(project / "mcp_server_time.py"),)), workspace=project)
    assert not marker.exists()


class _HostOnly(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:
        _HostOnly.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "6")
        self.end_headers()
        self.wfile.write(b"secret")

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def host_service() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HostOnly)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _HostOnly.hits = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("policy", TIERS)
def test_a_bench_program_reaches_no_host_only_service(tmp_path: Path, policy: str, host_service: str) -> None:
    with FixtureServer({"index.html": "<p>fixture</p>"}) as fixture:
        env = TaskEnv(workspace=tmp_path, seed=0, facts={}, base_url=fixture.base_url, mode="code")
        tools = [t for t in builtins(env) if t.name == "fetch_url"]
        text = _run("hoststate_fetch_host_service.py", tmp_path, policy, tools, HOST_SERVICE=host_service)
    assert "refused" in text and "loopback" in text and "OPENED" not in text
    assert _HostOnly.hits == []
