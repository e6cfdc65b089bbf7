"""Approval inside `run_code`: a program's call to an `ask` tool waits for the decision (its clock stopped);
a denial raises ToolDenied (a PermissionError) in the program; a run that defers refuses it there."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from test_approval import recording_tools
from toolmode import Agent, ApprovalDecided, ApprovalRequested, RunEnd
from toolmode.approval import ApprovalRequest
from toolmode.sandbox import SandboxLimits
from toolmode.testing import call, reply

PROGRAM = """
try:
    print(delete_file(path="old.log"))
except PermissionError as exc:
    print("refused:", type(exc).__name__, exc)
print(read_file(path="a.txt"))
"""


def code_agent(server: Any, tools: list[Any], workspace: Path, **kwargs: Any) -> Agent:
    kwargs.setdefault("mode", "code")
    return Agent(tools, model="m", base_url=server.base_url, workspace=workspace, **kwargs)


def program_output(server: Any) -> str:
    return [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"][0]


def test_program_waits_for_an_approver_and_the_call_runs(scripted, workspace: Path) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("run_code", code=PROGRAM), reply("done")])
    seen: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> bool:
        seen.append(request)
        return True

    with code_agent(server, recording_tools(log), workspace, approver=approver) as agent:
        result = agent.run("clean")
    assert result.answer == "done"
    assert log == [("delete_file", {"path": "old.log"}), ("read_file", {"path": "a.txt"})]
    [request] = seen
    assert (request.tool, request.where, request.arguments) == ("delete_file", "run_code", {"path": "old.log"})
    run_code_id = server.requests[1]["messages"][-2]["tool_calls"][0]["id"]
    assert request.call_id == f"{run_code_id}#1"
    assert program_output(server).splitlines() == ["deleted old.log", "contents of a.txt"]


def test_denied_call_raises_tool_denied_in_the_program_and_never_runs(scripted, workspace: Path) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("run_code", code=PROGRAM), reply("done")])
    with code_agent(server, recording_tools(log), workspace) as agent:
        events = []
        for event in agent.stream("clean"):
            events.append(event)
            if isinstance(event, ApprovalRequested):
                assert event.where == "run_code"
                event.deny("logs are evidence")
    assert log == [("read_file", {"path": "a.txt"})]  # the denied call never ran; the program went on
    first = program_output(server).splitlines()[0]
    assert first.startswith("refused: ToolDenied Refused by the user: delete_file was not run: logs are evidence")
    [decided] = [e for e in events if isinstance(e, ApprovalDecided)]
    assert (decided.decision, decided.by) == ("denied", "stream")
    assert isinstance(events[-1], RunEnd) and events[-1].answer == "done"


def test_a_deferring_run_refuses_the_call_inside_the_program_and_says_how(scripted, workspace: Path) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("run_code", code=PROGRAM), reply("done")])
    with code_agent(server, recording_tools(log), workspace) as agent:
        result = agent.run("clean")
    assert result.stopped == "answer" and result.pending == []  # a program cannot stop the run
    assert log == [("read_file", {"path": "a.txt"})]
    assert "needs a person's approval" in program_output(server).splitlines()[0]


def test_program_clock_stands_still_while_a_person_decides(scripted, workspace: Path) -> None:
    """A 2 s program timeout in a 3 s run, a person who answers only after both original deadlines: the
    program still finishes, and so does the run."""
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("run_code", code=PROGRAM), reply("done")])
    never = threading.Event()

    def slow_person(request: ApprovalRequest) -> bool:
        # past both deadlines as they were: the run's, and the program's (it started before this call)
        past = max(request.context.limits.started + 3.0, time.monotonic() + 2.0) + 0.3
        while time.monotonic() < past:
            never.wait(past - time.monotonic())
        return True

    with code_agent(server, recording_tools(log), workspace, approver=slow_person,
                    sandbox_limits=SandboxLimits(timeout=2.0)) as agent:
        result = agent.run("clean", timeout=3.0)
    assert result.stopped == "answer", result.error
    assert program_output(server).splitlines() == ["deleted old.log", "contents of a.txt"]


def test_run_code_itself_can_be_ask_and_then_it_defers(scripted, workspace: Path) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("run_code", code='print(read_file(path="x"))'), reply("ok")])
    with code_agent(server, recording_tools(log), workspace, approval={"run_code": "ask"}) as agent:
        first = agent.run("go")
        assert first.stopped == "approval" and [p.tool for p in first.pending] == ["run_code"] and log == []
        second = agent.resume(first.state(), decisions={first.pending[0].call_id: True})
    assert second.answer == "ok" and log == [("read_file", {"path": "x"})]


def test_telemetry_puts_approval_events_on_the_tool_span(scripted, workspace: Path) -> None:
    """A direct call's span and a program's call (on its run_code span) carry the request and the decision;
    a person's reason is content: left out unless content capture is on."""
    import pytest

    pytest.importorskip("opentelemetry.sdk")
    from test_otel import Otel

    otel = Otel()
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("delete_file", path="a"), call("run_code", code=PROGRAM), reply("done")])
    with code_agent(server, recording_tools(log), workspace, mode="hybrid", direct=["delete_file"],
                    approver=lambda r: "secret reason" if r.where == "run_code" else True,
                    telemetry=otel.settings()) as agent:
        assert agent.run("go").answer == "done"
    direct = otel.named("execute_tool delete_file")[0]
    program = otel.named("execute_tool run_code")[0]
    for span, decision in ((direct, "approved"), (program, "denied")):
        names = [e.name for e in span.events]
        assert names == ["toolmode.approval.requested", "toolmode.approval.decided"], names
        decided = dict(span.events[1].attributes)
        assert (decided["toolmode.approval.decision"], decided["toolmode.approval.by"]) == (decision, "approver")
        assert "toolmode.approval.reason" not in decided
    assert dict(program.events[0].attributes)["toolmode.approval.where"] == "run_code"
    assert log == [("delete_file", {"path": "a"}), ("read_file", {"path": "a.txt"})]
