"""The terminal table (rich) and summary.csv of a bench."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from toolmode import hostfiles
from toolmode.bench.stats import ALL_TASKS, MEASURES, POOLED_NOTE, SCRIPTED_NOTE, Cell, Stat

_SHORT = {"requests": "req", "prompt tok": "prompt", "completion tok": "compl", "cached tok": "cached"}
_DIGITS = {"wall_time": 2, "steps": 1}


def fmt(stat: Stat, key: str, *, compact: bool = False) -> str:
    """`mean ± sd` with digits fit for the measure; `—` when nothing was measured.

    `compact` (narrow terminal) puts the sd on a second line and writes large counts as `12.3k`.
    """
    if stat.mean is None:
        return "—"
    if stat.n < 2:  # one run has no spread: show the value alone
        return fmt(Stat(stat.mean, 0.0, 2), key, compact=False).split(" ± ")[0]
    sep = "\n±" if compact else " ± "
    if key == "success":
        return f"{stat.mean:.0%}{sep}{stat.sd:.0%}"
    if key == "cost":
        return f"{stat.mean:.4f}{sep}{stat.sd:.4f}"
    if compact and key not in _DIGITS:
        return f"{_count(stat.mean)}{sep}{_count(stat.sd)}"
    digits = _DIGITS.get(key, 0) - (1 if compact and key == "wall_time" else 0)
    return f"{stat.mean:,.{digits}f}{sep}{stat.sd:,.{digits}f}"


def _count(value: float) -> str:
    return f"{value / 1000:.1f}k" if abs(value) >= 10_000 else f"{value:,.0f}"


def title(scripted: bool, model: str | None, episodes: int) -> str:
    """The table title; a scripted run says so first."""
    text = f"toolmode bench — {model or 'model ?'} — {episodes} episodes (mean ± sd over n runs)"
    return f"[SCRIPTED: {SCRIPTED_NOTE}] {text}" if scripted else text


def render_table(
    cells: list[Cell], *, scripted: bool, model: str | None, episodes: int, narrow: bool = False
) -> Any:
    """A rich Table: one row per task and mode, then one row per mode pooled over all tasks.

    `narrow` (a terminal under 150 columns) writes each task name on a row of its own with its modes
    indented below, so task names stay whole and the table fits 80 columns.
    """
    from rich import box
    from rich.table import Table

    table = Table(
        title=title(scripted, model, episodes),
        title_style="bold red" if scripted else "bold",
        caption=POOLED_NOTE if any(c.task == ALL_TASKS for c in cells) else None,
        caption_justify="left",
        box=box.SIMPLE_HEAD if narrow else box.HEAVY_HEAD,
        pad_edge=not narrow,
        collapse_padding=narrow,
    )
    longest = max((len(c.task) for c in cells), default=4)
    if narrow:
        longest = max([longest, *(len(c.mode) + 2 for c in cells)])
        table.add_column("task / mode", no_wrap=True, min_width=longest)
    else:
        table.add_column("task", no_wrap=True, min_width=longest)
        table.add_column("mode", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("success" if not narrow else "ok", justify="right", no_wrap=True)
    for _, label in MEASURES:
        if label != "total tok":
            table.add_column(_SHORT.get(label, label) if narrow else label, justify="right", no_wrap=True)
    previous = None
    for c in cells:
        name = c.task if c.task != ALL_TASKS else f"[bold]{ALL_TASKS}[/]"
        if c.task != previous:
            if previous is not None:
                table.add_section()
            if narrow:
                table.add_row(f"[bold]{c.task}[/]")
        previous = c.task
        row = [f"  {c.mode}"] if narrow else [name, c.mode]
        row += [str(c.n), fmt(c.success, "success", compact=narrow)]
        row += [fmt(c.measures[k], k, compact=narrow) for k, label in MEASURES if label != "total tok"]
        table.add_row(*row)
    return table


def write_csv(path: Path, cells: list[Cell], *, scripted: bool, model: str | None) -> None:
    """summary.csv: one row per cell with mean and sd of every measure; scripted runs labelled per row."""
    header = ["task", "mode", "n", "success_rate", "success_sd"]
    for key, _ in MEASURES:
        header += [f"{key}_mean", f"{key}_sd", f"{key}_n"]
    header += ["model", "scripted", "note"]
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(header)
    for c in cells:
        row: list[Any] = [c.task, c.mode, c.n, _num(c.success.mean), _num(c.success.sd)]
        for key, _ in MEASURES:
            s = c.measures[key]
            row += [_num(s.mean), _num(s.sd), s.n]
        row += [model or "", str(scripted).lower(), SCRIPTED_NOTE if scripted else ""]
        writer.writerow(row)
    hostfiles.write_text(path, out.getvalue())


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"
