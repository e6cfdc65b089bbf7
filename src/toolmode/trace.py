"""Where run events go: a JSONL file on disk, the terminal, memory, or a stream consumer.

The JSONL sink writes and flushes each event as it happens, so a run that dies keeps every finished step.
The event types themselves live in `toolmode.events`.
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

from toolmode import hostfiles
from toolmode.events import BaseEvent, Event, make_event
from toolmode.textsafe import encodable_json

__all__ = ["Event", "JsonlSink", "MemorySink", "Sink", "Trace", "new_trace_path"]

DELTA_KINDS = frozenset({"text_delta", "reasoning_delta"})  # the `reply` event holds the whole text


class Sink(Protocol):
    """Receives events."""

    def emit(self, event: BaseEvent) -> None:
        """Handle one event."""

    def close(self) -> None:
        """Release resources."""


class JsonlSink:
    """Appends one JSON line per event to a file, flushed per event.

    Every event is written: text that is not valid UTF-8 (lone surrogates) is escaped, `\\xe9`, and an
    event whose data cannot be made JSON at all is written as its kind and the reason.

    The file and its directory are opened without following any link (see `hostfiles`): the default
    `./runs` is inside the default workspace, where sandboxed code could plant one. A refusal raises
    `hostfiles.UnsafeHostPath`.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file = hostfiles.TextAppender(self.path)  # credentials redacted before each line is written

    def emit(self, event: BaseEvent) -> None:
        """Write and flush the event (streamed text pieces are left out: the reply event has the text)."""
        if event.kind in DELTA_KINDS:
            return
        line = _jsonl_line(event)
        try:
            self._file.write(line)
        except UnicodeEncodeError:  # a lone surrogate (an undecodable file name or argv): written escaped
            self._file.write(encodable_json(line))

    def close(self) -> None:
        """Close the file."""
        self._file.close()


def _jsonl_line(event: BaseEvent) -> str:
    """The event as one JSON line; never raises for what the event holds."""
    try:
        line = json.dumps(event.to_dict(), ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError) as exc:  # e.g. a circular structure in a tool's data
        line = json.dumps({"kind": event.kind, "t": event.t, "unwritable": f"{type(exc).__name__}: {exc}"},
                          ensure_ascii=False, default=str)
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

    def emit(self, kind: str, **data: Any) -> None:
        """Send an event of `kind` (typed when `toolmode.events` knows the kind) to every sink."""
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
