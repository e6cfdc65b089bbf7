"""Tool-call arguments no parser should take whole: nested 100,000 deep, or a number of 5,000 digits.

Each comes from the scripted server as a native call (and inside react's `call_tool` proxy). Every place
that parses a call's arguments (the run, the repeated-call policy, the proxy tool, telemetry's content
capture) reads them through `toolmode.bounded`: the model gets one clear error for the call, the tool is
never called, the run goes on to its answer, and the trace keeps every step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolmode import Agent, trace
from toolmode.testing import reply

DEEP = "[" * 100_000
LONG_NUMBER = "9" * 5_000
CASES = {
    "deep": (DEEP, "nested more than 100 levels deep"),
    "long number": (LONG_NUMBER, "Exceeds the limit (4300 digits)"),
    "long number in an object": ('{"x": ' + LONG_NUMBER + "}", "Exceeds the limit (4300 digits)"),
}


def native(name: str, arguments: str) -> dict[str, Any]:
    """A reply with one native call whose arguments are sent verbatim."""
    return {"content": None, "tool_calls": [{"name": name, "arguments": arguments}]}


def recording_echo() -> tuple[Any, list[int]]:
    """An `echo` tool and the list of the calls it got."""
    seen: list[int] = []

    def echo(x: int = 0) -> str:
        """Return x."""
        seen.append(x)
        return str(x)

    return echo, seen


def run_agent(scripted, tmp_path: Path, script: list[dict[str, Any]], **options: Any):
    echo, seen = recording_echo()
    server = scripted(script)
    # act_first off: these runs end with "done" after calls that all failed, which act_first would send back once
    options.setdefault("act_first", "off")
    with Agent([echo], base_url=server.base_url, model="m", runs_dir=tmp_path / "runs", **options) as agent:
        result = agent.run("use echo")
    return result, seen, server


@pytest.mark.parametrize("case", CASES)
def test_a_native_call_with_hostile_arguments_gets_an_error_and_the_run_goes_on(scripted, tmp_path: Path,
                                                                                case: str) -> None:
    arguments, said = CASES[case]
    # the same call twice: the repeated-call policy compares the two calls' arguments too
    result, seen, server = run_agent(scripted, tmp_path, [native("echo", arguments), native("echo", arguments),
                                                          reply("done")])
    assert result.stopped == "answer" and result.answer == "done", result.error
    assert seen == []  # the tool never saw them
    results = [c.result for r in result.records for c in r.calls]
    assert len(results) == 2
    for text in results:
        assert text.startswith("Error: the arguments of echo are not valid JSON (") and said in text
    assert "you already made this exact call once before" in results[1]  # compared as text: not parsed
    assert len(server.requests) == 3
    # the tool results went back to the model, and the trace on disk holds the whole conversation
    sent = server.requests[2]["messages"]
    assert [m["content"] for m in sent if m["role"] == "tool"] == results
    (path,) = (tmp_path / "runs").iterdir()
    recorded = trace.read(path)
    assert recorded.messages == result.messages
    assert [r.messages for r in recorded.runs[0].requests] == [r["messages"] for r in server.requests]


@pytest.mark.parametrize("case", CASES)
def test_call_tool_with_hostile_arguments_gets_an_error(scripted, tmp_path: Path, case: str) -> None:
    arguments, said = CASES[case]
    proxied = json.dumps({"name": "echo", "arguments": arguments})  # the object as a JSON string, as models send
    result, seen, _ = run_agent(scripted, tmp_path, [native("call_tool", proxied), reply("done")],
                                search="proxy", visible=[])
    assert result.stopped == "answer", result.error
    assert seen == []
    (text,) = [c.result for r in result.records for c in r.calls]
    assert text.startswith("Error: ValueError: call_tool: arguments is not a JSON object (") and said in text


@pytest.mark.parametrize("case", ["deep", "long number"])
def test_telemetry_with_content_capture_records_hostile_arguments_as_text(scripted, tmp_path: Path,
                                                                          case: str) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from toolmode import OutputSettings, TelemetrySettings

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    arguments, _ = CASES[case]
    settings = TelemetrySettings(capture_content=True, tracer_provider=provider)
    echo, _ = recording_echo()
    server = scripted([native("echo", arguments), reply("done")])
    with Agent([echo], base_url=server.base_url, model="m", output=OutputSettings(telemetry=settings),
               act_first="off") as agent:  # the run ends with "done" after a failed call (see run_agent)
        assert agent.run("use echo").stopped == "answer"
    chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]
    assert len(chats) == 2  # the telemetry did not drop a span on the arguments
    out = json.loads(chats[0].attributes["gen_ai.output.messages"])
    assert out[0]["parts"][0] == {"type": "tool_call", "id": out[0]["parts"][0]["id"], "name": "echo",
                                  "arguments": arguments}  # not JSON within bounds: the raw text


def test_a_trace_line_nested_too_deep_is_refused_in_one_line(tmp_path: Path) -> None:
    from toolmode.trajectory import TraceFormatError

    path = tmp_path / "t.jsonl"
    header = json.dumps({"kind": "trajectory", "version": 2, "toolmode": "0", "started": "x"})
    path.write_text(f"{header}\n{DEEP}\n" + '{"kind": "notice", "t": 0, "message": "m"}\n', encoding="utf-8")
    with pytest.raises(TraceFormatError, match="line 2 is not JSON"):
        trace.read(path)
