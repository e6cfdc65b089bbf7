"""Trace: JSONL events written (and flushed) as the run goes, kept when the process dies; the console view."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from toolmode import Agent, tool
from toolmode.console import ConsoleSink
from toolmode.events import BaseEvent, MessageAdded
from toolmode.testing import call, calls, fault, reply
from toolmode.trace import JsonlSink, MemorySink, Trace, new_trace_path


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The events of a trace file (the header line checked and left out)."""
    header, *events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert (header["kind"], header["version"]) == ("trajectory", 2)
    return events


def make_agent(server, tmp_path: Path, **kwargs: Any) -> Agent:
    kwargs.setdefault("tools", [echo])
    kwargs.setdefault("console", False)
    return Agent(mode="react", model="m", base_url=server.base_url, runs_dir=tmp_path / "runs", **kwargs)


# ----------------------------------------------------------------------------- JSONL file


def test_jsonl_trace_has_every_event_of_a_run(scripted, tmp_path: Path) -> None:
    server = scripted([call("echo", text="hello"), reply("It said hello.")])
    with make_agent(server, tmp_path) as agent:
        result = agent.run("Say hello")
    path = result.trace_path
    assert path is not None and path.parent == tmp_path / "runs" and path.suffix == ".jsonl"
    assert "react" in path.name
    events = read_jsonl(path)
    assert [e["kind"] for e in events] == ["run_start", "message", "tools", "reply", "message", "tool_call",
                                              "tool_result", "message", "reply", "message", "run_end"]
    start, tools, reply1, tool_call, tool_result, reply2, end = [e for e in events if e["kind"] != "message"]
    messages = [e for e in events if e["kind"] == "message"]
    assert [m["message"] for m in messages] == result.messages  # the conversation, exactly as sent
    assert [(m["index"], m["source"], m["step"]) for m in messages] == [
        (0, "task", None), (1, "reply", 1), (2, "tool", 1), (3, "reply", 2)]
    assert reply1["sent_messages"] == 1 and reply2["sent_messages"] == 3
    assert (tool_call["name"], tool_call["step"]) == ("echo", 1)
    assert start["task"] == "Say hello" and start["mode"] == "react" and start["model"] == "m"
    assert start["base_url"] == server.base_url and start["tools_sent"] == ["echo"]
    assert start["trace_path"] == str(path)
    assert tools["names"] == ["echo"] and tools["schemas"][0]["function"]["name"] == "echo"
    assert reply1["step"] == 1 and reply1["tool_calls"][0]["name"] == "echo"
    assert json.loads(reply1["tool_calls"][0]["arguments"]) == {"text": "hello"}
    assert reply1["usage"]["prompt_tokens"] == result.records[0].usage.prompt_tokens > 0
    assert reply1["attempts"] == 1 and reply1["recovered"] is None
    assert tool_result["step"] == 1 and tool_result["name"] == "echo" and tool_result["result"] == "hello"
    assert tool_result["error"] is False and tool_result["id"] == reply1["tool_calls"][0]["id"]
    assert reply2["step"] == 2 and reply2["content"] == "It said hello." and reply2["tool_calls"] == []
    assert end["stopped"] == "answer" and end["answer"] == "It said hello." and end["steps"] == 2
    assert end["usage"] == result.usage.to_dict()
    assert end["trace_path"] == str(path)
    times = [e["t"] for e in events]
    assert times == sorted(times)


def test_each_run_gets_its_own_trace_file(scripted, tmp_path: Path) -> None:
    server = scripted([reply("one"), reply("two")])
    with make_agent(server, tmp_path) as agent:
        first, second = agent.run("a"), agent.run("b")
    assert first.trace_path != second.trace_path
    assert read_jsonl(second.trace_path)[0]["task"] == "b"
    assert len(list((tmp_path / "runs").iterdir())) == 2


def test_no_trace_file_when_runs_dir_is_none(scripted, tmp_path: Path) -> None:
    server = scripted([reply("x")])
    with Agent(tools=[echo], model="m", base_url=server.base_url, console=False, runs_dir=None) as agent:
        assert agent.run("t").trace_path is None


def test_events_are_flushed_while_the_run_goes(scripted, tmp_path: Path) -> None:
    """A tool reads the trace file in the middle of the run: the finished step is already on disk."""
    seen: list[list[str]] = []
    runs = tmp_path / "runs"

    @tool
    def peek() -> str:
        """Read the trace so far."""
        [path] = runs.iterdir()
        kinds = [e["kind"] for e in read_jsonl(path)]
        seen.append(kinds)
        return ",".join(kinds)

    server = scripted([call("peek"), call("peek"), reply("done")])
    with make_agent(server, tmp_path, tools=[peek]) as agent:
        agent.run("t")
    assert seen[0] == ["run_start", "message", "tools", "reply", "message", "tool_call"]
    assert seen[1] == ["run_start", "message", "tools", "reply", "message", "tool_call", "tool_result", "message",
                       "reply", "message", "tool_call"]


