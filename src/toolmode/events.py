"""The typed events of a run: one stream that the JSONL trace, the console and `agent.stream()` consume.

Every event has `kind` (a short string, the JSONL `kind` field), `t` (seconds since the run started),
`data` (its fields as a dict) and `to_dict()` (the flat JSON form written to the trace).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from toolmode.result import RunResult


class BaseEvent:
    """What every event offers; sinks rely on nothing else."""

    kind: str
    t: float
    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Flat dict for JSON: kind, t, then the data."""
        return {"kind": self.kind, "t": round(self.t, 4), **self.data}


@dataclass
class Event(BaseEvent):
    """An untyped event (`Trace.emit(kind, **data)` for kinds without a class of their own)."""

    kind: str  # type: ignore[misc]
    data: dict[str, Any]  # type: ignore[misc]
    t: float = 0.0


class TypedEvent(BaseEvent):
    """Base of the typed events: `data` is built from the dataclass fields (except `t` and hidden ones)."""

    kind: ClassVar[str]  # type: ignore[misc]

    @property
    def data(self) -> dict[str, Any]:  # type: ignore[override]
        """The event's fields as a dict (what the trace writes besides kind and t)."""
        return {f.name: getattr(self, f.name) for f in fields(self)  # type: ignore[arg-type]
                if f.name != "t" and not f.metadata.get("hidden")}


def _hidden(default: Any = None) -> Any:
    return field(default=default, repr=False, compare=False, metadata={"hidden": True})


@dataclass
class RunStart(TypedEvent):
    """A run began: the task, the mode, the model and the tools its first request sends."""

    kind: ClassVar[str] = "run_start"
    task: str
    mode: str
    model: str
    base_url: str | None
    tools_sent: list[str]
    notes: list[str]
    trace_path: str | None = None
    history: int = 0  # messages carried over from earlier turns
    t: float = field(default=0.0, kw_only=True)


@dataclass
class ToolsSent(TypedEvent):
    """The tool list sent with a request changed (the first request, or after a search loaded tools)."""

    kind: ClassVar[str] = "tools"
    step: int
    names: list[str]
    schemas: list[dict[str, Any]]
    t: float = field(default=0.0, kw_only=True)


@dataclass
class TextDelta(TypedEvent):
    """A piece of the answer text as it streams (only when the model streams: `stream=True`)."""

    kind: ClassVar[str] = "text_delta"
    step: int
    text: str
    t: float = field(default=0.0, kw_only=True)


@dataclass
class ReasoningDelta(TypedEvent):
    """A piece of the reasoning (`reasoning_content`) as it streams."""

    kind: ClassVar[str] = "reasoning_delta"
    step: int
    text: str
    t: float = field(default=0.0, kw_only=True)


@dataclass
class StepUsage(TypedEvent):
    """One model reply: its usage and cost, its text and the tool calls it made."""

    kind: ClassVar[str] = "reply"
    step: int
    usage: dict[str, int]
    cost: float | None
    seconds: float
    content: str | None
    tool_calls: list[dict[str, str]]
    reasoning: str | None = None
    finish_reason: str | None = None
    recovered: str | None = None
    attempts: int = 1
    model: str | None = None
    sent_at: float | None = None  # when the request was sent: seconds since the trace began, the clock of `t`
    messages: list[dict[str, Any]] | None = _hidden()  # the conversation sent (telemetry's content capture)
    t: float = field(default=0.0, kw_only=True)


@dataclass
class ToolCallStarted(TypedEvent):
    """A tool call began (parallel calls of one reply start together)."""

    kind: ClassVar[str] = "tool_call"
    step: int
    id: str
    name: str
    arguments: str
    t: float = field(default=0.0, kw_only=True)


@dataclass
class ToolCallFinished(TypedEvent):
    """A tool call finished: the text that goes back to the model, and whether it is an error."""

    kind: ClassVar[str] = "tool_result"
    step: int
    id: str
    name: str
    arguments: str
    result: str
    error: bool
    seconds: float
    t: float = field(default=0.0, kw_only=True)


@dataclass
class Retry(TypedEvent):
    """A model request failed transiently and is retried after `wait` seconds."""

    kind: ClassVar[str] = "retry"
    attempt: int
    wait: float
    reason: str
    t: float = field(default=0.0, kw_only=True)


@dataclass
class Notice(TypedEvent):
    """Something the user should know that does not stop the run."""

    kind: ClassVar[str] = "notice"
    message: str
    step: int | None = None
    t: float = field(default=0.0, kw_only=True)


@dataclass
class ErrorEvent(TypedEvent):
    """An error that ends the run (a model error, an internal error). For a model error, `seconds` is how
    long the failed request took; `error_type` names the exception's class."""

    kind: ClassVar[str] = "error"
    message: str
    step: int | None = None
    seconds: float | None = None
    error_type: str | None = None
    t: float = field(default=0.0, kw_only=True)


@dataclass
class CodeExecuted(TypedEvent):
    """A `run_code` program ran in the sandbox: for the tool call `call_id`, on which `tier`, under which
    `limits` (the SandboxLimits fields), how long, how many tool calls it made, whether its output was cut,
    and how it failed (`error`: the exception's class name, or "timeout"; None when it ran to the end)."""

    kind: ClassVar[str] = "code_run"
    step: int | None
    call_id: str | None
    tier: str
    limits: dict[str, Any]
    seconds: float
    calls: int
    truncated: bool = False
    error: str | None = None
    t: float = field(default=0.0, kw_only=True)


@dataclass
class RunEnd(TypedEvent):
    """The run ended. `limit` names the budget that stopped it (`max_cost`, `max_tokens`, `timeout`)."""

    kind: ClassVar[str] = "run_end"
    answer: str | None
    stopped: str
    error: str | None
    usage: dict[str, int]
    cost: float | None
    wall_time: float
    model_time: float
    steps: int
    trace_path: str | None = None
    limit: str | None = None
    result: RunResult | None = _hidden()
    t: float = field(default=0.0, kw_only=True)


EVENT_TYPES: dict[str, type[TypedEvent]] = {
    cls.kind: cls
    for cls in (RunStart, ToolsSent, TextDelta, ReasoningDelta, StepUsage, ToolCallStarted, ToolCallFinished,
                Retry, Notice, ErrorEvent, CodeExecuted, RunEnd)
}


def make_event(kind: str, data: dict[str, Any], t: float = 0.0) -> BaseEvent:
    """The typed event for `kind` when its fields match, else an untyped `Event`."""
    cls = EVENT_TYPES.get(kind)
    if cls is not None:
        try:
            return cls(**data, t=t)  # type: ignore[call-arg]
        except TypeError:
            pass
    return Event(kind, data, t)
