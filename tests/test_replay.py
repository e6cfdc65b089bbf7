"""The trajectory (trace format version 2) read back, and `toolmode replay`: a recorded run runs again
against its own replies, request for request, and the first difference is shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolmode import Agent, ModelSettings, tool
from toolmode.cli import main
from toolmode.replay import replay
from toolmode.testing import call, calls, reply
from toolmode.trace import read
from toolmode.trajectory import TraceFormatError


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@tool(deferred=True)
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


SCRIPT = [
    call("search_tools", query="weather"),  # react+load: the tool list grows at step 2
    calls(("weather", {"city": "Oslo"}), ("echo", {"text": "hi"})),  # parallel calls
    call("echo", text="hi"),  # the same call and result again: a note and a nudge
    reply('```json\n{"name": "echo", "arguments": {"text": "from text"}}\n```'),  # a call written as text
    reply(""),  # an empty reply: asked again
    reply("done"),
]


def recorded_run(scripted, tmp_path: Path, **kwargs: Any) -> tuple[Any, Any]:
    server = scripted(SCRIPT)
    model = ModelSettings("m", base_url=server.base_url, temperature=0.3, max_tokens=256)
    with Agent([echo, weather], mode="react", model=model, runs_dir=tmp_path / "runs", **kwargs) as agent:
        result = agent.run("Weather in Oslo, then echo hi.")
    return result, server


def test_read_rebuilds_the_typed_events_the_messages_and_every_request(scripted, tmp_path: Path) -> None:
    result, server = recorded_run(scripted, tmp_path)
    assert result.answer == "done"
    trajectory = read(result.trace_path)
    assert trajectory.version == 2 and trajectory.header["kind"] == "trajectory"
    assert trajectory.messages == result.messages  # the conversation, exactly
    [run] = trajectory.runs
    assert run.end is not None and run.end.stopped == "answer" and run.start.request["params"] == {
        "temperature": 0.3, "max_tokens": 256}
    assert [r.body() for r in run.requests] == server.requests  # every request, exactly as sent
    sources = [(e.source, e.about) for e in run.of("message")]
    assert ("policy", "repeated_call") in sources and ("policy", "empty_reply") in sources
    assert trajectory.skipped == []


def test_replay_reproduces_a_run_request_for_request(scripted, tmp_path: Path, capsys) -> None:
    result, server = recorded_run(scripted, tmp_path)
    [report] = replay(result.trace_path)
    assert report.identical and report.requests == len(server.requests) == 6
    assert report.result.answer == "done"
    assert main(["replay", str(result.trace_path)]) == 0
    assert capsys.readouterr().out.strip() == "run 0: replayed 6 requests: identical"


def test_replay_shows_the_first_request_that_differs(scripted, tmp_path: Path, capsys) -> None:
    result, _ = recorded_run(scripted, tmp_path)
    lines = result.trace_path.read_text(encoding="utf-8").splitlines()
    edited = []
    for line in lines:  # the recording says the model was told something else after the repeated call
        event = json.loads(line)
        if event["kind"] == "message" and event.get("about") == "repeated_call":
            event["message"]["content"] = "Please go on."
        edited.append(json.dumps(event, ensure_ascii=False))
    result.trace_path.write_text("\n".join(edited) + "\n", encoding="utf-8")
    [report] = replay(result.trace_path)
    assert not report.identical
    assert report.difference.request == 4 and report.difference.path == "messages[9].content"
    assert report.difference.recorded == "Please go on."
    assert main(["replay", str(result.trace_path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("run 0: request 4 differs at messages[9].content:") and "recorded: 'Please go on.'" in out


def test_a_chat_sessions_turns_replay_each_with_its_history(scripted, tmp_path: Path) -> None:
    server = scripted([call("echo", text="one"), reply("first"), reply("second")])
    with Agent([echo], model="m", base_url=server.base_url, runs_dir=tmp_path / "runs",
               instructions="Be brief.") as agent, agent.chat() as chat:
        chat.send("turn one")
        chat.send("turn two")
    trajectory = read(chat.trace.path)
    assert [e.kind for e in trajectory.events].count("carried") == 1  # turn two refers to turn one's messages
    assert trajectory.runs[1].messages == chat.messages
    reports = replay(chat.trace.path)
    assert [(r.run, r.requests, r.identical) for r in reports] == [(0, 2, True), (1, 1, True)]


def test_a_code_mode_run_replays(scripted, tmp_path: Path, workspace: Path) -> None:
    server = scripted([call("run_code", code="print(echo('x') * 2)"), reply("xx")])
    with Agent([echo], mode="code", model="m", base_url=server.base_url, workspace=workspace,
               runs_dir=tmp_path / "runs") as agent:
        result = agent.run("twice")
    [report] = replay(result.trace_path)
    assert report.identical and report.requests == 2


def test_old_and_unknown_traces_are_refused_with_one_line(tmp_path: Path, capsys) -> None:
    old = tmp_path / "old.jsonl"  # version 1: no header line, events only
    old.write_text(json.dumps({"kind": "run_start", "t": 0, "task": "t", "mode": "react", "model": "m",
                               "base_url": None, "tools_sent": [], "notes": []}) + "\n")
    assert read(old).version == 1 and read(old).runs[0].messages is None
    with pytest.raises(TraceFormatError, match="format version 1, which holds no messages"):
        replay(old)
    newer = tmp_path / "newer.jsonl"
    newer.write_text(json.dumps({"kind": "trajectory", "version": 9}) + "\n")
    with pytest.raises(TraceFormatError, match="format version 9; this toolmode reads versions 1, 2"):
        read(newer)
    assert main(["replay", str(old)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "format version 1" in err
    not_a_trace = tmp_path / "notes.jsonl"
    not_a_trace.write_text("hello\nworld\n")
    with pytest.raises(TraceFormatError, match="line 1 is not JSON"):
        read(not_a_trace)


def test_a_bench_results_file_is_not_taken_for_an_old_trace(tmp_path: Path, capsys) -> None:
    # A bench's results.jsonl has a "kind" (the task family) on every line: it was read as a version-1 trace
    # and refused as one "which holds no messages", which sent people looking for a newer toolmode.
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps({"task": f"family/t{i}", "kind": "family", "mode": "code"}) + "\n"
                               for i in range(2)))
    with pytest.raises(TraceFormatError, match="is not a toolmode trace: none of its lines is an event"):
        read(results)
    assert main(["replay", str(results)]) == 2
    assert "episodes/" in capsys.readouterr().err
