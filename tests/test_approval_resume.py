"""Deferred approval: `run()` without an approver stops with `stopped="approval"`, its saved state is plain JSON,
and `agent.resume(state, decisions=...)` continues it: in the same process, and in a fresh `python` process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from test_approval import agent_on, recording_tools, tool_messages
from toolmode import Agent, Chat, PendingCall
from toolmode.testing import call, calls, reply
from toolmode.trace import Trace, read

SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_run_stops_for_approval_then_resumes_with_decisions(scripted, tmp_path: Path) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([calls(("read_file", {"path": "a"}), ("delete_file", {"path": "b"}),
                             ("delete_file", {"path": "c"})), reply("all done")])
    with agent_on(server, recording_tools(log), runs_dir=tmp_path) as agent:
        first = agent.run("clean up")
        assert first.stopped == "approval" and first.answer is None and first.error is None
        assert log == [("read_file", {"path": "a"})]  # the allowed call ran; the two asks wait
        ids = [p.call_id for p in first.pending]
        assert [(p.tool, p.arguments) for p in first.pending] == [("delete_file", {"path": "b"}),
                                                                  ("delete_file", {"path": "c"})]
        assert all(isinstance(p, PendingCall) and p.step == 1 for p in first.pending)
        state = json.loads(json.dumps(first.state()))  # plain JSON
        assert len(server.requests) == 1
        with pytest.raises(ValueError, match="no decision for pending call"):
            agent.resume(state, decisions={ids[0]: True})
        with pytest.raises(ValueError, match="which is not pending"):
            agent.resume(state, decisions={ids[0]: True, ids[1]: True, "call_zzz": True})
        second = agent.resume(state, decisions={ids[0]: {"arguments": {"path": "b2"}}, ids[1]: "keep c"})
    assert second.stopped == "answer" and second.answer == "all done"
    assert log == [("read_file", {"path": "a"}), ("delete_file", {"path": "b2"})]
    texts = tool_messages(server, 1)
    assert texts[0] == "contents of a" and texts[1] == "deleted b2"
    assert texts[2].startswith("Refused by the user: delete_file was not run: keep c")
    # the resumed run continued the same trace file: two runs, the second carrying the first's messages
    assert second.trace_path == first.trace_path
    trajectory = read(first.trace_path)
    assert [r.start.run for r in trajectory.runs] == [0, 1]
    stopped, resumed = trajectory.runs
    assert stopped.end is not None and stopped.end.stopped == "approval"
    assert resumed.start.resumes == {"path": str(first.trace_path), "run": 0, "step": 1}
    assert resumed.messages == server.requests[1]["messages"] + [{"role": "assistant", "content": "all done"}]
    assert [e.by for e in resumed.of("approval")] == ["resume", "resume"]


def test_a_state_that_did_not_stop_for_approval_has_none(scripted) -> None:
    server = scripted([reply("hi")])
    with agent_on(server, []) as agent:
        result = agent.run("hello")
    with pytest.raises(ValueError, match="not 'approval'"):
        result.state()
    with agent_on(server, []) as agent, pytest.raises(ValueError, match="not a saved run state"):
        agent.resume({"messages": []}, decisions={})


def test_resume_checks_the_mode_and_continues_only_the_stopped_runs_own_trace(scripted, tmp_path: Path) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("delete_file", path="x"), reply("ok")])
    with agent_on(server, recording_tools(log), runs_dir=tmp_path / "runs") as agent:
        state = agent.run("go").state()
    other = tmp_path / "notes.txt"
    other.write_text("not a trace\n")
    decisions = {state["pending"][0]["call_id"]: True}
    with (Agent(recording_tools(log), mode="code", model="m", base_url=server.base_url, sandbox="none") as code,
          pytest.raises(ValueError, match="saved run was in 'react' mode")):
        code.resume(state, decisions=decisions)
    with agent_on(server, recording_tools(log), runs_dir=tmp_path / "new") as agent:
        result = agent.resume({**state, "trace": {"path": str(other), "run": 0}}, decisions=decisions)
    assert result.answer == "ok" and other.read_text() == "not a trace\n"  # never appended to
    assert result.trace_path.parent == tmp_path / "new"


HALF = textwrap.dedent('''
    import json, sys
    from pathlib import Path
    from toolmode import Agent, tool

    log = Path(sys.argv[2])

    @tool(approval="ask")
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        with log.open("a") as f:
            f.write(json.dumps({"to": to, "body": body}) + "\\n")
        return f"sent to {to}"

    agent = Agent([send_email], mode="react", model="m", base_url=sys.argv[1], runs_dir=sys.argv[3])
    if sys.argv[4] == "start":
        result = agent.run("email bob")
        print(json.dumps({"stopped": result.stopped, "state": result.state() if result.pending else None}))
    else:
        state = json.loads(Path(sys.argv[5]).read_text())
        decisions = {p["call_id"]: True for p in state["pending"]}
        result = agent.resume(state, decisions=decisions)
        print(json.dumps({"stopped": result.stopped, "answer": result.answer}))
    agent.close()
''')


def test_resume_in_a_fresh_process(scripted, tmp_path: Path) -> None:
    server = scripted([call("send_email", to="bob@example.com", body="hello"), reply("Sent.")])
    script = tmp_path / "half.py"
    script.write_text(HALF)
    sent = tmp_path / "sent.jsonl"
    env = {**os.environ, "PYTHONPATH": SRC}

    def half(*args: str) -> dict[str, Any]:
        proc = subprocess.run([sys.executable, str(script), server.base_url, str(sent), str(tmp_path / "runs"),
                               *args], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])

    first = half("start")
    assert first["stopped"] == "approval" and not sent.exists()  # nothing sent before the decision
    saved = tmp_path / "state.json"
    saved.write_text(json.dumps(first["state"]))
    second = half("resume", str(saved))
    assert second == {"stopped": "answer", "answer": "Sent."}
    assert [json.loads(x) for x in sent.read_text().splitlines()] == [{"to": "bob@example.com", "body": "hello"}]
    [trace] = list((tmp_path / "runs").iterdir())
    assert [r.end.stopped for r in read(trace).runs] == ["approval", "answer"]


def test_resume_into_a_new_trace_says_what_it_continues(scripted, tmp_path: Path) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("delete_file", path="x"), reply("ok")])
    with agent_on(server, recording_tools(log), runs_dir=tmp_path / "one") as agent:
        state = agent.run("go").state()
    with agent_on(server, recording_tools(log), runs_dir=tmp_path / "two") as agent:
        result = agent.resume(state, decisions={state["pending"][0]["call_id"]: False}, continue_trace=False)
    assert result.answer == "ok" and log == []
    assert result.trace_path.parent == tmp_path / "two"
    [run] = read(result.trace_path).runs
    assert run.start.resumes is not None and run.start.resumes["path"] == state["trace"]["path"]
    assert run.messages[:len(state["messages"])] == state["messages"]


def test_a_run_stopped_otherwise_while_a_call_is_pending_keeps_a_valid_conversation(scripted) -> None:
    """The deadline passes while another call of the step runs: the run ends "budget", the pending call is
    answered as stopped (it never ran), and the conversation can be continued; no state to resume."""
    import threading

    from toolmode import tool
    from toolmode.history import check_history

    log: list[tuple[str, dict[str, Any]]] = []
    release = threading.Event()

    @tool
    def slow() -> str:
        """Wait."""
        release.wait(30)
        return "late"

    server = scripted([calls(("delete_file", {"path": "x"}), ("slow", {})), reply("next")])
    with agent_on(server, [*recording_tools(log), slow]) as agent:
        result = agent.run("go", timeout=0.5)
        release.set()
    assert (result.stopped, result.limit, result.pending) == ("budget", "timeout", [])
    assert log == []
    check_history(result.messages)  # every call has its result
    answered = {m["tool_call_id"]: m["content"] for m in result.messages if m["role"] == "tool"}
    assert all(text == "Error: the run stopped before this call finished" for text in answered.values())
    with pytest.raises(ValueError, match="not 'approval'"):
        result.state()


def test_history_of_a_run_stopped_for_approval_is_refused_clearly(scripted) -> None:
    server = scripted([call("delete_file", path="x")])
    with agent_on(server, recording_tools([])) as agent:
        result = agent.run("go")
        with pytest.raises(ValueError, match="no tool result"):
            agent.run("and now", history=result.messages)


def test_the_readme_example_runs_as_written_in_both_languages() -> None:
    """The "Approving tool calls" example (the same code in README.md and README.zh-CN.md) prints what it says."""
    import re

    root = Path(__file__).resolve().parents[1]

    def example(readme: str, heading: str, following: str) -> str:
        text = (root / readme).read_text(encoding="utf-8")
        section = text[text.index(f"## {heading}\n"):text.index(f"## {following}\n")]
        [code] = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
        return code

    code = example("README.md", "Approving tool calls", "Extending toolmode")
    assert example("README.zh-CN.md", "审批工具调用", "扩展 toolmode") == code
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": SRC})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["Sent.", "approval ['send_email']", "Sent to Eve.",
                                        "['bob@example.com', 'eve@example.com']"]


def test_toolmode_replay_replays_a_stopped_and_a_resumed_run(scripted, tmp_path: Path) -> None:
    """Both halves replay identically: the resumed one from its carried conversation (same file) or from its
    `resumed` messages (a new file), each call of the stopped step answered as recorded."""
    from toolmode.replay import replay

    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([calls(("delete_file", {"path": "a"}), ("read_file", {"path": "b"}),
                             ("delete_file", {"path": "c"})), reply("done"),
                       call("delete_file", path="d"), reply("ok")])
    with agent_on(server, recording_tools(log), runs_dir=tmp_path / "one") as agent:
        first = agent.run("go")
        a, c = (p.call_id for p in first.pending)
        second = agent.resume(first.state(), decisions={a: True, c: "no"})
        third = agent.run("more")
    with agent_on(server, recording_tools(log), runs_dir=tmp_path / "two") as agent:
        fourth = agent.resume(third.state(), decisions={third.pending[0].call_id: True}, continue_trace=False)
    assert (second.answer, fourth.answer) == ("done", "ok")
    replays = replay(first.trace_path)
    assert [r.summary() for r in replays] == ["run 0: replayed 1 requests: identical",
                                              "run 1: replayed 1 requests: identical"]
    [new_file] = replay(fourth.trace_path)
    assert new_file.identical and new_file.requests == 1


def test_a_chat_turn_that_stops_for_approval_is_resumed_and_the_chat_goes_on(scripted, tmp_path: Path) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("delete_file", path="x"), reply("deleted it"), reply("you are welcome")])
    with agent_on(server, recording_tools(log), runs_dir=tmp_path) as agent, agent.chat() as chat:
        first = chat.send("delete x")
        assert first.stopped == "approval"
        with pytest.raises(ValueError, match="nothing to resume"):
            Chat(agent, trace=Trace()).resume({})
        assert chat.resume({first.pending[0].call_id: True}).answer == "deleted it"
        assert chat.send("thanks").answer == "you are welcome"
    assert log == [("delete_file", {"path": "x"})]
    assert [m["role"] for m in server.requests[2]["messages"]] == ["user", "assistant", "tool", "assistant", "user"]
    [trace] = list(tmp_path.iterdir())
    assert [r.end.stopped for r in read(trace).runs] == ["approval", "answer", "answer"]


def test_aresume_continues_a_stopped_run_under_asyncio(scripted, tmp_path: Path) -> None:
    import asyncio

    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("delete_file", path="b"), reply("done")])
    with agent_on(server, recording_tools(log), runs_dir=tmp_path) as agent:
        first = asyncio.run(agent.arun("clean up"))
        assert first.stopped == "approval" and log == []
        [pending] = first.pending
        second = asyncio.run(agent.aresume(first.state(), decisions={pending.call_id: True}))
    assert (second.stopped, second.answer) == ("answer", "done")
    assert log == [("delete_file", {"path": "b"})] and second.trace_path == first.trace_path