def test_trace_records_retries_errors_and_recovered_calls(scripted, tmp_path: Path) -> None:
    server = scripted([
        fault("429", retry_after=0.05),
        reply('```json\n{"name": "echo", "arguments": {"text": "from text"}}\n```'),
        fault("status", status=401, message="key revoked"),
    ])
    with make_agent(server, tmp_path) as agent:
        result = agent.run("t")
    events = [e for e in read_jsonl(result.trace_path) if e["kind"] != "message"]
    kinds = [e["kind"] for e in events]
    assert kinds == ["run_start", "tools", "retry", "reply", "tool_call", "tool_result", "error", "run_end"]
    retry = events[2]
    assert retry["attempt"] == 1 and retry["wait"] == pytest.approx(0.05) and "429" in retry["reason"]
    assert events[3]["recovered"] == "json" and events[3]["attempts"] == 2
    assert events[4]["name"] == "echo" and events[5]["result"] == "from text"
    assert "key revoked" in events[6]["message"] and events[6]["step"] == 2
    assert events[7]["stopped"] == "error" and "key revoked" in events[7]["error"]
    assert result.records[0].recovered == "json"


def test_trace_keeps_finished_steps_when_the_process_dies(scripted, tmp_path: Path) -> None:
    """The agent runs in a subprocess whose tool kills the process at step 3: steps 1-2 are on disk."""
    server = scripted([call("work", n=1), call("work", n=2), call("work", n=3), reply("never")])
    runs = tmp_path / "runs"
    program = tmp_path / "dies.py"
    program.write_text(textwrap.dedent(f"""
        import os, sys
        from toolmode import Agent, tool

        @tool
        def work(n: int) -> str:
            \"\"\"Do step n.\"\"\"
            if n == 3:
                os._exit(1)  # no cleanup, no flush: like a crash or a kill -9
            return f"step {{n}} done"

        agent = Agent(tools=[work], model="m", base_url={server.base_url!r}, console=False,
                      runs_dir={str(runs)!r})
        agent.run("work three steps")
        sys.exit(0)
    """))
    proc = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    [path] = runs.iterdir()
    events = read_jsonl(path)  # every line is complete JSON
    kinds = [e["kind"] for e in events]
    assert kinds == ["run_start", "message", "tools", "reply", "message", "tool_call", "tool_result", "message",
                     "reply", "message", "tool_call", "tool_result", "message", "reply", "message", "tool_call"]
    results = [e for e in events if e["kind"] == "tool_result"]
    assert [(e["step"], e["result"]) for e in results] == [(1, "step 1 done"), (2, "step 2 done")]
    assert events[-1]["step"] == 3  # the reply that asked for the fatal call
    assert len(server.requests) == 3


# ----------------------------------------------------------------------------- Trace and sinks


class BrokenSink:
    def emit(self, event: BaseEvent) -> None:
        raise RuntimeError("printer on fire")

    def close(self) -> None:
        pass


def test_a_failing_sink_is_removed_and_the_run_goes_on(scripted, tmp_path: Path, capsys) -> None:
    memory = MemorySink()
    server = scripted([call("echo", text="x"), reply("done")])
    with make_agent(server, tmp_path, sinks=[BrokenSink(), memory]) as agent, \
            pytest.warns(RuntimeWarning, match="trace sink BrokenSink failed and was removed"):
        result = agent.run("t")
    assert result.answer == "done"
    assert capsys.readouterr().out == ""  # a library warns, it does not print
    assert [e["kind"] for e in read_jsonl(result.trace_path)][-1] == "run_end"
    assert memory.of("run_end")


def test_a_failing_sink_does_not_hide_the_event_from_the_next_sink(capsys) -> None:
    memory = MemorySink()
    trace = Trace([BrokenSink(), memory])
    with pytest.warns(RuntimeWarning):
        trace.emit("notice", message="first")
    trace.emit("notice", message="second")
    assert [e.data["message"] for e in memory.events] == ["first", "second"]


def test_an_unknown_event_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown event kind 'nonsense'"):
        Trace([]).emit("nonsense", x=1)


