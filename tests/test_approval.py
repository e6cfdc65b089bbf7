"""Approving tool calls (toolmode.approval): the policy order, an approver deciding, refusals going back to the
model (the tool never ran), edited arguments, the clock held while a person decides, and events in the trace."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from toolmode import Agent, ApprovalDecided, ApprovalRequested, Approved, Denied, tool
from toolmode.approval import ApprovalRequest, ApprovalRules
from toolmode.testing import call, calls, reply


def recording_tools(log: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Tools that record every call they actually run."""

    @tool(approval="ask")
    def delete_file(path: str) -> str:
        """Delete a file."""
        log.append(("delete_file", {"path": path}))
        return f"deleted {path}"

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        log.append(("read_file", {"path": path}))
        return f"contents of {path}"

    return [delete_file, read_file]


def agent_on(server: Any, tools: list[Any], **kwargs: Any) -> Agent:
    return Agent(tools, mode="react", model="m", base_url=server.base_url, **kwargs)


def tool_messages(server: Any, index: int) -> list[str]:
    return [m["content"] for m in server.requests[index]["messages"] if m["role"] == "tool"]


def test_denied_call_never_runs_and_the_model_reads_the_refusal(scripted) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("delete_file", path="notes.txt"), reply("I could not delete it.")])
    seen: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> str:
        seen.append(request)
        return "not today"

    with agent_on(server, recording_tools(log), approver=approver) as agent:
        result = agent.run("delete notes.txt")
    assert result.stopped == "answer" and result.answer == "I could not delete it."
    assert log == []  # the tool never ran
    [request] = seen
    assert (request.tool, request.arguments, request.where, request.step) == ("delete_file", {"path": "notes.txt"},
                                                                              "direct", 1)
    [text] = tool_messages(server, 1)
    assert text.startswith("Refused by the user: delete_file was not run: not today")
    assert result.records[0].calls[0].error is True


def test_approved_call_runs_and_allowed_tools_are_not_asked(scripted) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([calls(("read_file", {"path": "a"}), ("delete_file", {"path": "b"})), reply("done")])
    asked: list[str] = []

    def approver(request: ApprovalRequest) -> bool:
        asked.append(request.tool)
        return True

    with agent_on(server, recording_tools(log), approver=approver) as agent:
        result = agent.run("go")
    assert result.ok
    assert asked == ["delete_file"]  # read_file has no policy: allow, not asked
    assert sorted(log) == [("delete_file", {"path": "b"}), ("read_file", {"path": "a"})]
    assert tool_messages(server, 1) == ["contents of a", "deleted b"]


def test_edited_arguments_run_and_the_trace_records_both(scripted, tmp_path: Path) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("delete_file", path="/etc/passwd"), reply("ok")])
    with agent_on(server, recording_tools(log), approver=lambda r: {"arguments": {"path": "tmp.txt"}},
                  runs_dir=tmp_path) as agent:
        result = agent.run("go")
    assert log == [("delete_file", {"path": "tmp.txt"})]
    assert tool_messages(server, 1) == ["deleted tmp.txt"]
    lines = [json.loads(x) for x in result.trace_path.read_text().splitlines()[1:]]
    [asked] = [x for x in lines if x["kind"] == "approval_request"]
    [decided] = [x for x in lines if x["kind"] == "approval"]
    [ran] = [x for x in lines if x["kind"] == "tool_result"]
    assert asked["arguments"] == {"path": "/etc/passwd"} and asked["waits_for"] == "approver"
    assert (decided["decision"], decided["by"], decided["arguments"]) == ("approved", "approver", {"path": "tmp.txt"})
    assert json.loads(ran["arguments"]) == {"path": "/etc/passwd"}  # the model's call, as it was made
    assert "answer" not in asked  # the stream's handle is not written


def test_policy_order_agent_names_then_tool_then_star_then_allow() -> None:
    @tool(approval="ask")
    def guarded() -> str:
        """Guarded."""
        return ""

    @tool
    def plain() -> str:
        """Plain."""
        return ""

    def policy(name: str, setting: Any, **kw: Any) -> str:
        rules = ApprovalRules(setting, [guarded, plain], **kw)
        return rules.policy(ApprovalRequest(name, {}, "c1", 1))[0]

    assert policy("plain", None) == "allow" and policy("guarded", None) == "ask"
    assert policy("guarded", {"guarded": "allow"}) == "allow"  # named by the agent: first
    assert policy("guarded", {"*": "allow"}) == "ask"  # "*" does not unguard a tool its author marked
    assert policy("plain", {"*": "deny"}) == "deny"
    assert policy("plain", lambda r: None) == "allow"  # no opinion: falls through
    assert policy("plain", lambda r: "ask") == "ask"
    assert policy("plain", None, escalate=True) == "ask" and policy("plain", {"plain": "deny"}, escalate=True) == "deny"
    # a policy that fails refuses the call (fail closed), and says why
    assert ApprovalRules(lambda r: 1 / 0).policy(ApprovalRequest("plain", {}, "c", 1)) == (
        "deny", "the approval policy raised ZeroDivisionError: division by zero")
    with pytest.raises(ValueError, match="approval\\['x'\\] must be 'allow', 'ask' or 'deny'"):
        ApprovalRules({"x": "maybe"})


