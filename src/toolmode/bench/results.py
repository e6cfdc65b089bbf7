"""The bench directory's files: `bench.json` (settings), `results.jsonl` (one line per finished episode)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from toolmode import hostfiles

RESULTS = "results.jsonl"
SETTINGS = "bench.json"


def episode_key(record: dict[str, Any]) -> tuple[str, str, int]:
    """(task, mode, run): what identifies an episode across an interrupted and a resumed bench."""
    return (str(record["task"]), str(record["mode"]), int(record["run"]))


class ResultsFile:
    """Append-only `results.jsonl`, one JSON object per line, flushed as each episode finishes."""

    def __init__(self, bench_dir: Path) -> None:
        self.path = Path(bench_dir) / RESULTS
        self._lock = threading.Lock()

    def append(self, record: dict[str, Any]) -> None:
        """Write one episode's record (thread-safe)."""
        line = json.dumps(record, ensure_ascii=False)
        with self._lock:
            hostfiles.append_text(self.path, line + "\n")

    def read(self) -> list[dict[str, Any]]:
        """All records; a later record for the same episode replaces an earlier one; a torn last line is skipped."""
        return read_results(self.path.parent)


def read_results(bench_dir: Path) -> list[dict[str, Any]]:
    """The records of a bench directory, last one per episode, in file order."""
    path = Path(bench_dir) / RESULTS
    try:
        text = hostfiles.read_text(path)
    except FileNotFoundError:
        return []
    latest: dict[tuple[str, str, int], dict[str, Any]] = {}
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by a crash while writing
        if isinstance(record, dict) and {"task", "mode", "run"} <= record.keys():
            latest[episode_key(record)] = record
    return list(latest.values())


def write_settings(bench_dir: Path, settings: dict[str, Any]) -> None:
    """Save the bench's settings (so `--resume` and `--report` know what was asked)."""
    hostfiles.write_text(Path(bench_dir) / SETTINGS, json.dumps(settings, indent=2, ensure_ascii=False) + "\n")


def read_settings(bench_dir: Path) -> dict[str, Any]:
    """The saved settings, or {} if there are none."""
    try:
        return json.loads(hostfiles.read_text(Path(bench_dir) / SETTINGS))
    except FileNotFoundError:
        return {}
