"""Approval from `stream()` / `astream()`: the consumer answers the typed ApprovalRequested event."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from test_approval import agent_on, recording_tools, tool_messages
from toolmode import ApprovalDecided, ApprovalRequested, RunEnd
from toolmode.testing import call, calls, reply


def test_stream_consumer_approves_one_call_and_denies_another(scripted) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([calls(("delete_file", {"path": "keep.txt"}), ("delete_file", {"path": "old.txt"})),
                       reply("done")])
    requests: list[ApprovalRequested] = []
    with agent_on(server, recording_tools(log)) as agent:
        for event in agent.stream("tidy up"):
            if isinstance(event, ApprovalRequested):
                requests.append(event)
                assert event.waits_for == "stream" and event.where == "direct"
                if event.arguments["path"] == "keep.txt":
                    event.deny("I still need it")
                else:
                    event.approve()
            elif isinstance(event, RunEnd):
                result = event.result
    assert result is not None and result.answer == "done"
    assert sorted(r.arguments["path"] for r in requests) == ["keep.txt", "old.txt"]
    assert log == [("delete_file", {"path": "old.txt"})]  # the denied call never ran
    texts = tool_messages(server, 1)
    assert texts[0].startswith("Refused by the user: delete_file was not run: I still need it")
    assert texts[1] == "deleted old.txt"
    with pytest.raises(ValueError, match="decided already"):
        requests[0].approve()


def test_stream_approve_with_edited_arguments(scripted) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("delete_file", path="*"), reply("ok")])
    decided: list[ApprovalDecided] = []
    with agent_on(server, recording_tools(log)) as agent:
        for event in agent.stream("go"):
            if isinstance(event, ApprovalRequested):
                event.approve(arguments={"path": "one.txt"})
            if isinstance(event, ApprovalDecided):
                decided.append(event)
    assert log == [("delete_file", {"path": "one.txt"})]
    [d] = decided
    assert (d.decision, d.by, d.arguments) == ("approved", "stream", {"path": "one.txt"})


def test_astream_consumer_answers_from_its_task(scripted) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("delete_file", path="a"), reply("first"), call("delete_file", path="b"),
                       reply("second")])

    async def main() -> list[str | None]:
        answers = []
        with agent_on(server, recording_tools(log)) as agent:
            for deny in (False, True):
                async for event in agent.astream("go"):
                    if isinstance(event, ApprovalRequested):
                        event.deny("no") if deny else event.approve()
                    if isinstance(event, RunEnd):
                        answers.append(event.answer)
        return answers

    assert asyncio.run(main()) == ["first", "second"]
    assert log == [("delete_file", {"path": "a"})]


def test_leaving_the_stream_while_a_decision_is_pending_cancels_the_run(scripted) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    server = scripted([call("delete_file", path="a"), reply("never")])
    with agent_on(server, recording_tools(log)) as agent:
        stream = agent.stream("go")
        for event in stream:
            if isinstance(event, ApprovalRequested):
                break
        stream.close()  # the consumer walks away: the run is cancelled, the call never runs
        result = agent.run("go again", approver=lambda r: False)  # the agent is still usable
    assert log == [] and result.answer == "never"
