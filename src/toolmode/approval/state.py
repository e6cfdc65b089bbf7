"""The saved state of a run stopped for approval: plain JSON, resumable later in another process.

    {"format": "toolmode.run_state", "version": 1,
     "task": str, "mode": str, "model": str, "step": int,       # the step whose calls wait
     "messages": [...],                                          # the conversation up to that step's reply
     "calls": [{"id", "name", "arguments", "result", "error", "seconds", "pending"}],  # the step's calls, in order
     "pending": [{"call_id", "tool", "arguments", "step"}],     # the calls awaiting a decision
     "trace": {"path": str | null, "run": int}}                  # where the stopped run's events are

`arguments` of a call is the model's JSON text; of a pending call, the parsed object. Nothing else (no
tools, no model settings, no secrets) is saved: the agent that resumes brings those.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from toolmode.approval.decision import Decision, as_decision
from toolmode.result import CallRecord

FORMAT = "toolmode.run_state"
VERSION = 1


@dataclass(frozen=True)
class PendingCall:
    """A call awaiting a decision: its id (the key of `decisions=`), the tool, its arguments, its step."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    step: int


@dataclass
class SavedRun:
    """The state of a run stopped for approval (see the module's docstring for its JSON form)."""

    task: str
    mode: str
    model: str
    step: int
    messages: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    pending: list[PendingCall]
    trace: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {"format": FORMAT, "version": VERSION, "task": self.task, "mode": self.mode, "model": self.model,
                "step": self.step, "messages": self.messages, "calls": self.calls,
                "pending": [asdict(p) for p in self.pending], "trace": self.trace}

    @classmethod
    def from_json(cls, data: Any) -> SavedRun:
        """Read a saved state (a dict, or its JSON text); ValueError naming what is wrong."""
        if isinstance(data, str | bytes):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as exc:
                raise ValueError(f"the saved state is not JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not a saved run state (expected an object with format {FORMAT!r})")
        if data.get("version") != VERSION:
            raise ValueError(f"saved state version {data.get('version')!r} is not supported (this toolmode reads {VERSION})")
        try:
            pending = [PendingCall(str(p["call_id"]), str(p["tool"]), dict(p["arguments"]), int(p["step"]))
                       for p in data["pending"]]
            state = cls(str(data["task"]), str(data["mode"]), str(data["model"]), int(data["step"]),
                        list(data["messages"]), [dict(c) for c in data["calls"]], pending, dict(data.get("trace") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"the saved state is incomplete or malformed ({type(exc).__name__}: {exc})") from None
        if not all(isinstance(m, dict) and "role" in m for m in state.messages):
            raise ValueError("the saved state's messages must be objects with a role")
        return state

    def records(self) -> list[CallRecord]:
        """The step's calls as records (pending ones with an empty result)."""
        return [CallRecord(str(c["id"]), str(c["name"]), str(c["arguments"]), str(c.get("result", "")),
                           bool(c.get("error", False)), float(c.get("seconds", 0.0))) for c in self.calls]

    def decisions(self, given: Any) -> dict[str, Decision]:
        """`given` (call id -> True | reason | {"arguments": ...}) checked against the pending calls: one
        decision for each, no other; ValueError otherwise."""
        if not isinstance(given, dict):
            raise ValueError(f"decisions= must map call ids to decisions, not {type(given).__name__}")
        ids = [p.call_id for p in self.pending]
        unknown = [k for k in given if k not in ids]
        if unknown:
            raise ValueError(f"decisions= names call {unknown[0]!r}, which is not pending; pending: {', '.join(ids)}")
        missing = [k for k in ids if k not in given]
        if missing:
            tools = {p.call_id: p.tool for p in self.pending}
            raise ValueError(f"no decision for pending call {missing[0]!r} ({tools[missing[0]]}); every pending call "
                             "needs one: True, a reason (str) to deny, or {'arguments': {...}}")
        return {k: as_decision(v, what=f"the decision for {k!r}") for k, v in given.items()}


def saved_run(run: Any) -> SavedRun:
    """The saved state of `run` (a `toolmode.run.Run` stopped with pending calls)."""
    requests = {r.call_id: r for r in run.pending}
    calls = [{**asdict(c), "pending": c.id in requests} for c in run.held]
    ordered = [requests[c.id] for c in run.held if c.id in requests]  # the model's order
    return SavedRun(
        task=run.task, mode=run.mode.name, model=run.model.model, step=run.step, messages=list(run.messages),
        calls=calls, pending=[PendingCall(r.call_id, r.tool, r.arguments, r.step) for r in ordered],
        trace={"path": str(run.trace.path) if run.trace.path else None, "run": run.run_index},
    )
