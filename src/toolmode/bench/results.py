"""The bench directory's files: `bench.json` (settings), `results.jsonl` (one line per finished episode).

This module also decides what a resumed bench still has to run (`finished_keys`), so every executor
resumes the same way.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from toolmode import hostfiles
from toolmode.bounded import loads_json
from toolmode.errors import ToolmodeError

RESULTS = "results.jsonl"
SETTINGS = "bench.json"


class BenchDirError(ToolmodeError, ValueError):
    """A bench directory or one of its files cannot be used; the message is one line, fit for a user."""


def episode_key(record: dict[str, Any]) -> tuple[str, str, int]:
    """(task, mode, run): what identifies an episode across an interrupted and a resumed bench."""
    return (str(record["task"]), str(record["mode"]), int(record["run"]))


def errored(record: dict[str, Any]) -> bool:
    """True if an episode ended in an error (harness, model or loop), whatever its step count."""
    return bool(record.get("error")) or record.get("stopped") == "error"


def finished_keys(records: list[dict[str, Any]], *, retry_errors: bool = False) -> set[tuple[str, str, int]]:
    """The episodes a resumed bench skips: every recorded one, except those that measured nothing.

    An episode whose endpoint failed (unreachable, key refused, unknown model: see
    `earlystop.endpoint_failure`) always runs again; with `retry_errors`, so does every errored one.
    """
    from toolmode.bench.earlystop import endpoint_failure

    return {
        episode_key(r)
        for r in records
        if endpoint_failure(r) is None and not (retry_errors and errored(r))
    }


class ResultsFile:
    """Append-only `results.jsonl`, one JSON object per line, flushed as each episode finishes."""

    def __init__(self, bench_dir: Path) -> None:
        self.path = Path(bench_dir) / RESULTS
        self._lock = threading.Lock()
        self._checked_tail = False

    def append(self, record: dict[str, Any]) -> None:
        """Write one episode's record (thread-safe)."""
        line = json.dumps(record, ensure_ascii=False)
        with self._lock:
            if not self._checked_tail:
                drop_torn_tail(self.path)
                self._checked_tail = True
            hostfiles.append_text(self.path, line + "\n")

    def read(self) -> list[dict[str, Any]]:
        """All records; a later record for the same episode replaces an earlier one; a torn last line is skipped."""
        return read_results(self.path.parent)


def drop_torn_tail(path: Path) -> None:
    """Cut a last line that a crash left without its newline, so the next record starts on a line of its own."""
    try:
        with open(hostfiles.open_file(path, os.O_RDWR), "rb+") as f:
            size = f.seek(0, 2)
            if size == 0:
                return
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            f.seek(0)
            data = f.read()
            start = data.rfind(b"\n") + 1
            if _record_or_none(data[start:].decode("utf-8", "replace")) is not None:
                f.write(b"\n")  # a whole record whose newline was lost: keep it
            else:
                f.truncate(start)
    except FileNotFoundError:
        return


def read_results(bench_dir: Path) -> list[dict[str, Any]]:
    """The records of a bench directory, last one per episode, in file order.

    A last line without its newline (a crash while writing) is skipped; any other line that is not an
    episode record raises BenchDirError naming the file and line.
    """
    path = Path(bench_dir) / RESULTS
    try:
        text = hostfiles.read_text(path)
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchDirError(f"cannot read {path}: {_why(exc)}") from None
    return parse_results(text, path)


def parse_results(text: str, path: Path) -> list[dict[str, Any]]:
    """The records in the text of a results file (`path` names it in errors); see `read_results`."""
    lines = text.split("\n")
    torn = lines.pop()  # "" when the file ends with a newline
    latest: dict[tuple[str, str, int], dict[str, Any]] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        record = _record_or_none(line)
        if record is None:
            raise BenchDirError(
                f"{path} line {number} is not an episode record ({line[:60]!r}); remove or fix that line"
            )
        latest[episode_key(record)] = record
    record = _record_or_none(torn)  # an unfinished last line is skipped: the episode runs again on resume
    if record is not None:
        latest[episode_key(record)] = record
    return list(latest.values())


def _record_or_none(line: str) -> dict[str, Any] | None:
    """The episode record on `line`, or None if it is not one."""
    try:
        record = loads_json(line)
    except json.JSONDecodeError:  # ParseLimitError included: a planted line nested 100,000 deep
        return None
    if not isinstance(record, dict):
        return None
    task, mode, run = record.get("task"), record.get("mode"), record.get("run")
    if not (isinstance(task, str) and isinstance(mode, str) and type(run) is int):
        return None
    return record


def write_settings(bench_dir: Path, settings: dict[str, Any]) -> None:
    """Save the bench's settings (so `--resume` and `--report` know what was asked)."""
    hostfiles.write_text(Path(bench_dir) / SETTINGS, json.dumps(settings, indent=2, ensure_ascii=False) + "\n")


def read_settings(bench_dir: Path) -> dict[str, Any]:
    """The saved settings, or {} if there are none; BenchDirError if the file is unreadable or not a JSON object."""
    path = Path(bench_dir) / SETTINGS
    try:
        text = hostfiles.read_text(path)
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchDirError(f"cannot read {path}: {_why(exc)}") from None
    return parse_settings(text, path)


def parse_settings(text: str, path: Path) -> dict[str, Any]:
    """The settings in the text of a `bench.json` (`path` names it in errors); see `read_settings`."""
    try:
        settings = loads_json(text)
    except json.JSONDecodeError as exc:  # ParseLimitError included
        raise BenchDirError(f"cannot read {path}: {_why(exc)}") from None
    if not isinstance(settings, dict):
        raise BenchDirError(f"{path} is not a toolmode bench settings file (expected a JSON object)")
    return settings


def _why(exc: BaseException) -> str:
    """An OS or decoding error in words, without the exception class."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)
