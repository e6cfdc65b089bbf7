"""What a run returns: the answer, why it stopped, usage, cost, and a record of every step."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic_core import to_jsonable_python

from toolmode.usage import Usage

Stopped = Literal["answer", "step_limit", "error", "interrupted", "budget", "cancelled", "approval"]


@dataclass
class CallRecord:
    """One tool call and the text that went back to the model."""

    id: str
    name: str
    arguments: str
    result: str
    error: bool = False
    seconds: float = 0.0


@dataclass
class StepRecord:
    """One model request and the calls it made."""

    step: int
    usage: Usage
    cost: float | None
    seconds: float
    content: str | None
    calls: list[CallRecord] = field(default_factory=list)
    recovered: str | None = None
    finish_reason: str | None = None


@dataclass
class RunResult:
    """The outcome of `run_agent` / `Agent.run`. `cost` is None when a price is unknown.

    `output` is the validated value when the run had an `output_type`; `limit` names the budget that
    stopped it (`max_cost`, `max_tokens`, `timeout`); `messages` is the whole conversation, to continue
    with `agent.run(next_task, history=result.messages)`. A run stopped for approval (`stopped="approval"`)
    lists the calls awaiting a decision in `pending` and gives its saved state with `state()`.
    """

    answer: str | None
    stopped: Stopped
    error: str | None
    usage: Usage
    cost: float | None
    wall_time: float
    model_time: float
    records: list[StepRecord]
    trace_path: Path | None = None
    messages: list[dict[str, Any]] = field(default_factory=list, repr=False)
    output: Any = None
    limit: str | None = None
    pending: list[Any] = field(default_factory=list)  # stopped="approval": the calls awaiting a decision
    saved: Any = field(default=None, repr=False)  # stopped="approval": the run's SavedRun

    def state(self) -> dict[str, Any]:
        """The saved state of a run that stopped for approval (`stopped == "approval"`): plain JSON, to keep
        and pass later, from any process, to `agent.resume(state, decisions={call_id: ...})`."""
        if self.saved is None:
            raise ValueError(f"this run stopped with {self.stopped!r}, not 'approval': it has no saved state to resume")
        return self.saved.to_json()  # type: ignore[no-any-return]

    @property
    def steps(self) -> int:
        """Number of model requests made."""
        return len(self.records)

    @property
    def ok(self) -> bool:
        """True when the run ended with an answer."""
        return self.stopped == "answer"

    def to_dict(self, *, include_messages: bool = False) -> dict[str, Any]:
        """JSON-ready dict (the conversation itself only when asked)."""
        data = {
            "answer": self.answer,
            "stopped": self.stopped,
            "error": self.error,
            "steps": self.steps,
            "usage": self.usage.to_dict(),
            "cost": self.cost,
            "wall_time": round(self.wall_time, 4),
            "model_time": round(self.model_time, 4),
            "trace_path": str(self.trace_path) if self.trace_path else None,
            "limit": self.limit,
            "output": to_jsonable_python(self.output, fallback=str),
            "records": [asdict(r) for r in self.records],
        }
        if self.pending:
            data["pending"] = [asdict(p) for p in self.pending]
        if include_messages:
            data["messages"] = self.messages
        return data
