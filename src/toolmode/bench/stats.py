"""Aggregate episode records per task and mode: mean, standard deviation and n of every measure."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

# (record key, column label) of the measures the table, CSV and charts report.
MEASURES: list[tuple[str, str]] = [
    ("steps", "requests"),
    ("prompt_tokens", "prompt tok"),
    ("completion_tokens", "completion tok"),
    ("cached_tokens", "cached tok"),
    ("total_tokens", "total tok"),
    ("cost", "cost $"),
    ("wall_time", "wall s"),
]
ALL_TASKS = "pooled over tasks"  # the per-mode rows over every task's episodes
POOLED_NOTE = (
    "pooled over tasks: all episodes of a mode together; their sd includes the differences between "
    "tasks, so it is not run-to-run spread"
)
SCRIPTED_NOTE = "scripted replies — tests the harness, not a model"


@dataclass
class Stat:
    """Mean, sample standard deviation and count of one measure (mean None when nothing was measured)."""

    mean: float | None
    sd: float
    n: int

    @classmethod
    def of(cls, values: list[float]) -> Stat:
        """Summarise values (sd 0 for fewer than two)."""
        if not values:
            return cls(None, 0.0, 0)
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return cls(statistics.fmean(values), sd, len(values))


@dataclass
class Cell:
    """One task × mode: episodes, success rate and the measures."""

    task: str
    mode: str
    n: int
    success: Stat
    measures: dict[str, Stat] = field(default_factory=dict)
    step_prompt: list[Stat] = field(default_factory=list)


def _value(record: dict[str, Any], key: str) -> float | None:
    if key == "total_tokens":
        p, c = record.get("prompt_tokens"), record.get("completion_tokens")
        return None if p is None or c is None else float(p + c)
    value = record.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _curve(value: Any) -> list[float]:
    """Per-request prompt tokens, or [] if the record's value is not a list of numbers."""
    if not isinstance(value, list) or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        return []
    return [float(v) for v in value]


def cell(task: str, mode: str, records: list[dict[str, Any]]) -> Cell:
    """Aggregate the records of one task and mode. Failed episodes count in every measure they have."""
    success = Stat.of([1.0 if r.get("ok") else 0.0 for r in records])
    measures = {}
    for key, _ in MEASURES:
        values = [v for r in records if (v := _value(r, key)) is not None]
        measures[key] = Stat.of(values)
    curves = [_curve(r.get("step_prompt_tokens")) for r in records]
    longest = max((len(c) for c in curves), default=0)
    step_prompt = [Stat.of([float(c[i]) for c in curves if len(c) > i]) for i in range(longest)]
    return Cell(task, mode, len(records), success, measures, step_prompt)


def order(records: list[dict[str, Any]], key: str, preferred: list[str] | None = None) -> list[str]:
    """Distinct values of `key`, in `preferred` order first, then as first seen."""
    seen = list(dict.fromkeys(str(r[key]) for r in records))
    first = [v for v in (preferred or []) if v in seen]
    return first + [v for v in seen if v not in first]


def summarize(
    records: list[dict[str, Any]], tasks: list[str] | None = None, modes: list[str] | None = None
) -> list[Cell]:
    """Cells for every task × mode that has records, then one `pooled over tasks` cell per mode."""
    task_order = order(records, "task", tasks)
    mode_order = order(records, "mode", modes)
    cells = []
    for task in task_order:
        for mode in mode_order:
            group = [r for r in records if r["task"] == task and r["mode"] == mode]
            if group:
                cells.append(cell(task, mode, group))
    for mode in mode_order:
        group = [r for r in records if r["mode"] == mode]
        if group:
            cells.append(cell(ALL_TASKS, mode, group))
    return cells


def is_scripted(records: list[dict[str, Any]]) -> bool:
    """True if any episode was played by the scripted server (then every output says so)."""
    return any(r.get("scripted") for r in records)
