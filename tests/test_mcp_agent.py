"""MCP tools end to end: the Agent in react, react+search, code and hybrid mode, against the scripted model server."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolmode import Agent
from toolmode.mcp import McpServer, mcp_tools
from toolmode.sandbox import Sandbox, SandboxUnavailable
from toolmode.testing import ScriptedModelServer, call, reply
from toolmode.tools.base import Tool

TEST_SERVER = Path(__file__).resolve().parent / "mcp_servers" / "test_server.py"
Scripted = Callable[..., ScriptedModelServer]


def server_spec(*flags: str) -> dict[str, Any]:
    """The project's test server over stdio, with flags."""
    return {"command": sys.executable, "args": [str(TEST_SERVER), *flags]}



@pytest.fixture(scope="module", autouse=True)
def _outside_the_checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Run from a folder of its own: the current directory is the default workspace, and this checkout (which
    holds the test venv's python) would be one from which MCP servers are refused."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("cwd"))
        yield

@pytest.fixture(scope="module")
def tools() -> Iterator[list[Tool]]:
    listed = mcp_tools(server_spec(), timeout=5)
    yield listed
    listed[0].fn.server.close()  # type: ignore[attr-defined]


def agent(server: ScriptedModelServer, tools: list[Tool], mode: str, workspace: Path, **kwargs: Any) -> Agent:
    return Agent(
        tools=tools,
        mode=mode,
        base_url=server.base_url,
        api_key="test-key",
        model="scripted-model",
        workspace=workspace,
        console=False,
        runs_dir=None,
        **kwargs,
    )


def tool_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def test_react_calls_an_mcp_tool(scripted: Scripted, tools: list[Tool], workspace: Path) -> None:
    server = scripted([call("add", a=2, b=3), reply("The sum is 5.")])
    with agent(server, tools, "react", workspace) as a:
        result = a.run("What is 2 + 3?")
    assert (result.stopped, result.answer) == ("answer", "The sum is 5.")
    first = server.requests[0]
    add_schema = next(t for t in first["tools"] if t["function"]["name"] == "add")
    assert add_schema["function"]["parameters"]["required"] == ["a", "b"]
    assert tool_messages(server.requests[1]) == [json.dumps({"sum": 5, "inputs": [2, 3]})]


def test_react_run_goes_on_after_error_crash_and_hang(scripted: Scripted, workspace: Path) -> None:
    own = McpServer(server_spec(), timeout=1)
    try:
        script = [
            call("fail", message="quota exceeded"),
            call("hang"),
            call("crash"),
            call("echo", text="back again"),
            reply("done"),
        ]
        server = scripted(script)
        with agent(server, own.tools(), "react", workspace) as a:
            result = a.run("Exercise the faults.")
        assert (result.stopped, result.answer) == ("answer", "done")
        failed, hung, crashed, echoed = tool_messages(server.requests[4])
        assert (
            failed.startswith("Error: McpToolError: MCP server 'test', tool 'fail': ")
            and "quota exceeded" in failed
        )
        assert hung.startswith("Error: McpTimeoutError: MCP server 'test', tool 'hang': no result after 1 s")
        assert crashed.startswith(
            "Error: McpConnectionError: MCP server 'test' closed the connection during tool 'crash'"
        )
        assert echoed == "back again"
    finally:
        own.close()
    assert own.process_ids() == []


def test_react_search_load_finds_deferred_mcp_tools(scripted: Scripted, workspace: Path) -> None:
    listed = mcp_tools(server_spec("--extra", "2"))  # 11 tools: deferred
    try:
        assert all(t.deferred for t in listed)
        server = scripted([call("search_tools", query="add two integers"), call("add", a=4, b=5), reply("9")])
        with agent(server, listed, "react", workspace, search="load") as a:
            result = a.run("Add 4 and 5.")
        assert (result.stopped, result.answer) == ("answer", "9")
        assert "add" not in tool_names(server.requests[0])
        assert "add" in tool_names(server.requests[1])
        found, added = tool_messages(server.requests[2])
        assert "add(a: int, b: int) -> {sum: int, inputs: list[int]}" in found
        assert json.loads(added) == {"sum": 9, "inputs": [4, 5]}
    finally:
        listed[0].fn.server.close()  # type: ignore[attr-defined]


CODE = """\
total = add(a=2, b=3)
print("sum", total["sum"])
print(echo(text="hi"))
try:
    fail(message="bad input")
except Exception as exc:
    print("caught", exc)
"""


@pytest.fixture
def sandbox(workspace: Path) -> None:
    """Skip, with the sandbox's own reason, where it cannot run (kernel without Landlock and no bubblewrap)."""
    try:
        Sandbox(workspace).close()
    except SandboxUnavailable as exc:
        pytest.skip(f"code sandbox unavailable: {exc}")


@pytest.mark.usefixtures("sandbox")
def test_code_mode_calls_mcp_tools_from_the_sandbox(
    scripted: Scripted, tools: list[Tool], workspace: Path
) -> None:
    server = scripted([call("run_code", code=CODE), reply("5")])
    with agent(server, tools, "code", workspace) as a:
        result = a.run("What is 2 + 3?")
    assert (result.stopped, result.answer) == ("answer", "5")
    assert tool_names(server.requests[0]) == ["run_code"]
    index = server.requests[0]["tools"][0]["function"]["description"]
    assert "add(a: int, b: int) -> {sum: int, inputs: list[int]}" in index
    (output,) = tool_messages(server.requests[1])
    assert "sum 5" in output and "hi" in output
    assert "caught" in output and "MCP server 'test', tool 'fail'" in output and "bad input" in output


@pytest.mark.usefixtures("sandbox")
def test_hybrid_mode_mixes_direct_and_code_calls(
    scripted: Scripted, tools: list[Tool], workspace: Path
) -> None:
    server = scripted(
        [
            call("echo", text="direct"),
            call("run_code", code='print("sum is", add(a=20, b=22)["sum"])'),
            reply("42"),
        ]
    )
    with agent(server, tools, "hybrid", workspace, direct=["echo"]) as a:
        result = a.run("Echo, then add 1 and 1.")
    assert (result.stopped, result.answer) == ("answer", "42")
    assert set(tool_names(server.requests[0])) == {"echo", "run_code"}
    assert tool_messages(server.requests[2]) == ["direct", "sum is 42"]  # echo's result, then run_code's output


def test_agent_close_stops_its_mcp_servers(scripted: Scripted, workspace: Path) -> None:
    own = mcp_tools(server_spec(), name="closing", timeout=5)
    server = own[0].fn.server  # type: ignore[attr-defined]
    try:
        model = scripted([call("add", a=1, b=1), reply("2")])
        with agent(model, own, "react", workspace) as a:
            a.run("1 + 1?")
            assert server.process_ids(), "the server should be running during the agent's life"
        assert server.process_ids() == []
    finally:
        server.close()


def test_colliding_mcp_tool_names_get_server_prefixes(scripted: Scripted, workspace: Path) -> None:
    first = mcp_tools(server_spec(), name="alpha", timeout=5)
    second = mcp_tools(server_spec(), name="beta", timeout=5)
    try:
        model = scripted([call("beta__add", a=2, b=2), reply("4")])
        with agent(model, [*first, *second], "react", workspace) as a:
            result = a.run("2 + 2?")
        names = tool_names(model.requests[0])
        assert {"alpha__add", "beta__add", "alpha__echo", "beta__echo"} <= set(names)
        assert "add" not in names
        assert json.loads(tool_messages(model.requests[1])[0])["sum"] == 4
        assert result.answer == "4"
    finally:
        first[0].fn.server.close()  # type: ignore[attr-defined]
        second[0].fn.server.close()  # type: ignore[attr-defined]


def test_cli_names_repeated_servers_apart_and_reports_start_failures(capsys: pytest.CaptureFixture[str]) -> None:
    from toolmode.cli import main

    command = f"{sys.executable} {TEST_SERVER}"
    assert main(["tools", "--no-builtin", "--mcp", command, "--mcp", command]) == 0
    listing = capsys.readouterr().out
    assert "test__echo" in listing and "test2__echo" in listing
    assert main(["tools", "--no-builtin", "--mcp", f"{command} --fail-start boom"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolmode: ") and "failed to start" in err and "Traceback" not in err
