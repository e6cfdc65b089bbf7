"""A trace file as the plain structure the page shows: a summary for the list, its runs for the run page.

Everything in a trace may come from the model (task, answer, arguments, printed output, even field types), so
nothing here trusts a field: strings are taken only when they are strings (anything else is shown as its JSON
text), numbers only when finite. Unknown event kinds are kept and shown as they are; a line that is not JSON
(a crash cut it, or it was planted) is reported, never fatal.

Formats (docs/CONTRACTS.md, "The trajectory"): version 1 starts with `run_start` and has no record of the
system prompt or of the messages as sent; a run from such a trace says so (`missing`). Version 2 starts with
a header line (`{"kind": "trajectory", "version": 2, ...}`), writes the system prompt on `run_start` and
every message as a `message` event, and may hold several runs (a chat session): each is shown as a turn.
A version this viewer does not know is shown as far as it reads, with a warning. One run's events become
its steps in `timeline`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from toolmode.view.jsonlines import Decoded
from toolmode.view.timeline import RunBuilder
from toolmode.view.values import number, pretty, text, usage  # noqa: F401 - also the loader's own helpers

PREVIEW = 400  # characters of task / answer kept in the list's summary (the run page has them whole)
_HEADER_KEYS = ("version", "format")
KNOWN_VERSIONS = (1, 2)
_STAMP = re.compile(r"(\d{8})-(\d{6})")  # trace files are named <YYYYmmdd-HHMMSS-ffffff>-<label>.jsonl


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
        tokens = usage(end.get("usage"))
        row.update(
            answer=_clip(text(end.get("answer"))),
            stopped=text(end.get("stopped")),
            limit=text(end.get("limit")),
            error=_clip(text(end.get("error"))),
            steps=number(end.get("steps")),
            prompt_tokens=tokens["prompt_tokens"],
            completion_tokens=tokens["completion_tokens"],
            cached_tokens=tokens["cached_tokens"],
            cost=number(end.get("cost")),
            wall_time=number(end.get("wall_time")),
        )
    else:
        last_step = number(end.get("step")) if isinstance(end, dict) else None
        row.update(answer=None, stopped="unfinished", limit=None, error=None, steps=last_step,
                   prompt_tokens=None, completion_tokens=None, cached_tokens=None, cost=None, wall_time=None)
    return row




def add_turns(row: dict[str, Any], turns: int | None, ends: list[Decoded]) -> None:
    """A session's list row: its turns counted, and tokens, cost, time and steps added up over its turns."""
    row["turns"] = turns
    finished = [d.value for d in ends if isinstance(d.value, dict) and d.value.get("kind") == "run_end"]
    if not turns or turns < 2 or not finished:
        return
    totals = [usage(end.get("usage")) for end in finished]
    for key in ("prompt_tokens", "completion_tokens", "cached_tokens"):
        values = [t[key] for t in totals]
        row[key] = None if any(v is None for v in values) else sum(v for v in values if v is not None)
    for key in ("cost", "wall_time", "steps"):
        values = [number(end.get(key)) for end in finished]
        row[key] = None if any(v is None for v in values) else sum(v for v in values if v is not None)


def load_file(path: str, lines: list[Decoded], ends_with_newline: bool, mtime: float) -> dict[str, Any]:
    """The whole trace as the run page shows it: its runs (turns) in order. `lines`: every line, decoded."""
    problems: list[str] = []
    if any(d.replaced for d in lines):
        problems.append("some bytes in this trace are not UTF-8; they are shown as \ufffd")
    bad = [i for i, d in enumerate(lines, 1) if not isinstance(d.value, dict)]
    if bad and bad[-1] == len(lines) and not ends_with_newline:
        problems.append(f"the last line (line {len(lines)}) is cut: the run stopped while it was written")
        bad = bad[:-1]
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")
        many = len(bad) > 1
        problems.append(f"line{'s' if many else ''} {shown} {'are' if many else 'is'} not a JSON object and not shown")
    start, fmt = find_start(lines[:3])
    if start is None:
        problems.insert(0, "no run_start event in its first lines: this may not be a toolmode trace")
    if fmt is not None and fmt not in KNOWN_VERSIONS:
        problems.insert(0, f"this trace is in format version {fmt}, which this viewer does not know (it reads "
                           "versions 1 and 2): what it could read is shown; update toolmode to see it all")
    runs: list[dict[str, Any]] = []
    builder: RunBuilder | None = None
    for event in _events(lines):
        if event.get("kind") == "run_start" or builder is None:
            if builder is not None:
                runs.append(builder.result())
            elif event.get("kind") != "run_start" and format_of(event) is not None:
                continue  # the header line
            builder = RunBuilder(len(runs), runs)
        builder.take(event)
    if builder is not None:
        runs.append(builder.result())
    for run in runs:
        problems.extend(run.pop("problems"))
    return {"path": path, "format": fmt, "problems": problems, "runs": runs,
            "summary": summary(path, lines[:3], lines[-2:], ends_with_newline, mtime) if start else None}
