"""The loop under abuse: odd server replies, tools that exit, internal errors, Ctrl-C mid-run, no server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from toolmode import Agent, ModelClient, ModelError, run_agent, tool
from toolmode.modes.react import ReactMode
from toolmode.testing import call, fault, reply
from toolmode.trace import MemorySink, Trace


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def leave(code: int) -> str:
    """Calls sys.exit: a badly written tool."""
    sys.exit(code)


def agent(server, tools=(add, leave), **kwargs: Any) -> Agent:
    return Agent(tools=list(tools), mode="react", model="m", base_url=server.base_url, console=False,
                 runs_dir=None, **kwargs)


def completion(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    """A hand-made completion body, served verbatim by the scripted server."""
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}
    return fault("bad_body", body=json.dumps(body))


def test_arguments_sent_as_an_object_are_accepted(scripted) -> None:
    odd = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 3}}}]}
    server = scripted([completion(odd, "tool_calls"), reply("5")])
    with agent(server) as a:
        result = a.run("2+3?")
    assert result.answer == "5"
    assert result.records[0].calls[0].result == "5"
    sent_back = server.requests[1]["messages"][-2]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(sent_back) == {"a": 2, "b": 3}  # replayed as the string the API specifies


def test_a_tool_calling_sys_exit_is_an_error_result_not_the_end(scripted) -> None:
    server = scripted([call("leave", code=3), reply("recovered")])
    with agent(server) as a:
        result = a.run("go")
    assert result.answer == "recovered"
    assert result.records[0].calls[0].result == "Error: SystemExit: 3"


def test_an_internal_error_ends_the_run_with_a_run_end_event(scripted) -> None:
    class BrokenMode(ReactMode):
        def tool_schemas(self) -> list[dict[str, Any]]:
            raise RuntimeError("schema store is gone")

    server = scripted([reply("never")])
    sink = MemorySink()
    client = ModelClient("m", base_url=server.base_url)
    result = run_agent("task", BrokenMode([add]), client, trace=Trace([sink]))
    client.close()
    assert result.stopped == "error"
    assert result.error == "internal error: RuntimeError: schema store is gone"
    assert sink.of("run_end")[0].data["stopped"] == "error"
    assert server.requests == []


def test_answer_cut_by_length_is_flagged(scripted) -> None:
    server = scripted([completion({"role": "assistant", "content": "The answer is"}, "length")])
    sink = MemorySink()
    with Agent(tools=[add], model="m", base_url=server.base_url, console=False, runs_dir=None,
               sinks=[sink]) as a:
        result = a.run("q")
    assert result.records[0].finish_reason == "length"
    assert any("finish_reason=length" in e.data["message"] for e in sink.of("notice"))


def test_no_server_listening_fails_fast_with_a_hint() -> None:
    import socket

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens on it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = ModelClient("m", base_url=f"http://127.0.0.1:{port}/v1", deadline=300)
    try:
        client.chat([{"role": "user", "content": "hi"}])
    except ModelError as exc:
        message = str(exc)
    else:  # pragma: no cover - the assertion below reports it
        message = ""
    finally:
        client.close()
    assert message.startswith(f"cannot reach http://127.0.0.1:{port}/v1 after 3 attempts")
    assert "is the server running" in message
    assert "Connection refused" in message and "ConnectError" not in message  # no httpx class names for the user


CTRL_C_SCRIPT = textwrap.dedent("""
    import sys, time
    from toolmode import Agent, tool
    from toolmode.testing import ScriptedModelServer, calls, reply

    @tool
    def quick(x: int) -> int:
        '''Returns x at once.'''
        return x

    @tool
    def slow(x: int) -> int:
        '''Sleeps a minute.'''
        time.sleep(60)
        return x

    server = ScriptedModelServer([calls(("quick", {"x": 1}), ("slow", {"x": 2})), reply("never")])
    server.start()
    agent = Agent(tools=[quick, slow], model="m", base_url=server.base_url, console=False, runs_dir=sys.argv[1])
    print("started", flush=True)
    try:
        agent.run("go")
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
""")


def test_ctrl_c_during_parallel_calls_keeps_finished_results_and_ends_the_trace(tmp_path: Path) -> None:
    script = tmp_path / "run.py"
    script.write_text(CTRL_C_SCRIPT)
    runs = tmp_path / "runs"
    # stderr is captured: the child's server thread may print about the request Ctrl-C cut short.
    proc = subprocess.Popen([sys.executable, str(script), str(runs)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until the quick call's result is on disk
            traces = list(runs.glob("*.jsonl"))
            if traces and '"kind": "tool_result"' in traces[0].read_text():
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)  # well before the slow tool's 60 s
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130 and "interrupted" in out, err
    events = [json.loads(line) for line in traces[0].read_text().splitlines()]
    results = [e for e in events if e["kind"] == "tool_result"]
    assert [(r["name"], r["result"]) for r in results] == [("quick", "1")]
    assert events[-1]["kind"] == "run_end" and events[-1]["stopped"] == "interrupted"
