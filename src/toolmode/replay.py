"""Replaying a recorded run: the loop runs again against a scripted server that answers with the recorded
replies, each tool call answered with its recorded result, and every request is compared with the one
the recording sent. A real model's run so becomes a regression test of everything on toolmode's side
(prompts, policies, recovery of text-written calls, the conversation it builds): `toolmode replay TRACE`.

What is replayed as recorded: the system prompt, the carried messages, the task, the tool definitions
sent at each step, the request parameters, and each reply. What runs again: the loop, its policies
(with this toolmode's prompt texts; `act_first` with the recorded setting, and its tool-search decision taken
from the recording, which holds no tool catalog) and the model client's reading of the replies. Tool results are
the recorded ones, already cut to the recorded `max_result_chars`, so the replay cuts nothing itself.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolmode import runctx
from toolmode.act_first import ABOUT as ACT_FIRST
from toolmode.act_first import ActFirst
from toolmode.bounded import loads_json
from toolmode.events import Carried, CodeExecuted, MessageAdded, StepUsage, ToolCallFinished, ToolsSent
from toolmode.modes.base import FailedResult, Mode, ModeSetup
from toolmode.modes.code import keep_program_calls
from toolmode.result import RunResult
from toolmode.settings import PromptSettings
from toolmode.trajectory import TracedRun, TraceFormatError, Trajectory, read


@dataclass
class Difference:
    """Where a replayed request first differs from the recorded one (`request` counts from 1)."""

    request: int
    path: str
    recorded: Any
    replayed: Any

    def __str__(self) -> str:
        return (f"request {self.request} differs at {self.path}:\n  recorded: {_show(self.recorded)}\n"
                f"  replayed: {_show(self.replayed)}")


@dataclass
class RunReplay:
    """The replay of one run: how many requests were compared, and the first difference (None: identical)."""

    run: int
    requests: int
    difference: Difference | None
    result: RunResult

    @property
    def identical(self) -> bool:
        """True when every request was the same as recorded."""
        return self.difference is None

    def summary(self) -> str:
        """One line (or a few, with the difference)."""
        if self.difference is None:
            return f"run {self.run}: replayed {self.requests} requests: identical"
        return f"run {self.run}: {self.difference}"


def replay(trace: str | Path | Trajectory, run: int | None = None) -> list[RunReplay]:
    """Replay every run of `trace` (or only run `run`); TraceFormatError when it cannot be replayed."""
    trajectory = trace if isinstance(trace, Trajectory) else read(trace)
    if trajectory.version < 2:
        raise TraceFormatError(f"{trajectory.path} is a trace of format version 1, which holds no messages: "
                               "it cannot be replayed (traces are replayable from version 2)")
    if not trajectory.runs:
        raise TraceFormatError(f"{trajectory.path} holds no run")
    if run is not None and not 0 <= run < len(trajectory.runs):
        raise TraceFormatError(f"{trajectory.path} has runs 0 to {len(trajectory.runs) - 1}, not {run}")
    chosen = range(len(trajectory.runs)) if run is None else [run]
    return [replay_run(trajectory.runs[i], i) for i in chosen]


def replay_run(recorded: TracedRun, index: int = 0) -> RunReplay:
    """Replay one run and compare its requests with the recorded ones."""
    from toolmode.loop import run_agent
    from toolmode.models.client import ModelClient
    from toolmode.testing import ScriptedModelServer

    config = recorded.start.config or {}
    if config.get("output"):
        raise TraceFormatError(f"run {index} asked for structured output ({config['output'].get('name')}): "
                               "replaying output_type runs is not supported yet")
    info = recorded.start.request or {}
    with ScriptedModelServer(script_for(recorded)) as server:
        model = ModelClient(info.get("model") or recorded.start.model, base_url=server.base_url, api_key="replay",
                            stream=bool(info.get("stream")), params=info.get("params") or {},
                            recover_text_calls=config.get("recover_text_calls", True) is not False,
                            recover_code_blocks=bool(config.get("recover_code_blocks")))
        resumed = _resumed(recorded)
        steps = len(recorded.requests) + (resumed.step if resumed is not None else 0)
        try:
            result = run_agent(recorded.start.task, ReplayMode(recorded), model, max_steps=steps or 1,
                               max_result_chars=0, history=None if resumed else _carried(recorded),
                               act_first=_act_first(recorded), resume=resumed)
        finally:
            model.close()
        sent = server.requests
    bodies = [r.body() for r in recorded.requests]
    return RunReplay(index, min(len(sent), len(bodies)), first_difference(bodies, sent), result)


def script_for(recorded: TracedRun) -> list[dict[str, Any]]:
    """The scripted server's items: each reply as the server sent it (calls read from the text left out)."""
    items = []
    for reply in recorded.of("reply"):
        assert isinstance(reply, StepUsage)
        calls = reply.wire_tool_calls if reply.wire_tool_calls is not None else \
            [c for c in reply.tool_calls if c.get("recovered") is None]
        item: dict[str, Any] = {"content": reply.content, "finish_reason": reply.finish_reason}
        if calls:
            item["tool_calls"] = [{"id": c["id"], "name": c["name"], "arguments": c["arguments"]} for c in calls]
        if reply.reasoning is not None:
            item["reasoning_content"] = reply.reasoning
        items.append(item)
    return items


def _act_first(recorded: TracedRun) -> ActFirst | str:
    """The recorded run's act_first policy; whether the task touched the tools is read from the recording (a
    verification message was sent, or none was)."""
    how = (recorded.start.config or {}).get("act_first") or "off"
    if how == "off":
        return how
    verified = any(isinstance(e, MessageAdded) and e.source == "policy" and e.about == ACT_FIRST
                   for e in recorded.events)
    return ActFirst(how, matches=verified)