def test_callable_policy_sees_the_arguments_and_deny_never_runs(scripted) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([calls(("read_file", {"path": "docs/a.md"}), ("read_file", {"path": "secret.env"})),
                       reply("ok")])

    def inside_docs(request: ApprovalRequest) -> str:
        return "allow" if str(request.arguments.get("path", "")).startswith("docs/") else "deny"

    with agent_on(server, recording_tools(log), approval=inside_docs) as agent:
        events = list(agent.stream("read"))
    assert log == [("read_file", {"path": "docs/a.md"})]
    texts = tool_messages(server, 1)
    assert texts[0] == "contents of docs/a.md"
    assert texts[1].startswith("Refused: the approval policy does not allow read_file")
    [decided] = [e for e in events if isinstance(e, ApprovalDecided)]
    assert (decided.decision, decided.by, decided.tool) == ("denied", "rule", "read_file")
    assert not [e for e in events if isinstance(e, ApprovalRequested)]  # a rule's deny asks nobody


def test_nothing_set_means_no_gate_and_no_events(scripted) -> None:
    log: list[tuple[str, dict[str, Any]]] = []

    @tool
    def plain(x: int) -> int:
        """Plain."""
        log.append(("plain", {"x": x}))
        return x

    server = scripted([call("plain", x=1), reply("ok")])
    with agent_on(server, [plain]) as agent:
        events = list(agent.stream("go"))
    assert log == [("plain", {"x": 1})]
    assert not [e for e in events if e.kind.startswith("approval")]


def test_async_approver_under_arun_and_an_approver_that_fails_denies(scripted) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("delete_file", path="a"), reply("one"), call("delete_file", path="b"), reply("two")])

    async def approver(request: ApprovalRequest) -> Approved:
        await asyncio.sleep(0)
        return Approved()

    def broken(request: ApprovalRequest) -> bool:
        raise RuntimeError("approval service down")

    async def main() -> None:
        with agent_on(server, recording_tools(log), approver=approver) as agent:
            assert (await agent.arun("go")).answer == "one"
            assert (await agent.arun("again", approver=broken)).answer == "two"

    asyncio.run(main())
    assert log == [("delete_file", {"path": "a"})]
    assert "the approver failed (RuntimeError: approval service down)" in tool_messages(server, 3)[0]


def test_run_deadline_stands_still_while_a_person_decides(scripted) -> None:
    """timeout=2 s, a person who answers only after the run's original deadline: the run still ends with its
    answer (the wait was held)."""
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("delete_file", path="a"), reply("done")])
    never = threading.Event()

    def slow_person(request: ApprovalRequest) -> bool:
        past = request.context.limits.started + 2.0 + 0.3  # the deadline the run had before it was held
        while time.monotonic() < past:
            never.wait(past - time.monotonic())
        return True

    with agent_on(server, recording_tools(log), approver=slow_person) as agent:
        result = agent.run("go", timeout=2.0)
    assert result.stopped == "answer", result.error
    assert log == [("delete_file", {"path": "a"})]


def test_count_approval_wait_and_approval_timeout(scripted) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    never = threading.Event()
    server = scripted([call("delete_file", path="a"), reply("after timeout"), call("delete_file", path="b")])
    with agent_on(server, recording_tools(log), approver=lambda r: never.wait(30),
                  approval_timeout=0.3) as agent:
        result = agent.run("go")
    assert result.answer == "after timeout" and log == []
    assert "no decision within 0.3 s" in tool_messages(server, 1)[0]
    with agent_on(server, recording_tools(log), approver=lambda r: never.wait(30),
                  count_approval_wait=True) as agent:
        result = agent.run("go", timeout=0.5)
    never.set()
    assert (result.stopped, result.limit) == ("budget", "timeout") and log == []


def test_bad_approval_settings_are_clear_errors(scripted) -> None:
    server = scripted([])
    with pytest.raises(ValueError, match="approver= must be a callable"):
        agent_on(server, [], approver="yes")
    with pytest.raises(ValueError, match="approval_timeout must be a positive number"):
        agent_on(server, [], approval_timeout=0)
    with pytest.raises(ValueError, match="approval= must be a mapping"):
        agent_on(server, [], approval="ask")
    with pytest.raises(TypeError, match="approval must be 'allow', 'ask' or 'deny'"):
        tool(lambda: 1, name="x", approval="sometimes")
    assert Denied("r") != Approved()
