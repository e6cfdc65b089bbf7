"""A trace file as the plain structure the page shows: a summary for the list, a timeline for one run.

Everything in a trace may come from the model (task, answer, arguments, printed output, even field types), so
nothing here trusts a field: strings are taken only when they are strings (anything else is shown as its JSON
text), numbers only when finite. Unknown event kinds are kept and shown as they are; a line that is not JSON
(a crash cut it, or it was planted) is reported, never fatal.

Formats: a trace from toolmode's first JSONL format starts with `run_start` and has no record of the system
prompt or of the messages as sent; a run from such a trace says so (`missing`). A later, versioned trace may
begin with a header line (any kind carrying `format` / `version`) and carry `system_prompt` and `messages`
fields on its events; both are read when present.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from typing import Any

from toolmode.view.jsonlines import Decoded, decode

PREVIEW = 400  # characters of task / answer kept in the list's summary (the run page has them whole)
_HEADER_KEYS = ("format", "version", "format_version", "trace_format")
_STAMP = re.compile(r"(\d{8})-(\d{6})")  # trace files are named <YYYYmmdd-HHMMSS-ffffff>-<label>.jsonl


def text(value: Any) -> str | None:
    """A string field: the string itself, None for null/missing, the JSON text of anything else."""
    if value is None or isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return "(a value too deeply nested to show)"


def number(value: Any) -> float | int | None:
    """A numeric field when it is a finite int or float (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def pretty(value: Any) -> str:
    """Indented JSON text of a decoded value (its compact form if nesting is too deep to indent)."""
    try:
        return json.dumps(value, ensure_ascii=False, indent=2)
    except RecursionError:
        return text(value) or ""


def _clip(value: str | None, limit: int = PREVIEW) -> str | None:
    return value if value is None or len(value) <= limit else value[:limit] + "…"


def format_of(event: dict[str, Any]) -> int | str | None:
    """The format version a header or `run_start` line declares, or None (toolmode's first format)."""
    for key in _HEADER_KEYS:
        value = event.get(key)
        if isinstance(value, int | str) and not isinstance(value, bool):
            return value
    return None


def started_at(name: str, mtime: float) -> str:
    """When the run started: the UTC stamp in the trace's file name, else the file's modification time."""
    found = _STAMP.search(name)
    if found:
        try:
            stamp = datetime.strptime("".join(found.groups()), "%Y%m%d%H%M%S").replace(tzinfo=UTC)
            return stamp.isoformat(timespec="seconds")
        except ValueError:
            pass
    return datetime.fromtimestamp(mtime, UTC).isoformat(timespec="seconds")


def _usage(value: Any) -> dict[str, float | int | None]:
    usage = value if isinstance(value, dict) else {}
    return {key: number(usage.get(key)) for key in ("prompt_tokens", "completion_tokens", "cached_tokens",
                                                       "reasoning_tokens")}


def _events(lines: list[Decoded]) -> list[dict[str, Any]]:
    return [d.value for d in lines if isinstance(d.value, dict)]


def find_start(head: list[Decoded]) -> tuple[dict[str, Any] | None, int | str | None]:
    """The `run_start` event among a trace's first lines, and the format a header line (or it) declares."""
    fmt = None
    for event in _events(head):
        if event.get("kind") == "run_start":
            return event, format_of(event) if fmt is None else fmt
        fmt = format_of(event) if fmt is None else fmt
    return None, fmt


def summary(path: str, head: list[Decoded], tail: list[Decoded], ends_with_newline: bool,
            mtime: float) -> dict[str, Any] | None:
    """What the list shows of one trace, from its first lines and its last two; None if it is no trace."""
    start, fmt = find_start(head)
    if start is None:
        return None
    end = tail[-1].value if tail and isinstance(tail[-1].value, dict) else None
    torn = bool(tail) and (end is None or not ends_with_newline)
    if torn and len(tail) > 1 and isinstance(tail[-2].value, dict):
        end = tail[-2].value  # the last whole event
    finished = isinstance(end, dict) and end.get("kind") == "run_end"
    row: dict[str, Any] = {
        "path": path,
        "format": fmt,
        "started": started_at(path.rsplit("/", 1)[-1], mtime),
        "task": _clip(text(start.get("task"))),
        "mode": text(start.get("mode")),
        "model": text(start.get("model")),
        "finished": finished,
        "torn": torn,
        "replaced": any(d.replaced for d in head + tail),
    }
    if finished and end is not None:
        usage = _usage(end.get("usage"))
        row.update(
            answer=_clip(text(end.get("answer"))),
            stopped=text(end.get("stopped")),
            limit=text(end.get("limit")),
            error=_clip(text(end.get("error"))),
            steps=number(end.get("steps")),
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            cached_tokens=usage["cached_tokens"],
            cost=number(end.get("cost")),
            wall_time=number(end.get("wall_time")),
        )
    else:
        last_step = number(end.get("step")) if isinstance(end, dict) else None
        row.update(answer=None, stopped="unfinished", limit=None, error=None, steps=last_step,
                   prompt_tokens=None, completion_tokens=None, cached_tokens=None, cost=None, wall_time=None)
    return row


# ----------------------------------------------------------------------------- one run, whole


class _Timeline:
    """Builds the steps of a run from its events, in file order."""

    def __init__(self) -> None:
        self.steps: dict[int, dict[str, Any]] = {}
        self.waiting: list[dict[str, Any]] = []  # events without a step: they belong to the step that follows
        self.calls: dict[tuple[int, str], dict[str, Any]] = {}
        self.last = 0

    def step(self, number_: int) -> dict[str, Any]:
        found = self.steps.get(number_)
        if found is None:
            found = self.steps[number_] = {"step": number_, "items": []}
        return found

    def add(self, step: Any, item: dict[str, Any]) -> None:
        at = number(step)
        if not isinstance(at, int) or at < 0:
            self.waiting.append(item)
            return
        self.last = max(self.last, at)
        items = self.step(at)["items"]
        if self.waiting:
            items.extend(self.waiting)
            self.waiting = []
        items.append(item)

    def call(self, event: dict[str, Any], finished: bool) -> None:
        step = number(event.get("step"))
        key = (step if isinstance(step, int) else -1, text(event.get("id")) or "")
        found = self.calls.get(key) if key[1] else None
        if found is None:
            found = _call(event)
            if key[1]:
                self.calls[key] = found
            self.add(step, found)
        if finished:
            found.update(result=text(event.get("result")), error=event.get("error") is True,
                         seconds=number(event.get("seconds")), ran=True)

    def close(self, replies: dict[int, list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """The steps in order; calls a reply asked for that never started are added as not run."""
        for at, requested in replies.items():
            started = {key[1] for key in self.calls if key[0] == at}
            for call in requested:
                if call["id"] and call["id"] not in started:
                    self.step(at)["items"].append(call)
        if self.waiting:
            self.step(self.last + 1 if self.steps else 0)["items"].extend(self.waiting)
        return [self.steps[k] for k in sorted(self.steps)]


def _call(event: dict[str, Any]) -> dict[str, Any]:
    """A tool call as shown: its arguments pretty-printed, and a run_code program highlighted."""
    arguments = text(event.get("arguments")) or ""
    item: dict[str, Any] = {"type": "call", "id": text(event.get("id")), "name": text(event.get("name")),
                            "arguments": arguments, "pretty": None, "code": None, "code_tokens": None,
                            "result": None, "error": False, "seconds": None, "ran": False}
    parsed = decode(arguments.encode("utf-8", "surrogatepass")).value if arguments else None
    if isinstance(parsed, dict):
        code = parsed.get("code") if item["name"] == "run_code" else None
        if isinstance(code, str):
            from toolmode.view.highlight import python_tokens

            item["code"], item["code_tokens"] = code, python_tokens(code)
            parsed = {k: v for k, v in parsed.items() if k != "code"}
        item["pretty"] = pretty(parsed) if parsed else ""
    return item


def _reply(event: dict[str, Any]) -> dict[str, Any]:
    return {"type": "reply", "usage": _usage(event.get("usage")), "cost": number(event.get("cost")),
            "seconds": number(event.get("seconds")), "content": text(event.get("content")),
            "reasoning": text(event.get("reasoning")), "finish_reason": text(event.get("finish_reason")),
            "recovered": text(event.get("recovered")), "attempts": number(event.get("attempts")),
            "model": text(event.get("model"))}


def _requested(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls a reply asked for, as not-yet-run call items."""
    calls = event.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [_call(c) for c in calls if isinstance(c, dict)]


def _messages(value: Any) -> list[dict[str, Any]] | None:
    """Messages as sent to the model (OpenAI chat format), each field made safe to show."""
    if not isinstance(value, list):
        return None
    shown = []
    for message in value:
        if not isinstance(message, dict):
            shown.append({"role": "?", "content": text(message), "tool_calls": None, "tool_call_id": None})
            continue
        content = message.get("content")
        if isinstance(content, list):  # content parts: keep their text
            content = "\n".join(text(p.get("text")) or "" if isinstance(p, dict) else text(p) or "" for p in content)
        calls = message.get("tool_calls")
        shown.append({
            "role": text(message.get("role")),
            "content": text(content),
            "tool_calls": pretty(calls) if isinstance(calls, list) else None,
            "tool_call_id": text(message.get("tool_call_id")),
        })
    return shown


def load_run(path: str, lines: list[Decoded], ends_with_newline: bool, mtime: float) -> dict[str, Any]:
    """The whole run as the page shows it. `lines`: every line of the file, decoded, in order."""
    problems: list[str] = []
    if any(d.replaced for d in lines):
        problems.append("some bytes in this trace are not UTF-8; they are shown as \ufffd")
    bad = [i for i, d in enumerate(lines, 1) if not isinstance(d.value, dict)]
    if bad and bad[-1] == len(lines) and not ends_with_newline:
        problems.append(f"the last line (line {len(lines)}) is cut: the run stopped while it was written")
        bad = bad[:-1]
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")
        problems.append(f"line{'s' if len(bad) > 1 else ''} {shown} {'are' if len(bad) > 1 else 'is'} not a JSON "
                        "object and not shown")
    start, fmt = find_start(lines[:3])
    timeline = _Timeline()
    replies: dict[int, list[dict[str, Any]]] = {}
    run: dict[str, Any] = {"path": path, "format": fmt, "problems": problems, "start": None, "end": None,
                           "tool_sets": [], "system_prompt": None, "messages": None, "unknown": {}}
    for event in _events(lines):
        _take(event, run, timeline, replies)
    run["steps"] = timeline.close(replies)
    if start is None:
        problems.insert(0, "no run_start event: this may not be a toolmode trace")
    head = [d for d in lines[:3]]
    tail = lines[-2:]
    run["summary"] = summary(path, head, tail, ends_with_newline, mtime) if start is not None else None
    run["missing"] = [what for what, have in (
        ("the system prompt", run["system_prompt"] is not None),
        ("the messages exactly as the model saw them", run["messages"] is not None),
    ) if not have]
    return run


def _take(event: dict[str, Any], run: dict[str, Any], timeline: _Timeline,
          replies: dict[int, list[dict[str, Any]]]) -> None:
    """Fold one event into the run."""
    kind = event.get("kind")
    if isinstance(event.get("system_prompt"), str):
        run["system_prompt"] = event["system_prompt"]
    if "messages" in event and (messages := _messages(event["messages"])) is not None:
        run["messages"] = messages  # each request's list holds the whole conversation: keep the latest
    if kind == "run_start":
        run["start"] = {"task": text(event.get("task")), "mode": text(event.get("mode")),
                        "model": text(event.get("model")), "base_url": text(event.get("base_url")),
                        "tools_sent": [text(t) for t in event.get("tools_sent") or [] if t is not None]
                        if isinstance(event.get("tools_sent"), list) else [],
                        "notes": [text(n) for n in event.get("notes")] if isinstance(event.get("notes"), list)
                        else [], "history": number(event.get("history"))}
    elif kind == "run_end":
        run["end"] = {"answer": text(event.get("answer")), "stopped": text(event.get("stopped")),
                      "error": text(event.get("error")), "limit": text(event.get("limit")),
                      "usage": _usage(event.get("usage")), "cost": number(event.get("cost")),
                      "wall_time": number(event.get("wall_time")), "model_time": number(event.get("model_time")),
                      "steps": number(event.get("steps"))}
    elif kind == "tools":
        names = event.get("names")
        run["tool_sets"].append({
            "step": number(event.get("step")),
            "names": [text(n) for n in names] if isinstance(names, list) else [],
            "schemas": pretty(event.get("schemas")),
        })
    elif kind == "reply":
        timeline.add(event.get("step"), _reply(event))
        step = number(event.get("step"))
        if isinstance(step, int):
            replies[step] = _requested(event)
    elif kind in ("tool_call", "tool_result"):
        timeline.call(event, finished=kind == "tool_result")
    elif kind == "retry":
        timeline.add(None, {"type": "retry", "attempt": number(event.get("attempt")),
                            "wait": number(event.get("wait")), "reason": text(event.get("reason"))})
    elif kind in ("notice", "error"):
        timeline.add(event.get("step"), {"type": kind, "message": text(event.get("message"))})
    elif not (run["start"] is None and format_of(event) is not None):  # not the header line
        name = text(kind) or "?"
        run["unknown"][name] = run["unknown"].get(name, 0) + 1
        shown = {k: v for k, v in event.items() if k != "t"}
        timeline.add(event.get("step"), {"type": "event", "kind": name, "text": pretty(shown)})