def test_jsonl_sink_appends_and_serialises_anything(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "t.jsonl"
    sink = JsonlSink(path)
    sink.emit(MessageAdded(index=0, message={"path": Path("/a"), "text": "北京"}, source="history", t=1.23456))
    sink.close()
    line = path.read_text(encoding="utf-8").splitlines()[-1]
    assert "北京" in line  # not \\u-escaped
    assert json.loads(line) == {"kind": "message", "t": 1.2346, "index": 0, "message": {"path": "/a", "text": "北京"},
                                "source": "history", "step": None, "about": None}


def test_new_trace_path_is_safe_and_unique(tmp_path: Path) -> None:
    a = new_trace_path(tmp_path, "react/../../etc passwd")
    b = new_trace_path(tmp_path, "react/../../etc passwd")
    assert a.parent == tmp_path and b.parent == tmp_path
    assert "/" not in a.name and " " not in a.name and a.name.endswith(".jsonl")
    assert a != b


# ----------------------------------------------------------------------------- console


def console_run(server, tmp_path: Path, *, quiet: bool = False, width: int = 60, **kwargs: Any) -> tuple[Any, str]:
    out = io.StringIO()
    sink = ConsoleSink(Console(file=out, width=250), quiet=quiet, width=width)
    with make_agent(server, tmp_path, sinks=[sink], **kwargs) as agent:
        result = agent.run("t")
    return result, out.getvalue()


def test_console_step_view(scripted, tmp_path: Path) -> None:
    @tool
    def long_text(n: int) -> str:
        """Return n x's."""
        return "x" * n

    server = scripted([
        calls(("echo", {"text": "hello [bold]world[/bold]"}), ("long_text", {"n": 500})),
        reply("Final answer: 42 [not markup]"),
    ])
    result, text = console_run(server, tmp_path, tools=[echo, long_text])
    lines = text.splitlines()
    r1, r2 = result.records[0].usage, result.records[1].usage
    assert "mode react" in lines[0] and "echo, long_text" in lines[0]
    assert f"step 1 prompt {r1.prompt_tokens:,} · completion {r1.completion_tokens:,} · cached {r1.cached_tokens:,}" in text
    assert f"step 2 prompt {r2.prompt_tokens:,} · completion {r2.completion_tokens:,} · cached {r2.cached_tokens:,}" in text
    assert r2.cached_tokens > 0
    # calls with their arguments, markup shown literally
    # (two calls in one reply: each is numbered, and its result repeats the number and the arguments)
    assert '→ #1 echo({"text": "hello [bold]world[/bold]"})' in text
    assert '→ #2 long_text({"n": 500})' in text
    # results, shortened to the width with the count of what was left out
    assert '← #1 echo({"text": "hello [bold]world[/bold]"}): hello [bold]world[/bold]' in text
    assert f'← #2 long_text({{"n": 500}}): {"x" * 60}… (+440 chars)' in text
    assert "x" * 61 not in text
    # the answer and the totals
    assert "Final answer: 42 [not markup]" in text
    u = result.usage
    assert f"total 2 requests · prompt {u.prompt_tokens:,} (cached {u.cached_tokens:,})" in text
    assert f"completion {u.completion_tokens:,}" in text
    assert "cost unknown price" in text
    assert f"trace: {result.trace_path}" in text
    assert text.index("step 1") < text.index("→ #1 echo") < text.index("← #1 echo") < text.index("step 2") < text.index("total")


def test_console_shows_errors_in_results_and_stop_reason(scripted, tmp_path: Path) -> None:
    server = scripted([call("nope"), call("echo", text="x")])
    result, text = console_run(server, tmp_path, max_steps=2, width=500)
    assert "← nope: Error: UnknownTool: unknown tool 'nope'" in text
    assert "stopped: step_limit" in text
    assert "step limit (2)" in text
    assert result.stopped == "step_limit"


def test_console_shows_retries_and_recovered_calls(scripted, tmp_path: Path) -> None:
    server = scripted([
        fault("500", message="upstream hiccup"),
        reply('```json\n{"name": "echo", "arguments": {"text": "t"}}\n```'),
        reply("ok"),
    ])
    _, text = console_run(server, tmp_path)
    assert "retry 1 in" in text and "upstream hiccup" in text
    assert "recovered a tool call written as text (json)" in text


def test_console_quiet_prints_only_the_answer(scripted, tmp_path: Path) -> None:
    server = scripted([call("echo", text="noise"), reply("Just the answer [1].")])
    _, text = console_run(server, tmp_path, quiet=True)
    assert text == "Just the answer [1].\n"


def test_agent_quiet_console_on_stdout(scripted, tmp_path: Path, capsys) -> None:
    server = scripted([call("echo", text="noise"), reply("42")])
    with make_agent(server, tmp_path, console=True, quiet=True) as agent:
        agent.run("t")
    assert capsys.readouterr().out == "42\n"


def test_agent_console_off_prints_nothing(scripted, tmp_path: Path, capsys) -> None:
    server = scripted([call("echo", text="noise"), reply("42")])
    with make_agent(server, tmp_path, console=False) as agent:
        agent.run("t")
    assert capsys.readouterr().out == ""
