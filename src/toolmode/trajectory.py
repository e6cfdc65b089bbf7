"""Reading a trace file back: the typed events, every run's exact conversation and every request it made.

The format (version 2) is described in docs/CONTRACTS.md, "The trajectory": a header line, then one
event per line. Version 1 files (no header) are read for their events only. `toolmode.trace.read` is
`read` here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolmode.errors import ToolmodeError
from toolmode.events import (
    BaseEvent,
    Carried,
    ErrorEvent,
    MessageAdded,
    RunEnd,
    RunStart,
    StepUsage,
    ToolsSent,
    make_event,
)

FORMAT = "trajectory"  # the header line's kind
VERSION = 2
READABLE = (1, 2)


class TraceFormatError(ToolmodeError, ValueError):
    """The file is not a trace this toolmode can read (or replay); the message says why in one line."""


def header() -> dict[str, Any]:
    """The first line of a trace file written now."""
    from toolmode import __version__

    return {"kind": FORMAT, "version": VERSION, "toolmode": __version__,
            "started": datetime.now(UTC).isoformat(timespec="microseconds")}


@dataclass
class Request:
    """One model request as it was sent: `body()` is its JSON body (without the stream fields)."""

    step: int
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    model: str | None
    params: dict[str, Any]
    stream: bool = False
    fields: dict[str, Any] = field(default_factory=dict)  # this request's own extra fields (a policy's)

    def body(self) -> dict[str, Any]:
        """`{"model", **params, **fields, "messages", "tools"}` as the client encodes it (no "tools" key when
        empty)."""
        body: dict[str, Any] = {"model": self.model, **self.params, **self.fields, "messages": self.messages}
        if self.tools:
            body["tools"] = self.tools
        return body


@dataclass
class TracedRun:
    """One run of a trace: its events; `messages` (None in version 1) and `requests` rebuilt from them."""

    start: RunStart
    events: list[BaseEvent] = field(default_factory=list)
    end: RunEnd | None = None  # None: the run did not finish (the process died)
    messages: list[dict[str, Any]] | None = None
    requests: list[Request] = field(default_factory=list)

    def of(self, kind: str) -> list[BaseEvent]:
        """The run's events of one kind."""
        return [e for e in self.events if e.kind == kind]


@dataclass
class Trajectory:
    """A trace file read back. `skipped` lists lines that were not events this toolmode knows (line, why)."""

    path: Path
    version: int
    header: dict[str, Any] | None
    events: list[BaseEvent]
    runs: list[TracedRun]
    skipped: list[tuple[int, str]] = field(default_factory=list)

    @property
    def messages(self) -> list[dict[str, Any]] | None:
        """The last run's conversation, exactly as sent (None for version 1, or a file without runs)."""
        return self.runs[-1].messages if self.runs else None


def read(path: str | Path) -> Trajectory:
    """Read the trace file at `path`; TraceFormatError (one line) when it is not a trace of a known version."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise TraceFormatError(f"cannot read the trace {path}: {exc.strerror or exc}") from None
    lines = list(_lines(path, text))
    head = lines[0][1] if lines and lines[0][1].get("kind") == FORMAT else None
    version = _version(path, head)
    events, skipped = _events(lines[1:] if head else lines)
    if head is None and lines and not events:  # e.g. a bench's results.jsonl: JSON lines, none of them an event
        raise TraceFormatError(f"{path} is not a toolmode trace: none of its lines is an event (a bench's "
                               "results.jsonl? a bench keeps each episode's trace under episodes/)")
    runs = _runs(events, version)
    return Trajectory(path, version, head, events, runs, skipped)


def _lines(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    rows = text.splitlines()
    for number, line in enumerate(rows, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested too deep (not a file toolmode wrote)
            if number == len(rows):  # the process died while writing its last line
                return
            raise TraceFormatError(f"{path} is not a toolmode trace: line {number} is not JSON") from None
        if not isinstance(value, dict) or not isinstance(value.get("kind"), str):
            raise TraceFormatError(f"{path} is not a toolmode trace: line {number} is not an event")
        yield number, value


def _version(path: Path, head: dict[str, Any] | None) -> int:
    if head is None:
        return 1
    version = head.get("version")
    if version not in READABLE:
        raise TraceFormatError(f"{path} is a trace of format version {version!r}; this toolmode reads versions "
                               f"{', '.join(map(str, READABLE))} (a newer toolmode wrote it?)")
    return int(version)


def _events(lines: list[tuple[int, dict[str, Any]]]) -> tuple[list[BaseEvent], list[tuple[int, str]]]:
    events: list[BaseEvent] = []
    skipped: list[tuple[int, str]] = []
    for number, data in lines:
        data = dict(data)
        kind, t = data.pop("kind"), data.pop("t", 0.0)
        if kind == "notice" and "id" in data:  # version 1 wrote a repeated call's id and name untyped
            data["call_id"] = data.pop("id")
            data.pop("name", None)
        try:
            events.append(make_event(kind, data, t))
        except ValueError as exc:
            skipped.append((number, str(exc)))
    return events, skipped


def _runs(events: list[BaseEvent], version: int) -> list[TracedRun]:
    runs: list[TracedRun] = []
    for event in events:
        if isinstance(event, RunStart):
            runs.append(TracedRun(event))
        elif runs:
            runs[-1].events.append(event)
            if isinstance(event, RunEnd):
                runs[-1].end = event
    if version >= 2:
        for run in runs:
            _rebuild(run, runs)
    return runs


def _rebuild(run: TracedRun, runs: list[TracedRun]) -> None:
    """The run's messages (carried ranges resolved) and the request behind each reply."""
    messages: list[dict[str, Any]] = []
    tools: list[dict[str, Any]] = []
    request = run.start.request or {}
    for event in run.events:
        if isinstance(event, MessageAdded):
            messages.append(event.message)
        elif isinstance(event, Carried):
            earlier = runs[event.from_run].messages or [] if event.from_run < len(runs) else []
            messages.extend(earlier[event.start:event.start + event.count])
        elif isinstance(event, ToolsSent):
            tools = event.schemas
        elif isinstance(event, StepUsage):
            run.requests.append(_request(run, event.step, messages[:event.sent_messages], tools, request,
                                         event.request_fields))
        elif isinstance(event, ErrorEvent) and event.step and event.step > len(run.requests):
            run.requests.append(_request(run, event.step, list(messages), tools, request,  # it failed for good
                                         event.request_fields))
    run.messages = messages


def _request(run: TracedRun, step: int, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
             request: dict[str, Any], fields: dict[str, Any] | None = None) -> Request:
    return Request(step, messages, tools, request.get("model", run.start.model), dict(request.get("params") or {}),
                   bool(request.get("stream")), dict(fields or {}))
