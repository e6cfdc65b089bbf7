"""`OtelSink`: a trace sink that turns a run's events into OpenTelemetry spans and metrics.

It knows nothing the events do not say. Per run: an `invoke_agent` span (INTERNAL); per model request
a `chat {model}` span (CLIENT) covering the request itself (its event carries the duration, retries
included); per tool call an `execute_tool {name}` span (INTERNAL); per `run_code` program a
`toolmode.sandbox.run` span under its tool span, with the sandbox tier and limits. Every span is a child
of the run span, which is a child of whatever span was current when the run started. While the run
(and each tool call) is in progress its span is the current one in that thread, so spans the
application's own code makes inside a tool nest under it.

A failure inside telemetry never reaches the run: it is logged once and the event is skipped.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import metrics as otel_metrics
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from toolmode import __version__, runctx
from toolmode.events import (
    ApprovalDecided,
    ApprovalRequested,
    BaseEvent,
    CodeExecuted,
    ErrorEvent,
    Retry,
    RunEnd,
    RunStart,
    StepUsage,
    ToolCallFinished,
    ToolCallStarted,
    ToolsSent,
)
from toolmode.otel import attributes as attrs
from toolmode.otel import content
from toolmode.otel.metrics import Instruments
from toolmode.redact import redact
from toolmode.telemetry import TelemetrySettings

log = logging.getLogger("toolmode.otel")
_SCOPE = "toolmode"
_instruments: weakref.WeakKeyDictionary[Any, Instruments] = weakref.WeakKeyDictionary()
_instruments_lock = threading.Lock()


def _instruments_for(provider: Any) -> Instruments:
    """One set of histograms per meter provider (made again, they would be registered twice)."""
    with _instruments_lock:
        found = _instruments.get(provider)
        if found is None:
            found = Instruments(provider.get_meter(_SCOPE, __version__, schema_url=attrs.SCHEMA_URL))
            _instruments[provider] = found
        return found


@dataclass
class _Attached:
    """A span made current in one thread, to be undone in that thread."""

    token: Any
    thread: int

    def detach(self) -> None:
        if threading.get_ident() == self.thread:
            otel_context.detach(self.token)


@dataclass
class _RunState:
    """What the sink keeps about one run in progress."""

    span: Any
    anchor: int  # epoch nanoseconds at event time t = 0
    base: dict[str, Any]  # provider, request model, server address: on every span and metric
    attached: _Attached | None
    tools: dict[str, Any] = field(default_factory=dict)  # open execute_tool spans by call id
    attached_tools: dict[str, _Attached] = field(default_factory=dict)
    code_errors: dict[str, str] = field(default_factory=dict)  # run_code failures by call id
    descriptions: dict[str, str | None] = field(default_factory=dict)
    tool_names: list[str] = field(default_factory=list)
    retries: list[Retry] = field(default_factory=list)
    converted: dict[int, tuple[Any, str]] = field(default_factory=dict)  # captured messages, converted once
    error_type: str | None = None
    started_t: float = 0.0
    first_request: bool = True


class OtelSink:
    """Events of runs -> spans and metrics. One sink may serve runs in turn (a chat session) or at once."""

    def __init__(self, settings: TelemetrySettings | None = None) -> None:
        self.settings = settings or TelemetrySettings()
        self.capture = self.settings.captures_content()
        self.conversation_id = uuid.uuid4().hex  # the turns of one trace (a chat session) share it
        self._runs: dict[int, _RunState] = {}
        self._failed = False
        self._off = False  # the providers could not be used: every event is ignored
        try:
            tracer_provider = self.settings.tracer_provider or trace.get_tracer_provider()
            self.tracer = tracer_provider.get_tracer(_SCOPE, __version__, schema_url=attrs.SCHEMA_URL)
            self.instruments = _instruments_for(self.settings.meter_provider or otel_metrics.get_meter_provider())
        except Exception:  # noqa: BLE001 - a broken provider costs the telemetry, never the run
            self._off = True
            log.warning("toolmode telemetry is off for this run: the providers failed", exc_info=True)

    # ------------------------------------------------------------------ the Sink protocol

    def emit(self, event: BaseEvent) -> None:
        """Handle one event; a failure is logged (once) and never raised into the run."""
        handler = _HANDLERS.get(type(event))
        if handler is None or self._off:
            return
        try:
            handler(self, event)
        except Exception:  # noqa: BLE001 - telemetry must not break a run
            if not self._failed:
                self._failed = True
                log.warning("toolmode telemetry failed on a %s event; the run goes on", event.kind, exc_info=True)

    def close(self) -> None:
        """Nothing to release: spans are ended by their events, exporting is the providers' job."""

    # ------------------------------------------------------------------ helpers

    def _key(self) -> int:
        ctx = runctx.current()
        return id(ctx) if ctx is not None else 0

    def _state(self) -> _RunState | None:
        return self._runs.get(self._key())

    @staticmethod
    def _ns(run: _RunState, t: float) -> int:
        return run.anchor + int(t * 1e9)

    def _child(self, run: _RunState, name: str, kind: SpanKind, start: int, attributes: dict[str, Any],
               parent: Any = None) -> Any:
        ctx = trace.set_span_in_context(parent if parent is not None else run.span)
        return self.tracer.start_span(name, context=ctx, kind=kind, attributes=attributes, start_time=start)

    # ------------------------------------------------------------------ events

    def _run_start(self, e: RunStart) -> None:
        anchor = time.time_ns() - int(e.t * 1e9)
        base = {"gen_ai.provider.name": attrs.provider_name(e.base_url, self.settings.provider_name),
                "gen_ai.request.model": e.model, **attrs.endpoint(e.base_url)}
        name = self.settings.agent_name
        attributes = {"gen_ai.operation.name": "invoke_agent", **base,
                      "gen_ai.conversation.id": self.conversation_id, "toolmode.mode": e.mode}
        if name:
            attributes["gen_ai.agent.name"] = name
        span = self.tracer.start_span(f"invoke_agent {name}" if name else "invoke_agent", kind=SpanKind.INTERNAL,
                                      attributes=attributes, start_time=anchor + int(e.t * 1e9))
        token = otel_context.attach(trace.set_span_in_context(span))
        self._runs[self._key()] = _RunState(span, anchor, base, _Attached(token, threading.get_ident()),
                                            tool_names=list(e.tools_sent), started_t=e.t)

    def _tools_sent(self, e: ToolsSent) -> None:
        run = self._state()
        if run is None:
            return
        run.tool_names = list(e.names)
        for schema in e.schemas:
            fn = schema.get("function", {})
            run.descriptions.setdefault(fn.get("name"), attrs.summary(fn.get("description")))

    def _retry(self, e: Retry) -> None:
        run = self._state()
        if run is not None:
            run.retries.append(e)

    def _request_span(self, run: _RunState, start_t: float, step: int | None, extra: dict[str, Any]) -> Any:
        """A `chat` span from `start_t` (to be ended by the caller), with the retries that happened in it."""
        model = run.base["gen_ai.request.model"]
        span = self._child(run, f"chat {model}", SpanKind.CLIENT, self._ns(run, start_t),
                           {"gen_ai.operation.name": "chat", **run.base, **extra,
                            **({"toolmode.step": step} if step is not None else {})})
        for r in run.retries:
            span.add_event("toolmode.retry", {"toolmode.retry.attempt": r.attempt, "toolmode.retry.wait_s": r.wait,
                                              "toolmode.retry.reason": redact(r.reason[:300])}, self._ns(run, r.t))
        run.retries.clear()
        return span

    def _reply(self, e: StepUsage) -> None:
        run = self._state()
        if run is None:
            return
        response_model = e.model or run.base["gen_ai.request.model"]
        extra: dict[str, Any] = {
            "gen_ai.response.model": response_model, **attrs.usage(e.usage),
            "gen_ai.response.finish_reasons": [attrs.finish_reason(e.finish_reason, bool(e.tool_calls))],
            "toolmode.request.attempts": e.attempts,
        }
        if e.cost is not None:
            extra["toolmode.cost.usd"] = e.cost
        if e.recovered:
            extra["toolmode.reply.recovered"] = e.recovered
        # from the moment the loop sent it (the request's own time, `seconds`, is measured inside the client,
        # and its event is published only when the loop's thread runs again) to the reply's event
        sent = e.sent_at if e.sent_at is not None else e.t - e.seconds
        span = self._request_span(run, min(sent, e.t - e.seconds), e.step, extra)
        if self.capture:
            self._capture_request(run, span, e)
        span.end(self._ns(run, e.t))
        metric = {"gen_ai.operation.name": "chat", **run.base, "gen_ai.response.model": response_model}
        self.instruments.request(metric, e.seconds, e.usage)

    def _capture_request(self, run: _RunState, span: Any, e: StepUsage) -> None:
        sent = e.messages or []
        span.set_attribute("gen_ai.input.messages", content.input_messages(sent, run.converted))
        span.set_attribute("gen_ai.output.messages",
                           content.output_message(e.content, e.reasoning, e.tool_calls, e.finish_reason))
        span.set_attribute("gen_ai.tool.definitions", content.tool_definitions(run.tool_names))
        if run.first_request:  # what the agent was given: its instructions, the history and the task
            run.first_request = False
            system = content.system_instructions(sent)
            if system is not None:
                run.span.set_attribute("gen_ai.system_instructions", system)
            given = sent[1:] if system is not None else sent
            run.span.set_attribute("gen_ai.input.messages", content.input_messages(given, run.converted))

    def _error(self, e: ErrorEvent) -> None:
        run = self._state()
        if run is None:
            return
        run.error_type = e.error_type or attrs.OTHER
        if e.seconds is None:  # not a model request (an internal error): the run span says it
            return
        span = self._request_span(run, e.t - e.seconds, e.step, {})
        span.set_attribute("error.type", run.error_type)
        span.set_status(Status(StatusCode.ERROR, run.error_type))
        span.end(self._ns(run, e.t))
        metric = {"gen_ai.operation.name": "chat", **run.base, "error.type": run.error_type}
        self.instruments.request(metric, e.seconds, None)

    def _tool_call(self, e: ToolCallStarted) -> None:
        run = self._state()
        if run is None:
            return
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": e.name,
                      "gen_ai.tool.call.id": e.id, "gen_ai.tool.type": "function", "toolmode.step": e.step}
        description = run.descriptions.get(e.name)
        if description:
            attributes["gen_ai.tool.description"] = description
        if self.capture:
            attributes["gen_ai.tool.call.arguments"] = redact(e.arguments)
        span = self._child(run, f"execute_tool {e.name}", SpanKind.INTERNAL, self._ns(run, e.t), attributes)
        run.tools[e.id] = span
        token = otel_context.attach(trace.set_span_in_context(span))
        run.attached_tools[e.id] = _Attached(token, threading.get_ident())

    def _code_run(self, e: CodeExecuted) -> None:
        run = self._state()
        if run is None:
            return
        limits = {f"toolmode.sandbox.limit.{k}": v for k, v in e.limits.items() if v is not None}
        attributes = {"toolmode.sandbox.tier": e.tier, **limits, "toolmode.sandbox.tool_calls": e.calls,
                      "toolmode.sandbox.output_truncated": e.truncated}
        parent = run.tools.get(e.call_id) if e.call_id is not None else None
        span = self._child(run, "toolmode.sandbox.run", SpanKind.INTERNAL, self._ns(run, e.t - e.seconds),
                           attributes, parent)
        if e.error is not None:
            span.set_attribute("error.type", e.error)
            span.set_status(Status(StatusCode.ERROR, e.error))
            if e.call_id is not None:
                run.code_errors[e.call_id] = e.error
        span.end(self._ns(run, e.t))

    def _approval_span(self, call_id: str) -> Any:
        """The span of the call an approval is about: its own, or its program's for a call made in run_code."""
        run = self._state()
        if run is None:
            return None
        return run.tools.get(call_id) or run.tools.get(call_id.split("#", 1)[0])

    def _approval_request(self, e: ApprovalRequested) -> None:
        span = self._approval_span(e.call_id)
        if span is not None:
            span.add_event("toolmode.approval.requested", {
                "gen_ai.tool.name": e.tool, "gen_ai.tool.call.id": e.call_id, "toolmode.approval.where": e.where,
                "toolmode.approval.waits_for": e.waits_for})

    def _approval(self, e: ApprovalDecided) -> None:
        span = self._approval_span(e.call_id)
        if span is None:
            return
        attributes: dict[str, Any] = {"gen_ai.tool.name": e.tool, "gen_ai.tool.call.id": e.call_id,
                                      "toolmode.approval.decision": e.decision, "toolmode.approval.by": e.by,
                                      "toolmode.approval.waited_s": e.waited,
                                      "toolmode.approval.edited": e.arguments is not None}
        if self.capture and e.reason:
            attributes["toolmode.approval.reason"] = redact(e.reason)
        span.add_event("toolmode.approval.decided", attributes)

    def _tool_result(self, e: ToolCallFinished) -> None:
        run = self._state()
        if run is None:
            return
        span = run.tools.pop(e.id, None)
        attached = run.attached_tools.pop(e.id, None)
        if attached is not None:
            attached.detach()
        if span is None:
            return
        if e.error:
            error = run.code_errors.pop(e.id, None) or attrs.tool_error_type(e.result)
            span.set_attribute("error.type", error)
            first_line = e.result.splitlines()[0][:300] if e.result else error
            span.set_status(Status(StatusCode.ERROR, redact(first_line) if self.capture else error))
        elif self.capture:
            span.set_attribute("gen_ai.tool.call.result", redact(e.result))
        span.end(self._ns(run, e.t))

    def _run_end(self, e: RunEnd) -> None:
        key = self._key()
        run = self._runs.pop(key, None)
        if run is None:
            return
        try:
            self._finish_run(run, e)
        finally:
            for attached in run.attached_tools.values():
                attached.detach()
            if run.attached is not None:
                run.attached.detach()

    def _finish_run(self, run: _RunState, e: RunEnd) -> None:
        end = self._ns(run, e.t)
        for span in run.tools.values():  # calls the run stopped waiting for
            span.set_attribute("error.type", e.stopped)
            span.set_status(Status(StatusCode.ERROR, f"the run stopped ({e.stopped}) before the call finished"))
            span.end(end)
        span = run.span
        span.set_attributes({**attrs.usage(e.usage), "toolmode.stopped": e.stopped, "toolmode.steps": e.steps,
                             "toolmode.requests": int(e.usage.get("requests") or 0)})
        if e.cost is not None:
            span.set_attribute("toolmode.cost.usd", e.cost)
        if e.limit:
            span.set_attribute("toolmode.limit", e.limit)
        error = None if e.stopped == "answer" else (run.error_type if e.stopped == "error" and run.error_type
                                                     else e.stopped)
        if error is not None:
            span.set_attribute("error.type", error)
            span.set_status(Status(StatusCode.ERROR, redact(e.error) if self.capture and e.error else error))
        if self.capture and e.answer is not None:
            span.set_attribute("gen_ai.output.messages", content.output_message(e.answer, None, [], "stop"))
        span.end(end)
        self.instruments.operation({"gen_ai.operation.name": "invoke_agent", **run.base,
                                    **({"error.type": error} if error else {})}, e.t - run.started_t)


_HANDLERS: dict[type, Any] = {
    RunStart: OtelSink._run_start,
    ToolsSent: OtelSink._tools_sent,
    Retry: OtelSink._retry,
    StepUsage: OtelSink._reply,
    ErrorEvent: OtelSink._error,
    ToolCallStarted: OtelSink._tool_call,
    CodeExecuted: OtelSink._code_run,
    ToolCallFinished: OtelSink._tool_result,
    ApprovalRequested: OtelSink._approval_request,
    ApprovalDecided: OtelSink._approval,
    RunEnd: OtelSink._run_end,
}
