"""A bench folder as the page shows it: the report's table, notes and charts, made by the bench's own code.

The records and settings are read beneath the served folder (no link followed) and handed to the bench's
parsers, `stats.summarize`, `table.fmt` / `table.title`, `reference.comparison` and `charts.chart_png`, so
the page shows exactly what `report.html` shows. Each episode links to its run page: its recorded trace
path, taken only when it names a file inside the bench folder.
"""

from __future__ import annotations

import posixpath
import threading
from pathlib import Path
from typing import Any

from toolmode.view.folder import BadPath, Folder, check_relative, join
from toolmode.view.loader import number, text

CHART_NAMES = ("tokens", "prompt_growth", "success", "cost")
MAX_RESULTS = 256 * 1024 * 1024
_chart_lock = threading.Lock()  # pyplot keeps global state: one chart at a time
_chart_cache: dict[tuple[str, str, tuple[int, int, int]], bytes] = {}


def _records(folder: Folder, rel: str) -> tuple[list[dict[str, Any]], dict[str, Any], tuple[int, int, int]]:
    from toolmode.bench.results import parse_results, parse_settings

    check_relative(rel, allow_root=True)
    if not folder.is_dir(rel):
        raise BadPath(f"{rel!r} is not a folder here")
    fd, info = folder.open_file(join(rel, "results.jsonl"))
    with open(fd, "rb") as f:
        data = f.read(MAX_RESULTS)
    shown = Path(folder.path, rel)
    records = parse_results(data.decode("utf-8", "replace"), shown / "results.jsonl")
    try:
        raw = folder.read(join(rel, "bench.json"), 16 * 1024 * 1024)
    except FileNotFoundError:
        settings: dict[str, Any] = {}
    else:
        settings = parse_settings(raw.decode("utf-8", "replace"), shown / "bench.json")
    return records, settings, info.key


def episode_trace(rel: str, record: dict[str, Any]) -> str | None:
    """The episode's trace as a path under the served folder, if the record names one inside its bench."""
    trace = record.get("trace")
    if not isinstance(trace, str) or not trace.endswith(".jsonl") or trace.startswith("/"):
        return None
    normal = posixpath.normpath(trace)
    if normal.startswith("../") or normal in (".", "..") or "\x00" in normal:
        return None
    try:
        return check_relative(join(rel, normal))
    except BadPath:
        return None


def bench_view(folder: Folder, rel: str) -> dict[str, Any]:
    """The bench's table (cells formatted as the report formats them), notes, charts and episodes."""
    from toolmode.bench import reference
    from toolmode.bench.report import model_label
    from toolmode.bench.stats import ALL_TASKS, MEASURES, POOLED_NOTE, SCRIPTED_NOTE, is_scripted, summarize
    from toolmode.bench.table import fmt, title

    records, settings, _ = _records(folder, rel)
    scripted = is_scripted(records)
    model = model_label(records, settings)
    cells = summarize(records, settings.get("task_order"), settings.get("mode_order")) if records else []
    rows = [{"task": c.task, "mode": c.mode, "n": c.n, "pooled": c.task == ALL_TASKS,
             "cols": [fmt(c.success, "success")] + [fmt(c.measures[k], k) for k, _ in MEASURES]}
            for c in cells]
    published = reference.comparison(settings, cells, model) if cells else None
    shown_settings = {k: text(settings[k]) for k in ("modes", "tasks", "runs", "model", "base_url", "started", "suite")
                      if settings.get(k) not in (None, "", [])}
    return {
        "path": rel,
        "title": title(scripted, model, len(records)),
        "scripted": scripted,
        "scripted_note": SCRIPTED_NOTE if scripted else None,
        "settings": shown_settings,
        "columns": ["task", "mode", "n", "success", *[label for _, label in MEASURES]],
        "rows": rows,
        "pooled_note": POOLED_NOTE if any(r["pooled"] for r in rows) else None,
        "reference": None if not published else {
            "title": published[0].title, "note": reference.NOTE,
            "rows": [[r.who, r.mode, _figure(r.success, "%"), _figure(r.turns, ""),
                      "—" if r.n is None else str(r.n)] for r in published]},
        "charts": list(CHART_NAMES) if cells else [],
        "episodes": [_episode(rel, r) for r in records],
    }


def _figure(value: float | None, suffix: str) -> str:
    return "—" if value is None else f"{value:.1f}{suffix}"


def _episode(rel: str, r: dict[str, Any]) -> dict[str, Any]:
    prompt, completion = number(r.get("prompt_tokens")), number(r.get("completion_tokens"))
    return {"task": text(r.get("task")), "mode": text(r.get("mode")), "run": number(r.get("run")),
            "ok": r.get("ok") is True, "reason": text(r.get("reason")), "error": text(r.get("error")),
            "stopped": text(r.get("stopped")), "steps": number(r.get("steps")),
            "tokens": None if prompt is None or completion is None else prompt + completion,
            "cached_tokens": number(r.get("cached_tokens")), "cost": number(r.get("cost")),
            "wall_time": number(r.get("wall_time")), "trace": episode_trace(rel, r)}


def chart(folder: Folder, rel: str, name: str) -> bytes:
    """One chart of the bench as PNG bytes, drawn by the bench's chart code from the current results."""
    from toolmode.bench.charts import chart_png
    from toolmode.bench.stats import is_scripted, summarize

    if name not in CHART_NAMES:
        raise BadPath(f"no chart called {name!r}")
    records, settings, key = _records(folder, rel)
    if not records:
        raise BadPath("this bench has no results yet")
    cache_key = (rel, name, key)
    with _chart_lock:
        if cache_key not in _chart_cache:
            cells = summarize(records, settings.get("task_order"), settings.get("mode_order"))
            _chart_cache[cache_key] = chart_png(name, cells, scripted=is_scripted(records))
        return _chart_cache[cache_key]
