"""The typed events of a run: one stream that the JSONL trace, the console and `agent.stream()` consume.

Every event has `kind` (a short string, the JSONL `kind` field), `t` (seconds since the trace began),
`data` (its fields as a dict) and `to_dict()` (the flat JSON form written to the trace). The trace file
format built from them is described in docs/CONTRACTS.md ("The trajectory").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from toolmode.result import RunResult


class BaseEvent:
    """What every event offers; sinks rely on nothing else."""

    kind: ClassVar[str]
    t: float

    @property
    def data(self) -> dict[str, Any]:
        """The event's fields as a dict (what the trace writes besides kind and t)."""
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """Flat dict for JSON: kind, t, then the data."""
        return {"kind": self.kind, "t": round(self.t, 4), **self.data}


class TypedEvent(BaseEvent):
    """Base of the typed events: `data` is built from the dataclass fields (except `t` and hidden ones)."""

    _written: ClassVar[tuple[str, ...] | None] = None  # the fields `data` holds, worked out once per class
    _values: ClassVar[Callable[[Any], tuple[Any, ...]] | None] = None  # their values, read in one C call

    @property
    def data(self) -> dict[str, Any]:
        """The event's fields as a dict (what the trace writes besides kind and t)."""
        cls = type(self)
        values = cls.__dict__.get("_values")
        if values is None:
            names = tuple(f.name for f in fields(self)  # type: ignore[arg-type]
                          if f.name != "t" and not f.metadata.get("hidden"))
            cls._written = names
            values = cls._values = attrgetter(*names) if len(names) > 1 else lambda event: (getattr(event, names[0]),)
        return dict(zip(cls._written, values(self), strict=True))  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        """Flat dict for JSON: kind, t, then the data (built in one pass: every trace line is one)."""
        cls = type(self)
        if cls.__dict__.get("_values") is None:
            return super().to_dict()  # works the field names out first
        flat = {"kind": self.kind, "t": round(self.t, 4)}
        flat.update(zip(cls._written, cls._values(self), strict=True))  # type: ignore[arg-type, misc]
        return flat


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
    run: int = 0  # the run's index in its trace (a chat session's trace holds one run per turn)
    system: str | None = None  # the system prompt sent
    request: dict[str, Any] | None = None  # {"model", "stream", "params"}: what every request carries
    config: dict[str, Any] | None = None  # the loop's settings (see docs/CONTRACTS.md, "The trajectory")
    resumes: dict[str, Any] | None = None  # a resumed run: {"trace", "run", "step"} of the run it continues
    t: float = field(default=0.0, kw_only=True)


@dataclass
class MessageAdded(TypedEvent):
    """A message joined the conversation, exactly as it is sent from now on.

    `source`: "system", "history", "task", "reply", "tool" or "policy" (a reply policy's message: `about`
    says why, e.g. "empty_reply", "unreadable_call", "repeated_call", "output_format").
    """

    kind: ClassVar[str] = "message"
    index: int
    message: dict[str, Any]
    source: str
    step: int | None = None
    about: str | None = None
    t: float = field(default=0.0, kw_only=True)


@dataclass
class Carried(TypedEvent):
    """`count` messages carried over from run `from_run` of the same trace (its messages `[start, start+count)`)."""

    kind: ClassVar[str] = "carried"
    from_run: int
    start: int
    count: int
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
    sent_messages: int = 0  # the request carried the run's messages [0, sent_messages)
    wire_tool_calls: list[dict[str, Any]] | None = None  # the server's own calls, when recovery changed them
    sent_at: float | None = None  # when the request was sent: seconds since the trace began, the clock of `t`
    request_fields: dict[str, Any] | None = None  # extra fields the request carried (tool_choice, response_format)
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
    step: int | None = None
    t: float = field(default=0.0, kw_only=True)


