"""The bench directory's files: `bench.json` (settings), `results.jsonl` (one line per finished episode)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

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
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
            out.flush()

    def read(self) -> list[dict[str, Any]]:
        """All records; a later record for the same episode replaces an earlier one; a torn last line is skipped."""
        return read_results(self.path.parent)


def read_results(bench_dir: Path) -> list[dict[str, Any]]:
    """The records of a bench directory, last one per episode, in file order."""
    path = Path(bench_dir) / RESULTS
    if not path.is_file():
        return []
    latest: dict[tuple[str, str, int], dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by a crash while writing
        if isinstance(record, dict) and {"task", "mode", "run"} <= record.keys():
            latest[episode_key(record)] = record
    return list(latest.values())


def write_settings(bench_dir: Path, settings: dict[str, Any]) -> None:
    """Save the bench's settings (so `--resume` and `--report` know what was asked)."""
    (Path(bench_dir) / SETTINGS).write_text(json.dumps(settings, indent=2, ensure_ascii=False) + "\n")


def read_settings(bench_dir: Path) -> dict[str, Any]:
    """The saved settings, or {} if there are none."""
    path = Path(bench_dir) / SETTINGS
    return json.loads(path.read_text()) if path.is_file() else {}