def _carried(recorded: TracedRun) -> list[dict[str, Any]]:
    """The messages the run continued: those before its task (its own system message aside)."""
    messages = recorded.messages or []
    system = 1 if recorded.start.system and messages and messages[0].get("role") == "system" else 0
    return messages[system:system + recorded.start.history]


def _resumed(recorded: TracedRun) -> Any:
    """For a run resumed after approval: the state it resumed, as far as the replay needs it (the saved
    conversation, and each call of the stopped step answered as the resumed run recorded it); else None."""
    resumes = recorded.start.resumes
    if not resumes:
        return None
    from toolmode.approval.state import SavedRun

    messages = recorded.messages or []
    kept = sum(e.count for e in recorded.of("carried") if isinstance(e, Carried)) + sum(
        1 for e in recorded.of("message") if isinstance(e, MessageAdded) and e.source == "resumed")
    saved, answers = messages[:kept], messages[kept:]
    calls = (saved[-1].get("tool_calls") or []) if saved else []
    results = {m.get("tool_call_id"): m.get("content") for m in answers if m.get("role") == "tool"}
    return SavedRun(recorded.start.task, recorded.start.mode, recorded.start.model, int(resumes.get("step") or 0),
                    saved, [{"id": c.get("id"), "name": (c.get("function") or {}).get("name"),
                             "arguments": (c.get("function") or {}).get("arguments"),
                             "result": results.get(c.get("id"), "")} for c in calls], [], {})


class ReplayMode(Mode):
    """The recorded run's mode, as far as the loop can see: its name, system prompt, code tool, the tool
    definitions sent at each step, and each call's recorded result."""

    def __init__(self, recorded: TracedRun) -> None:
        config = recorded.start.config or {}
        self.name = recorded.start.mode  # type: ignore[misc]
        self.code_tool = config.get("code_tool")  # type: ignore[misc]
        self.prompts = self.load_prompts(PromptSettings(variant=config.get("prompts") or "standard"))
        self._system = recorded.start.system
        self._tools = [(e.step, e.schemas) for e in recorded.of("tools") if isinstance(e, ToolsSent)]
        self._results: dict[tuple[int, str, str], deque[ToolCallFinished]] = defaultdict(deque)
        for e in recorded.of("tool_result"):
            assert isinstance(e, ToolCallFinished)
            self._results[(e.step, e.name, _canonical(e.arguments))].append(e)
        # How many tool calls each recorded program made (act_first: a program that called none did not act).
        self._program_calls = {e.call_id: e.calls for e in recorded.of("code_run") if isinstance(e, CodeExecuted)}

    @classmethod
    def build(cls, tools: Iterable[Any], setup: ModeSetup, options: Any) -> Mode:
        """Not offered by name: a replay makes its own."""
        raise TraceFormatError("the replay mode is made from a trace, not by name")

    def system_prompt(self) -> str | None:
        """The recorded system prompt."""
        return self._system

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The definitions the recording sent at this step."""
        run = runctx.current()
        step = run.step if run is not None else 1
        sent = [schemas for at, schemas in self._tools if at <= step]
        return sent[-1] if sent else []

    def handle_call(self, name: str, arguments: dict[str, Any]) -> str:
        """The recorded result of this call (matched by step, name and arguments)."""
        run = runctx.current()
        key = (run.step if run is not None else 0, name, json.dumps(arguments, sort_keys=True, ensure_ascii=False))
        queue = self._results.get(key)
        if not queue:
            raise LookupError(f"the recording has no result for {name}({json.dumps(arguments)[:200]}) at step {key[0]}")
        recorded = queue.popleft()
        if name == self.code_tool and recorded.id in self._program_calls:
            keep_program_calls(self._program_calls[recorded.id])
        return FailedResult(recorded.result) if recorded.error else recorded.result


def first_difference(recorded: list[dict[str, Any]], replayed: list[dict[str, Any]]) -> Difference | None:
    """The first place where the replayed request bodies differ from the recorded ones (stream fields aside)."""
    for i, (want, got) in enumerate(zip(recorded, replayed, strict=False), 1):
        got = {k: v for k, v in got.items() if k not in ("stream", "stream_options")}
        where = _diff(want, got, "")
        if where is not None:
            return Difference(i, where[0] or "(body)", where[1], where[2])
    if len(recorded) != len(replayed):
        return Difference(min(len(recorded), len(replayed)) + 1, "(requests)",
                          f"{len(recorded)} requests", f"{len(replayed)} requests")
    return None


def _diff(want: Any, got: Any, path: str) -> tuple[str, Any, Any] | None:
    if isinstance(want, dict) and isinstance(got, dict):
        for key in [*want, *(k for k in got if k not in want)]:
            where = f"{path}.{key}" if path else str(key)
            if key not in want or key not in got:
                return where, want.get(key, "(absent)"), got.get(key, "(absent)")
            found = _diff(want[key], got[key], where)
            if found is not None:
                return found
        return None
    if isinstance(want, list) and isinstance(got, list):
        for i, (a, b) in enumerate(zip(want, got, strict=False)):
            found = _diff(a, b, f"{path}[{i}]")
            if found is not None:
                return found
        if len(want) != len(got):
            return f"{path} (length)", len(want), len(got)
        return None
    return None if want == got and type(want) is type(got) else (path, want, got)


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(loads_json(arguments or "{}"), sort_keys=True, ensure_ascii=False)
    except ValueError:
        return arguments


def _show(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + f"... (+{len(text) - limit} chars)"
