"""Typed events: `stream()` / `astream()` yield the same events the JSONL trace and the console consume."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from pathlib import Path
from typing import Any

from rich.console import Console

import toolmode
from echo_agent import make
from toolmode import (
    ReasoningDelta,
    RunEnd,
    RunStart,
    StepUsage,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolsSent,
    tool,
)
from toolmode.console import ConsoleSink
from toolmode.testing import call, calls, fault, reply
from toolmode.trace import MemorySink


def test_stream_yields_typed_events_in_order_and_the_result_last(scripted) -> None:
    server = scripted([calls(("echo", {"text": "a"}), ("echo", {"text": "b"})), reply("done")])
    with make(server) as agent:
        events = list(agent.stream("go"))
    kinds = [e.kind for e in events]
    assert kinds[:5] == ["run_start", "message", "tools", "reply", "message"]
    assert sorted(kinds[5:9]) == ["tool_call", "tool_call", "tool_result", "tool_result"]
    assert kinds[9:] == ["message", "message", "reply", "message", "run_end"]
    start, tools, first = [e for e in events if e.kind != "message"][:3]
    assert isinstance(start, RunStart) and start.task == "go" and start.tools_sent == ["echo"]
    assert isinstance(tools, ToolsSent) and tools.names == ["echo"]
    assert isinstance(first, StepUsage) and [c["name"] for c in first.tool_calls] == ["echo", "echo"]
    assert first.usage["prompt_tokens"] > 0
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert sorted(e.result for e in finished) == ["a", "b"]
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert {e.id for e in started} == {e.id for e in finished}
    end = events[-1]
    assert isinstance(end, RunEnd) and end.result is not None
    assert (end.result.answer, end.result.stopped, end.stopped) == ("done", "answer", "answer")
    assert "result" not in end.to_dict()  # the RunResult object is not written to the trace


def test_trace_file_holds_the_same_events_as_the_stream(scripted, tmp_path: Path) -> None:
    server = scripted([call("echo", text="hi"), reply("ok")])
    with make(server, runs_dir=tmp_path / "runs") as agent:
        events = list(agent.stream("go"))
    path = events[-1].result.trace_path
    header, *lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert (header["kind"], header["version"]) == ("trajectory", 2)
    assert [x["kind"] for x in lines] == [e.kind for e in events]
    assert [x["t"] for x in lines] == [round(e.t, 4) for e in events]


def test_streaming_model_publishes_text_and_reasoning_deltas(scripted, tmp_path: Path) -> None:
    server = scripted([reply("The answer is forty-two, as computed.", reasoning="Think: six times seven.")])
    with make(server, stream=True, runs_dir=tmp_path) as agent:
        events = list(agent.stream("q"))
    text = [e for e in events if isinstance(e, TextDelta)]
    thought = [e for e in events if isinstance(e, ReasoningDelta)]
    assert len(text) > 1 and "".join(e.text for e in text) == "The answer is forty-two, as computed."
    assert "".join(e.text for e in thought) == "Think: six times seven."
    assert all(e.step == 1 for e in text + thought)
    # deltas come before the reply that holds the whole text, and stay out of the trace file
    assert max(events.index(e) for e in text) < [e.kind for e in events].index("reply")
    kinds = [json.loads(x)["kind"] for x in events[-1].result.trace_path.read_text().splitlines()]
    assert "text_delta" not in kinds and "reply" in kinds


def test_console_is_a_consumer_of_the_events(scripted) -> None:
    server = scripted([call("echo", text="hi"), reply("ok")])
    out = io.StringIO()
    sink = ConsoleSink(Console(file=out, width=200, highlight=False))
    with make(server, sinks=[sink]) as agent:
        agent.run("go")
    text = out.getvalue()
    assert "step 1" in text and "→ echo" in text and "← echo" in text and "ok" in text


class RunEnded:
    """A sink whose `wait` returns once the run has ended (its run_end is published)."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def emit(self, event: Any) -> None:
        if event.kind == "run_end":
            self._event.set()

    def close(self) -> None:
        pass

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)


def test_leaving_a_stream_early_cancels_the_run(scripted) -> None:
    release = threading.Event()

    @tool
    def wait() -> str:
        """Wait until released."""
        release.wait(10)
        return "released"

    server = scripted([call("wait"), reply("never")])
    memory, ended = MemorySink(), RunEnded()
    with make(server, tools=[wait], sinks=[memory, ended]) as agent:
        stream = agent.stream("go")
        for event in stream:
            if event.kind == "tool_call":
                break
        stream.close()  # what leaving a for loop early does to a generator
        assert ended.wait(60), "the run did not end"
    release.set()
    [end] = memory.of("run_end")
    assert end.data["stopped"] == "cancelled"
    assert len(server.requests) == 1  # the cancelled run made no second request


def test_leaving_a_stream_during_a_slow_model_request_ends_the_run_at_once(scripted) -> None:
    server = scripted([call("echo", text="1"), fault("slow", delay=6, then=call("echo", text="2")), reply("never")])
    memory, ended = MemorySink(), RunEnded()
    with make(server, sinks=[memory, ended]) as agent:
        for event in agent.stream("go"):
            if isinstance(event, ToolCallFinished):
                break
        assert ended.wait(60), "the run did not end"
    [end] = memory.of("run_end")
    assert end.data["stopped"] == "cancelled"
    assert [e.data["arguments"] for e in memory.of("tool_call")] == ['{"text": "1"}']
    assert len(memory.of("reply")) == 1  # ended during the slow request, not after its reply


def test_astream_yields_the_same_events(scripted) -> None:
    server = scripted([call("echo", text="x"), reply("fine")])

    async def main() -> list[Any]:
        with make(server) as agent:
            return [e async for e in agent.astream("go")]

    events = asyncio.run(main())
    assert [e.kind for e in events] == ["run_start", "message", "tools", "reply", "message", "tool_call",
                                        "tool_result", "message", "reply", "message", "run_end"]
    assert events[-1].result.answer == "fine"


def test_event_types_are_exported_from_toolmode() -> None:
    for name in ("RunStart", "TextDelta", "ReasoningDelta", "ToolCallStarted", "ToolCallFinished", "StepUsage",
                 "RunEnd", "Notice", "Retry", "ErrorEvent", "ToolsSent", "BaseEvent"):
        assert name in toolmode.__all__ and hasattr(toolmode, name)

