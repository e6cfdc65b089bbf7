"""OpenTelemetry export (toolmode[otel]): spans and metrics of real runs against the scripted model server,
read back from the SDK's in-memory exporter and metric reader."""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import asdict
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from echo_agent import echo, make
from toolmode import Agent, StepUsage, TelemetrySettings, tool
from toolmode.models.pricing import PriceTable
from toolmode.sandbox import SandboxLimits
from toolmode.testing import call, calls, fault, reply
from toolmode.trace import MemorySink

PRICES = PriceTable({"models": {"m": {"price": {"cache_hit": 0.07, "cache_miss": 0.27, "output": 1.1}}}})


class Otel:
    """Fresh SDK providers with in-memory readers, and what they collected."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def settings(self, **kwargs: Any) -> TelemetrySettings:
        return TelemetrySettings(tracer_provider=self.tracer_provider, meter_provider=self.meter_provider, **kwargs)

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return sorted((s for s in self.spans() if s.name.startswith(prefix)), key=lambda s: s.start_time)

    def points(self, metric: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        return [p for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
                if m.name == metric for p in m.data.data_points]


@pytest.fixture
def otel() -> Otel:
    return Otel()


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def all_text(spans: list[ReadableSpan]) -> str:
    """Every attribute, event and status text of the spans, as one string."""
    parts = []
    for s in spans:
        parts += [f"{k}={v}" for k, v in s.attributes.items()]
        parts += [f"{e.name} {dict(e.attributes)}" for e in s.events]
        parts.append(s.status.description or "")
    return "\n".join(parts)


def test_a_react_run_gives_one_span_per_run_request_and_call_in_the_conventions_form(scripted, otel) -> None:
    both_running = threading.Barrier(2, timeout=20)

    @tool
    def slow_echo(text: str) -> str:
        """Return the text once the other call is running too."""
        both_running.wait()  # only returns when the two calls run at the same time
        return text

    server = scripted([calls(("slow_echo", {"text": "a"}), ("slow_echo", {"text": "b"})), reply("done")])
    events = MemorySink()
    with make(server, tools=[slow_echo], telemetry=otel.settings(), sinks=[events], prices=PRICES) as agent:
        result = agent.run("go")
    assert result.answer == "done"

    (run,) = otel.named("invoke_agent")
    chats = otel.named("chat ")
    tools = otel.named("execute_tool ")
    assert len(otel.spans()) == 5
    assert [s.name for s in chats] == ["chat m", "chat m"] and [s.name for s in tools] == ["execute_tool slow_echo"] * 2
    assert run.kind == SpanKind.INTERNAL and run.parent is None
    assert {s.kind for s in chats} == {SpanKind.CLIENT} and {s.kind for s in tools} == {SpanKind.INTERNAL}
    assert {parent_of(s) for s in chats + tools} == {run.context.span_id}
    assert len({s.context.trace_id for s in otel.spans()}) == 1
    assert {(s.instrumentation_scope.name, s.instrumentation_scope.schema_url) for s in otel.spans()} == {
        ("toolmode", "https://opentelemetry.io/schemas/1.41.0")}
    assert {s.status.status_code for s in otel.spans()} == {StatusCode.UNSET}

    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.provider.name"] == "custom" and run.attributes["gen_ai.request.model"] == "m"
    assert run.attributes["server.address"] == "127.0.0.1" and run.attributes["server.port"] == server.port
    assert run.attributes["toolmode.mode"] == "react" and run.attributes["toolmode.stopped"] == "answer"
    first, second = chats
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert first.attributes["gen_ai.response.model"] == "m" and first.attributes["toolmode.step"] == 1
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert first.attributes["toolmode.request.attempts"] == 1
    ids = {c["id"] for c in events.of("reply")[0].tool_calls}
    assert {s.attributes["gen_ai.tool.call.id"] for s in tools} == ids
    for s in tools:
        assert s.attributes["gen_ai.operation.name"] == "execute_tool"
        assert s.attributes["gen_ai.tool.name"] == "slow_echo" and s.attributes["gen_ai.tool.type"] == "function"
        assert s.attributes["gen_ai.tool.description"] == "Return the text once the other call is running too."

    # timestamps: a chat span runs from the request's sending to its reply event, so it holds the client's own
    # timing of the request (`seconds`); the calls run after it, in parallel
    replies = [e for e in events.events if isinstance(e, StepUsage)]
    for span, event in zip(chats, replies, strict=True):
        assert abs((span.end_time - span.start_time) / 1e9 - (event.t - event.sent_at)) < 1e-6
        assert (span.end_time - span.start_time) / 1e9 >= event.seconds - 1e-6
    a, b = tools
    assert first.end_time <= a.start_time and first.end_time <= b.start_time
    assert a.start_time < b.end_time and b.start_time < a.end_time  # they overlap: both waited on the barrier
    assert max(a.end_time, b.end_time) <= second.start_time and second.end_time <= run.end_time
    assert run.start_time <= first.start_time


def test_usage_and_cost_on_the_spans_and_metrics_match_the_result_exactly(scripted, otel) -> None:
    server = scripted([call("echo", text="x"), call("echo", text="y"), reply("done")])
    with make(server, telemetry=otel.settings(), prices=PRICES) as agent:
        result = agent.run("go")
    assert result.cost is not None and result.cost > 0 and result.usage.cached_tokens > 0
    chats = sorted(otel.named("chat "), key=lambda s: s.attributes["toolmode.step"])
    assert len(chats) == result.usage.requests == 3

    def total(key: str) -> int:
        return sum(s.attributes[key] for s in chats)

    assert total("gen_ai.usage.input_tokens") == result.usage.prompt_tokens
    assert total("gen_ai.usage.output_tokens") == result.usage.completion_tokens
    assert total("gen_ai.usage.cache_read.input_tokens") == result.usage.cached_tokens
    assert sum(s.attributes["toolmode.cost.usd"] for s in chats) == result.cost  # the same sum, in step order
    for record, span in zip(result.records, chats, strict=True):
        assert span.attributes["toolmode.cost.usd"] == record.cost
    (run,) = otel.named("invoke_agent")
    assert run.attributes["gen_ai.usage.input_tokens"] == result.usage.prompt_tokens
    assert run.attributes["gen_ai.usage.output_tokens"] == result.usage.completion_tokens
    assert run.attributes["gen_ai.usage.cache_read.input_tokens"] == result.usage.cached_tokens
    assert run.attributes["toolmode.cost.usd"] == result.cost
    assert run.attributes["toolmode.steps"] == 3 and run.attributes["toolmode.requests"] == 3

    tokens = {p.attributes["gen_ai.token.type"]: p for p in otel.points("gen_ai.client.token.usage")}
    assert tokens["input"].sum == result.usage.prompt_tokens and tokens["input"].count == 3
    assert tokens["output"].sum == result.usage.completion_tokens
    assert tokens["input"].attributes["gen_ai.provider.name"] == "custom"
    assert tokens["input"].attributes["gen_ai.request.model"] == "m"
    assert tokens["input"].explicit_bounds[:3] == (1, 4, 16)
    durations = {p.attributes["gen_ai.operation.name"]: p for p in otel.points("gen_ai.client.operation.duration")}
    assert durations["chat"].count == 3 and durations["invoke_agent"].count == 1
    assert abs(durations["chat"].sum - sum(r.seconds for r in result.records)) < 1e-6
    assert durations["chat"].explicit_bounds[:2] == (0.01, 0.02)


def test_a_failed_tool_call_is_an_error_span_and_the_run_goes_on(scripted, otel) -> None:
    @tool
    def divide(a: int, b: int) -> float:
        """Divide a by b."""
        return a / b

    server = scripted([call("divide", a=1, b=0), reply("cannot divide by zero")])
    with make(server, tools=[divide], telemetry=otel.settings()) as agent:
        result = agent.run("1/0?")
    assert result.answer == "cannot divide by zero"
    (span,) = otel.named("execute_tool divide")
    assert span.status.status_code == StatusCode.ERROR
    assert span.attributes["error.type"] == "ZeroDivisionError"
    assert "division by zero" not in all_text(otel.spans())  # the message is content: off by default
    (run,) = otel.named("invoke_agent")
    assert run.status.status_code == StatusCode.UNSET


def test_a_model_error_is_an_error_chat_span_covering_the_failed_request(scripted, otel) -> None:
    server = scripted([fault("status", status=400, message="bad request body")])
    events = MemorySink()
    with make(server, telemetry=otel.settings(), sinks=[events]) as agent:
        result = agent.run("go")
    assert result.stopped == "error"
    (chat,) = otel.named("chat ")
    (run,) = otel.named("invoke_agent")
    (error,) = events.of("error")
    assert chat.status.status_code == StatusCode.ERROR and chat.attributes["error.type"] == "ModelError"
    assert error.error_type == "ModelError" and error.seconds is not None
    assert abs((chat.end_time - chat.start_time) / 1e9 - error.seconds) < 1e-6
    assert "gen_ai.usage.input_tokens" not in chat.attributes
    assert run.status.status_code == StatusCode.ERROR and run.attributes["error.type"] == "ModelError"
    (duration,) = [p for p in otel.points("gen_ai.client.operation.duration")
                   if p.attributes["gen_ai.operation.name"] == "chat"]
    assert duration.attributes["error.type"] == "ModelError"
    assert otel.points("gen_ai.client.token.usage") == []


def test_a_retried_request_is_one_chat_span_with_its_retries_as_events(scripted, otel) -> None:
    server = scripted([fault("429", retry_after=0.05), reply("after the wait")])
    with make(server, telemetry=otel.settings()) as agent:
        result = agent.run("go")
    assert result.answer == "after the wait"
    (chat,) = otel.named("chat ")
    assert chat.attributes["toolmode.request.attempts"] == 2
    (retry,) = chat.events
    assert retry.name == "toolmode.retry" and retry.attributes["toolmode.retry.attempt"] == 1
    assert chat.start_time <= retry.timestamp <= chat.end_time


def test_a_cancelled_run_ends_every_span_and_leaves_no_current_span_behind(scripted, otel) -> None:
    started, release = threading.Event(), threading.Event()

    @tool
    def wait_here() -> str:
        """Block until released."""
        started.set()
        release.wait(30)
        return "released"

    server = scripted([call("wait_here"), reply("never")])
    with make(server, tools=[wait_here], telemetry=otel.settings()) as agent:
        canceller = threading.Thread(target=lambda: started.wait(30) and agent.cancel())
        canceller.start()
        try:
            result = agent.run("go")
        finally:
            release.set()
            canceller.join()
    assert result.stopped == "cancelled"
    (tool_span,) = otel.named("execute_tool wait_here")
    (run,) = otel.named("invoke_agent")
    assert tool_span.status.status_code == StatusCode.ERROR and tool_span.attributes["error.type"] == "cancelled"
    assert tool_span.end_time == run.end_time
    assert run.status.status_code == StatusCode.ERROR and run.attributes["error.type"] == "cancelled"
    assert not trace.get_current_span().get_span_context().is_valid  # the run's span was detached


def test_run_code_gets_a_sandbox_span_with_its_tier_and_limits_under_its_tool_span(scripted, otel, workspace) -> None:
    limits = SandboxLimits(timeout=7, memory_mb=640, max_output=3000)
    server = scripted([call("run_code", code="print(echo('hi'))"), call("run_code", code="print(1 / 0)"),
                       reply("done")])
    with Agent(tools=[echo], mode="code", model="m", base_url=server.base_url, workspace=workspace,
               sandbox_limits=limits, telemetry=otel.settings()) as agent:
        tier = agent.mode.sandbox.policy
        result = agent.run("go")
    assert result.answer == "done"
    tools = otel.named("execute_tool run_code")
    boxes = otel.named("toolmode.sandbox.run")
    assert len(tools) == len(boxes) == 2
    for tool_span, box in zip(tools, boxes, strict=True):
        assert parent_of(box) == tool_span.context.span_id and box.kind == SpanKind.INTERNAL
        assert tool_span.start_time <= box.start_time and box.end_time <= tool_span.end_time
        assert box.attributes["toolmode.sandbox.tier"] == tier
        for name, value in asdict(limits).items():
            if value is not None:
                assert box.attributes[f"toolmode.sandbox.limit.{name}"] == value
    ok, failed = boxes
    assert ok.status.status_code == StatusCode.UNSET and ok.attributes["toolmode.sandbox.tool_calls"] == 1
    assert failed.status.status_code == StatusCode.ERROR and failed.attributes["error.type"] == "ZeroDivisionError"
    assert tools[1].status.status_code == StatusCode.ERROR and tools[1].attributes["error.type"] == "ZeroDivisionError"


# words no id, port or count can contain by chance (ids are hex, the rest digits)
SECRET_TASK = "the launch word is zebraquartz"
SECRET_ARG = "argument-payload-wolfram"


def _content_run(scripted: Any, otel: Otel, **settings: Any) -> Any:
    server = scripted([call("echo", text=SECRET_ARG), reply("the answer is yellowjacket")])
    with make(server, telemetry=otel.settings(**settings), instructions="be brief, kumquat") as agent:
        return agent.run(SECRET_TASK)


CONTENT_KEYS = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
                "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.tool.definitions"}


def test_content_is_not_captured_by_default(scripted, otel, monkeypatch) -> None:
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    _content_run(scripted, otel)
    spans = otel.spans()
    assert len(spans) == 4
    assert not CONTENT_KEYS & {k for s in spans for k in s.attributes}
    text = all_text(spans)
    for secret in ("zebraquartz", "wolfram", "yellowjacket", "kumquat"):
        assert secret not in text


def test_content_is_captured_with_the_setting_in_the_conventions_shapes(scripted, otel) -> None:
    _content_run(scripted, otel, capture_content=True)
    (run,) = otel.named("invoke_agent")
    first, second = otel.named("chat ")
    (tool_span,) = otel.named("execute_tool ")
    assert json.loads(run.attributes["gen_ai.system_instructions"]) == [{"type": "text", "content": "be brief, kumquat"}]
    assert json.loads(run.attributes["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": SECRET_TASK}]}]
    assert json.loads(run.attributes["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "the answer is yellowjacket"}],
         "finish_reason": "stop"}]
    sent = json.loads(second.attributes["gen_ai.input.messages"])
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    (call_part,) = sent[2]["parts"]
    assert call_part["type"] == "tool_call" and call_part["arguments"] == {"text": SECRET_ARG}
    assert sent[3]["parts"] == [{"type": "tool_call_response", "id": call_part["id"], "response": SECRET_ARG}]
    out = json.loads(first.attributes["gen_ai.output.messages"])
    assert out[0]["finish_reason"] == "tool_call" and out[0]["parts"][0]["name"] == "echo"
    assert json.loads(first.attributes["gen_ai.tool.definitions"]) == [{"type": "function", "name": "echo"}]
    assert json.loads(tool_span.attributes["gen_ai.tool.call.arguments"]) == {"text": SECRET_ARG}
    assert tool_span.attributes["gen_ai.tool.call.result"] == SECRET_ARG


def test_content_capture_follows_the_conventions_variable_unless_the_setting_says(scripted, otel, monkeypatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    _content_run(scripted, otel)
    assert {k for s in otel.spans() for k in s.attributes} >= CONTENT_KEYS
    otel.exporter.clear()
    _content_run(scripted, otel, capture_content=False)
    assert not CONTENT_KEYS & {k for s in otel.spans() for k in s.attributes}


def test_captured_content_has_credentials_redacted_as_in_the_trace_files(scripted, otel) -> None:
    key = "sk-" + "a1b2c3d4" * 5
    server = scripted([call("echo", text=f"use {key}"), reply(f"the key was {key}")])
    with make(server, telemetry=otel.settings(capture_content=True)) as agent:
        agent.run(f"remember {key}")
    text = all_text(otel.spans())
    assert key not in text and "[REDACTED]" in text
    (tool_span,) = otel.named("execute_tool ")
    assert json.loads(tool_span.attributes["gen_ai.tool.call.arguments"]) == {"text": "use [REDACTED]"}


def test_spans_nest_under_the_applications_span_and_a_tools_own_spans_under_its_call(scripted, otel) -> None:
    tracer = otel.tracer_provider.get_tracer("app")

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        with tracer.start_as_current_span("app.lookup"):
            return key.upper()

    server = scripted([call("lookup", key="k"), reply("K")])
    agent = make(server, tools=[lookup], telemetry=otel.settings(agent_name="support"))
    with agent, tracer.start_as_current_span("app.request") as outer:
        agent.run("go")
    (run,) = otel.named("invoke_agent")
    (tool_span,) = otel.named("execute_tool lookup")
    (inner,) = otel.named("app.lookup")
    assert run.name == "invoke_agent support" and run.attributes["gen_ai.agent.name"] == "support"
    assert parent_of(run) == outer.get_span_context().span_id
    assert parent_of(inner) == tool_span.context.span_id


def test_a_chat_session_is_one_conversation_id_over_its_turns(scripted, otel) -> None:
    server = scripted([reply("one"), reply("two")])
    with make(server, telemetry=otel.settings()) as agent, agent.chat() as session:
        session.send("first")
        session.send("second")
    runs = otel.named("invoke_agent")
    assert len(runs) == 2
    assert len({s.attributes["gen_ai.conversation.id"] for s in runs}) == 1
    assert len({s.context.trace_id for s in runs}) == 2  # each turn is its own trace


class BrokenTracerProvider(TracerProvider):
    """A provider whose spans cannot be started (stands for any failure inside telemetry)."""

    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        tracer = super().get_tracer(*args, **kwargs)

        def refuse(*a: Any, **k: Any) -> Any:
            raise RuntimeError("exporter on fire")

        tracer.start_span = refuse  # type: ignore[method-assign]
        return tracer


def test_a_failure_inside_telemetry_never_breaks_the_run(scripted, otel, caplog) -> None:
    server = scripted([call("echo", text="x"), reply("done")])
    settings = TelemetrySettings(tracer_provider=BrokenTracerProvider(), meter_provider=otel.meter_provider)
    with caplog.at_level(logging.WARNING, logger="toolmode.otel"), make(server, telemetry=settings) as agent:
        result = agent.run("go")
    assert result.answer == "done"
    assert len([r for r in caplog.records if r.name == "toolmode.otel"]) == 1  # said once, then quiet


class RefusingMeterProvider(MeterProvider):
    """A provider that cannot even hand out a meter."""

    def get_meter(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no meters today")


def test_a_provider_that_fails_at_once_costs_the_telemetry_not_the_run(scripted, otel, caplog) -> None:
    server = scripted([call("echo", text="x"), reply("done")])
    settings = TelemetrySettings(tracer_provider=otel.tracer_provider, meter_provider=RefusingMeterProvider())
    with caplog.at_level(logging.WARNING, logger="toolmode.otel"), make(server, telemetry=settings) as agent:
        result = agent.run("go")
    assert result.answer == "done"
    assert otel.spans() == []
    assert [r.getMessage() for r in caplog.records if r.name == "toolmode.otel"] == [
        "toolmode telemetry is off for this run: the providers failed"]


def test_telemetry_false_or_an_agent_without_it_makes_no_spans(scripted, otel) -> None:
    server = scripted([reply("a")])
    with make(server, telemetry=False) as agent:
        agent.run("go")
    assert otel.spans() == []


def test_a_bad_telemetry_value_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="telemetry must be"):
        Agent(model="m", base_url="http://127.0.0.1:9/v1", telemetry="yes")


def test_telemetry_is_an_output_setting_and_the_flat_keyword_conflicts_with_the_group(scripted, otel) -> None:
    from toolmode import OutputSettings, SettingsConflict

    server = scripted([reply("a")])
    with make(server, output=OutputSettings(telemetry=otel.settings())) as agent:
        assert agent.run("go").answer == "a"
    assert [s.name for s in otel.named("invoke_agent")] == ["invoke_agent"]
    with pytest.raises(SettingsConflict, match="telemetry"):
        make(server, output=OutputSettings(), telemetry=True)
    with pytest.raises(ValueError, match="telemetry must be"):
        OutputSettings(telemetry="yes")


def test_the_conversation_as_sent_reaches_the_sinks_but_the_trace_file_only_once(scripted, otel, tmp_path) -> None:
    from toolmode.trace import read

    server = scripted([call("echo", text="hi"), call("echo", text="again"), reply("done")])
    memory = MemorySink()
    with make(server, sinks=[memory], runs_dir=tmp_path, telemetry=otel.settings(capture_content=True)) as agent:
        result = agent.run("go")
    replies = [e for e in memory.events if isinstance(e, StepUsage)]
    assert [e.messages for e in replies] == [r["messages"] for r in server.requests]  # exactly as each request sent it
    for e in replies:
        assert e.sent_at is not None and e.sent_at <= e.t - e.seconds  # sent before the client began timing it
    (path,) = tmp_path.iterdir()
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    written = [line for line in lines if line["kind"] == "reply"]
    assert [line["sent_at"] for line in written] == [e.sent_at for e in replies]  # written: a float's repr
    assert all("messages" not in line for line in written)  # the trace has them once, as `message` events
    assert len([line for line in lines if line["kind"] == "message"]) == len(result.messages)
    assert [r.messages for r in read(path).runs[0].requests] == [r["messages"] for r in server.requests]
    chats = otel.named("chat ")
    assert [json.loads(s.attributes["gen_ai.input.messages"])[-1]["role"] for s in chats] == ["user", "tool", "tool"]