@dataclass
class Notice(TypedEvent):
    """Something the user should know that does not stop the run; `about` names it for programs
    (e.g. "price_unknown", "cut_answer", "repeated_call", "fallback"), `call_id` the tool call it is about."""

    kind: ClassVar[str] = "notice"
    message: str
    step: int | None = None
    about: str | None = None
    call_id: str | None = None
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
    request_fields: dict[str, Any] | None = None  # a failed request's extra fields (as on `reply`)
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
class ApprovalRequested(TypedEvent):
    """A call needs a person's decision (its policy said `ask`): the tool, its arguments (a JSON object), the
    model's call id (a call made inside a `run_code` program gets `<run_code id>#<n>`), the step, `where`
    ("direct" or "run_code") and `waits_for`: who decides ("approver", "terminal", "stream", "resume": after the
    run, which stops; "rule": nobody now, the call is refused).

    From `stream()` / `astream()`, an event with `waits_for == "stream"` is answered with `approve(arguments=None)`
    (optionally with edited arguments) or `deny(reason)`, from any thread or task; the run waits until then."""

    kind: ClassVar[str] = "approval_request"
    step: int
    call_id: str
    tool: str
    arguments: dict[str, Any]
    where: str = "direct"
    waits_for: str = "approver"
    answer: Any = _hidden()  # a concurrent.futures.Future the stream's consumer settles
    t: float = field(default=0.0, kw_only=True)

    def approve(self, arguments: dict[str, Any] | None = None) -> None:
        """Let the call run (with `arguments` instead of the model's, when given)."""
        if arguments is not None and not isinstance(arguments, dict):
            raise ValueError(f"arguments must be a dict (a JSON object), not {type(arguments).__name__}")
        self._settle(("approve", arguments))

    def deny(self, reason: str = "") -> None:
        """Refuse the call; the model is told it was refused by the user, with `reason`."""
        self._settle(("deny", str(reason)))

    def _settle(self, decision: Any) -> None:
        if self.answer is None:
            raise ValueError(f"this request is decided by the {self.waits_for}, not from the stream")
        try:
            self.answer.set_result(decision)
        except Exception:  # InvalidStateError: decided already (or the run gave up waiting)
            raise ValueError(f"the call {self.call_id} was decided already") from None


@dataclass
class ApprovalDecided(TypedEvent):
    """A decision on a call: `decision` "approved" or "denied", `by` whom ("approver", "terminal", "stream",
    "resume", "rule" for a policy's `deny`, "timeout" for approval_timeout, "session" for an earlier "always"),
    the `reason` of a denial, the edited `arguments` of an approval (None: the model's), and `waited` seconds."""

    kind: ClassVar[str] = "approval"
    step: int
    call_id: str
    tool: str
    decision: str
    by: str
    reason: str | None = None
    arguments: dict[str, Any] | None = None
    waited: float = 0.0
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
    messages: int = 0  # how many messages the conversation holds at the end
    result: RunResult | None = _hidden()
    t: float = field(default=0.0, kw_only=True)


EVENT_TYPES: dict[str, type[TypedEvent]] = {
    cls.kind: cls
    for cls in (RunStart, MessageAdded, Carried, ToolsSent, TextDelta, ReasoningDelta, StepUsage, ToolCallStarted,
                ToolCallFinished, Retry, Notice, ErrorEvent, CodeExecuted, ApprovalRequested, ApprovalDecided,
                RunEnd)
}


def make_event(kind: str, data: dict[str, Any], t: float = 0.0) -> TypedEvent:
    """The typed event of `kind` built from `data` (a trace line's fields); ValueError for an unknown kind
    or fields the kind does not have."""
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        raise ValueError(f"unknown event kind {kind!r}; known: {', '.join(EVENT_TYPES)}")
    try:
        return cls(**data, t=t)  # type: ignore[call-arg]
    except TypeError as exc:
        raise ValueError(f"bad fields for a {kind!r} event: {exc}") from None
