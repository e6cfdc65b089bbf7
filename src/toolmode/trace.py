"""Where run events go: a JSONL file on disk, the terminal, memory, or a stream consumer.

The JSONL sink writes and flushes each event as it happens, so a run that dies keeps every finished step;
its file is the run's trajectory (format: docs/CONTRACTS.md), read back with `read(path)`. The event types
themselves live in `toolmode.events`.
"""

from __future__ import annotations

import json
import threading
import time
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from toolmode import hostfiles, trajectory
from toolmode.events import BaseEvent, make_event
from toolmode.textsafe import encodable_json

__all__ = ["JsonlSink", "MemorySink", "Sink", "Trace", "new_trace_path", "read"]

read = trajectory.read

DELTA_KINDS = frozenset({"text_delta", "reasoning_delta"})  # the `reply` event holds the whole text
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)  # one encoder, not one per line


class Sink(Protocol):
    """Receives events."""

    def emit(self, event: BaseEvent) -> None:
        """Handle one event."""

    def close(self) -> None:
        """Release resources."""


class JsonlSink:
    """Appends one JSON line per event to a file (after the format's header line), flushed before anything
    is waited for (see `emit`).

    Every event is written: text that is not valid UTF-8 (lone surrogates) is escaped, `\\xe9`, and an
    event whose data cannot be made JSON at all is written as its kind and the reason.

    The file and its directory are opened without following any link (see `hostfiles`): the default
    `./runs` is inside the default workspace, where sandboxed code could plant one. A refusal raises
    `hostfiles.UnsafeHostPath`.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file = hostfiles.TextAppender(self.path)  # credentials redacted before each line is written
        if self._file.empty():  # a new file starts with the format's header line
            self._file.write(json.dumps(trajectory.header(), ensure_ascii=False) + "\n")

    def emit(self, event: BaseEvent) -> None:
        """Write the event (streamed text pieces are left out: the reply event has the text) and flush it, unless
        another event is written at once after it without anything waited for in between: a reply and its
        message are followed by the reply's calls, a policy's message or the run's end, which flush them too."""
        if event.kind in DELTA_KINDS:
            return
        followed = event.kind == "reply" or (event.kind == "message" and getattr(event, "source", None) == "reply")
        line = _jsonl_line(event)
        try:
            self._file.write(line, flush=not followed)
        except UnicodeEncodeError:  # a lone surrogate (an undecodable file name or argv): written escaped
            self._file.write(encodable_json(line), flush=not followed)

    def close(self) -> None:
        """Close the file."""
        self._file.close()


def _jsonl_line(event: BaseEvent) -> str:
    """The event as one JSON line; never raises for what the event holds."""
    try:
        line = _ENCODER.encode(event.to_dict())
    except (TypeError, ValueError, RecursionError) as exc:  # e.g. a circular structure in a tool's data
        line = _ENCODER.encode({"kind": event.kind, "t": event.t, "unwritable": f"{type(exc).__name__}: {exc}"})
    return line + "\n"


@dataclass
class MemorySink:
    """Keeps events in a list (tests, benchmarks)."""

    events: list[BaseEvent] = field(default_factory=list)

    def emit(self, event: BaseEvent) -> None:
        """Store the event."""
        self.events.append(event)

    def close(self) -> None:
        """Nothing to release."""

    def of(self, kind: str) -> list[BaseEvent]:
        """The events of one kind."""
        return [e for e in self.events if e.kind == kind]


class Trace:
    """Fans events out to sinks; thread-safe (parallel tool calls emit from worker threads)."""

    def __init__(self, sinks: Iterable[Sink] = (), path: Path | None = None) -> None:
        self.sinks = list(sinks)
        self.path = path  # the JSONL file, if one is written
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._runs = 0
        self._last: tuple[int, list[dict[str, Any]]] | None = None  # the last finished run: index, messages

    def next_run(self) -> int:
        """The index of a run starting in this trace (0, 1, ...: a chat session's turns)."""
        with self._lock:
            self._runs += 1
            return self._runs - 1

    def follow(self, runs: int) -> None:
        """This trace appends to a file that already holds `runs` runs: the next run is number `runs`."""
        with self._lock:
            self._runs = max(self._runs, runs)

    def remember_messages(self, messages: list[dict[str, Any]]) -> None:
        """Keep a finished run's conversation, so the next run that continues it can refer to it."""
        with self._lock:
            self._last = (self._runs - 1, messages)

    def find_messages(self, messages: list[dict[str, Any]]) -> tuple[int, int] | None:
        """(run, start) when `messages` are, object for object, a slice of the last finished run's
        conversation in this trace (a chat turn continuing the previous one); else None."""
        if not messages or self._last is None:
            return None
        run, earlier = self._last
        start = next((i for i, m in enumerate(earlier) if m is messages[0]), None)
        if start is None or start + len(messages) > len(earlier):
            return None
        if all(a is b for a, b in zip(earlier[start:start + len(messages)], messages, strict=False)):
            return run, start
        return None

    def emit(self, kind: str, **data: Any) -> None:
        """Send the typed event of `kind` built from `data` (ValueError for an unknown kind) to every sink."""
        self.publish(make_event(kind, data))

    def publish(self, event: BaseEvent) -> None:
        """Stamp `event.t` and send it to every sink. A failing sink never stops the run."""
        event.t = time.monotonic() - self.started
        with self._lock:
            for sink in list(self.sinks):
                try:
                    sink.emit(event)
                except Exception as exc:  # noqa: BLE001 - a broken printer must not kill the agent
                    self.sinks.remove(sink)
                    warnings.warn(f"toolmode: trace sink {type(sink).__name__} failed and was removed: {exc}",
                                  RuntimeWarning, stacklevel=2)

    def close(self) -> None:
        """Close every sink."""
        for sink in self.sinks:
            sink.close()

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_trace_file(runs_dir: Path | str, label: str) -> tuple[JsonlSink | None, str | None]:
    """A JsonlSink on a fresh file under `runs_dir`, or (None, why) when it cannot be written.

    A run goes on without its trace file rather than fail (e.g. `runs` is a planted or dangling symlink).
    """
    try:
        return JsonlSink(new_trace_path(runs_dir, label)), None
    except OSError as exc:
        return None, f"no trace file written: {exc}"


def new_trace_path(runs_dir: Path | str, label: str = "run") -> Path:
    """A fresh file name under `runs_dir`: `<UTC timestamp>-<label>.jsonl`."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-%f")
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in label)[:40]
    return Path(runs_dir) / f"{stamp}-{safe}.jsonl"
