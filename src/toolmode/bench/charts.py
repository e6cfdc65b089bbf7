"""PNG charts of a bench (matplotlib, Agg backend). Every chart shows mean, sd (error bars/bands) and n.

Layout rules, checked by tests/test_bench_charts.py at 1, 2 and 13 tasks: the title and the legend sit
above the plotting area (never on the data), the SCRIPTED note below it, everything inside the image;
n is stated once in the subtitle and written next to a bar only where it differs from that (horizontal,
above the bar's error bar, so it never has to fit inside a thin bar).
The `*_figure` functions build the figure without saving it, so tests can measure it.
"""

from __future__ import annotations

import io
import math
import os
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

from toolmode import hostfiles
from toolmode.bench.stats import ALL_TASKS, SCRIPTED_NOTE, Cell, Stat

N_LABEL_GID = "n-label"  # the gid of the per-bar n labels (tests find them by it)
BAR_DPI = 110
GROWTH_DPI = 100


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path, dpi: int) -> None:
    """Render to memory, then write without following links (see `hostfiles`)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    with open(hostfiles.open_file(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as out:
        out.write(buf.getvalue())


def _titles(fig: Any, title: str, scripted: bool, width_in: float) -> None:
    """Bold title on top (wrapped to the figure's width); the SCRIPTED note under everything."""
    chars = max(30, int(width_in * 9.5))  # ~9.5 characters of 12 pt bold per inch
    fig.suptitle(textwrap.fill(title, chars), fontsize=12, fontweight="bold")
    if scripted:
        note = textwrap.fill(f"SCRIPTED: {SCRIPTED_NOTE}", max(30, int(width_in * 11)))
        fig.supxlabel(note, color="red", fontsize=10)


def _n_summary(cells: list[Cell]) -> tuple[int | None, int | None, str]:
    """The usual n of task bars and of pooled bars, and the subtitle that states them."""
    task_n = Counter(c.n for c in cells if c.task != ALL_TASKS)
    pooled_n = Counter(c.n for c in cells if c.task == ALL_TASKS)
    usual = task_n.most_common(1)[0][0] if task_n else None
    pooled = pooled_n.most_common(1)[0][0] if pooled_n else None
    parts = []
    if usual is not None:
        mixed = " unless written on it" if len(task_n) > 1 else ""
        parts.append(f"n = {usual} run{'s' if usual != 1 else ''} per bar{mixed}")
    if pooled is not None:
        parts.append(f"pooled bars: n = {pooled}")
    return usual, pooled, "; ".join(parts) or "n = 0"


def _stat(cell: Cell, key: str) -> Stat:
    return cell.success if key == "success" else cell.measures[key]


def grouped_bars_figure(
    cells: list[Cell], key: str, ylabel: str, title: str, *, scripted: bool, percent: bool = False
) -> Any:
    """One group of bars per task (and pooled over tasks), one bar per mode: mean with ±sd, n stated."""
    plt = _plt()
    tasks = list(dict.fromkeys(c.task for c in cells))
    if len([t for t in tasks if t != ALL_TASKS]) == 1:
        tasks = [t for t in tasks if t != ALL_TASKS]  # pooled over one task is that task again
    modes = list(dict.fromkeys(c.mode for c in cells))
    by = {(c.task, c.mode): c for c in cells}
    usual, pooled, n_text = _n_summary([c for c in cells if c.task in tasks])
    subtitle = f"mean ± sd{' (cut at 0 and 100 %)' if percent else ''}; {n_text}"
    width = 0.8 / max(len(modes), 1)
    fig_w = min(16.0, max(7.0, 0.3 * len(tasks) * max(1, len(modes)) + 3))
    subtitle = textwrap.fill(subtitle, max(40, int(fig_w * 11)))
    fig, ax = plt.subplots(figsize=(fig_w, 5.6), layout="constrained")
    small = 8.0 if fig_w <= 10 else 9.5  # a wide chart is shown scaled down in report.html
    scale = 100 if percent else 1
    top = 0.0
    labels: list[tuple[float, float, int]] = []  # (x, y above the error bar, n) of bars whose n is unusual
    for i, mode in enumerate(modes):
        xs, means, sds = [], [], []  # sds: (below, above) each
        for j, task in enumerate(tasks):
            c = by.get((task, mode))
            stat = None if c is None else _stat(c, key)
            if c is None or stat is None or stat.mean is None:
                continue
            x = j - 0.4 + width * (i + 0.5)
            xs.append(x)
            mean, sd = stat.mean * scale, stat.sd * scale
            # a rate stays within 0-100 %: its error bar is cut there
            below, above = (min(sd, mean), min(sd, 100 - mean)) if percent else (sd, sd)
            means.append(mean)
            sds.append((below, above))
            top = max(top, mean + above)
            if stat.n != (pooled if task == ALL_TASKS else usual):
                labels.append((x, mean + above, stat.n))
        if xs:
            yerr = [[b for b, _ in sds], [a for _, a in sds]]
            ax.bar(xs, means, width, yerr=yerr, capsize=2, label=mode, error_kw={"elinewidth": 1})
    if percent:
        top = max(top, 100.0)
    ax.set_ylim(0, top * 1.12 if top > 0 else 1)  # headroom for the n labels above the bars
    texts = [
        ax.annotate(f"n={n}", (x, y), xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                    fontsize=7, gid=N_LABEL_GID)
        for x, y, n in labels
    ]  # fmt: skip
    ax.set_xticks(range(len(tasks)))
    rotate = len(tasks) > 4
    ax.set_xticklabels(tasks, rotation=30 if rotate else 0, ha="right" if rotate else "center", fontsize=small)
    ax.set_xlim(-0.5, len(tasks) - 0.5)
    ax.set_ylabel(ylabel)
    if percent:
        ax.set_yticks(range(0, 101, 20))
    if ax.containers:  # above the plotting area, under the title; the subtitle is the legend's title
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=small, ncols=min(len(modes), 6),
                  frameon=False, title=subtitle, title_fontsize=small + 1)  # fmt: skip
    else:
        ax.set_title(subtitle, fontsize=9)
        ax.set_yticks([])
        ax.text(0.5, 0.5, "not measured (no price known for this model)", transform=ax.transAxes, ha="center")
    ax.grid(axis="y", alpha=0.3)
    _titles(fig, title, scripted, fig_w)
    if texts:
        _fit_labels(fig, ax, texts, width)
    return fig


def _fit_labels(fig: Any, ax: Any, texts: list[Any], bar_width: float) -> None:
    """Shrink n labels wider than their bar a little; stand them upright (above the bar) if 6 pt is too wide."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    x0, x1 = ax.transData.transform([(0, 0), (bar_width, 0)])[:, 0]
    room = abs(x1 - x0)
    for text in texts:
        size = 7.0
        while text.get_window_extent(renderer).width > room and size > 6:
            size -= 0.5
            text.set_fontsize(size)
        if text.get_window_extent(renderer).width > room:
            text.set_fontsize(7)
            text.set_rotation(90)


def grouped_bars(
    cells: list[Cell], key: str, ylabel: str, title: str, path: Path, *, scripted: bool, percent: bool = False
) -> Path:
    """Write `grouped_bars_figure` to `path`."""
    fig = grouped_bars_figure(cells, key, ylabel, title, scripted=scripted, percent=percent)
    _save(fig, path, dpi=BAR_DPI)
    _plt().close(fig)
    return path


def prompt_growth_figure(cells: list[Cell], *, scripted: bool) -> Any:
    """Prompt tokens per request, per task (small multiples), one line per mode: mean with ±sd band."""
    plt = _plt()
    from matplotlib.ticker import MaxNLocator

    tasks = [t for t in dict.fromkeys(c.task for c in cells) if t != ALL_TASKS]
    cols = min(4, max(1, len(tasks)))
    rows = max(1, math.ceil(len(tasks) / cols))
    fig_w = max(7.0, 4.0 * cols)  # one or two panels still get room for the title and the legend
    fig = plt.figure(figsize=(fig_w, 3.1 * rows + 1.5), layout="constrained")
    # The legend gets a strip of its own under the title (a figure legend "outside" would overlap it).
    strip, body = fig.subfigures(2, 1, height_ratios=[0.5, 3.1 * rows + 0.6])
    axes = body.subplots(rows, cols, squeeze=False)
    modes = list(dict.fromkeys(c.mode for c in cells))
    colors = {m: f"C{i}" for i, m in enumerate(modes)}
    for ax, task in zip(axes.flat, tasks, strict=False):
        ns = []
        for c in (c for c in cells if c.task == task):
            points = [(i + 1, s) for i, s in enumerate(c.step_prompt) if s.mean is not None]
            if not points:
                continue
            xs = [x for x, _ in points]
            mean = [s.mean or 0.0 for _, s in points]
            sd = [s.sd for _, s in points]
            ax.plot(xs, mean, marker="o", ms=3, color=colors[c.mode], label=c.mode)
            ax.fill_between(
                xs,
                [m - d for m, d in zip(mean, sd, strict=True)],
                [m + d for m, d in zip(mean, sd, strict=True)],
                color=colors[c.mode],
                alpha=0.15,
            )
            ns.append(c.n)
        n_text = (
            f"n={min(ns)}" if ns and min(ns) == max(ns) else f"n={min(ns, default=0)}–{max(ns, default=0)}"
        )
        ax.set_title(f"{task} ({n_text}/mode)", fontsize=10)
        ax.set_xlabel("request", fontsize=9)
        ax.set_ylabel("prompt tokens", fontsize=9)
        ax.tick_params(labelsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(tasks) :]:
        ax.axis("off")
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:
        strip.legend(handles, labels, loc="center", fontsize=9, ncols=min(len(labels), 6), frameon=False,
                     title="mean ± sd over the runs that reached each request", title_fontsize=10)  # fmt: skip
    _titles(fig, "Prompt size per request", scripted, fig_w)
    return fig


def prompt_growth(cells: list[Cell], path: Path, *, scripted: bool) -> Path:
    """Write `prompt_growth_figure` to `path`."""
    fig = prompt_growth_figure(cells, scripted=scripted)
    _save(fig, path, dpi=GROWTH_DPI)
    _plt().close(fig)
    return path


CHARTS: dict[str, tuple[str, str, str, bool]] = {
    # name: (measure, y label, title, percent)
    "tokens": ("total_tokens", "tokens per episode (prompt + completion)", "Total tokens per task and mode", False),
    "success": ("success", "success rate (%)", "Success rate per task and mode", True),
    "cost": ("cost", "cost per episode (USD)", "Cost per task and mode", False),
}


def all_charts(cells: list[Cell], out_dir: Path, *, scripted: bool) -> dict[str, Path]:
    """Write the four charts; return {name: path}."""
    paths: dict[str, Path] = {}
    for name in ("tokens", "prompt_growth", "success", "cost"):
        if name == "prompt_growth":
            paths[name] = prompt_growth(cells, out_dir / "prompt_growth.png", scripted=scripted)
            continue
        key, ylabel, title, percent = CHARTS[name]
        paths[name] = grouped_bars(
            cells, key, ylabel, title, out_dir / f"{name}.png", scripted=scripted, percent=percent
        )
    return paths


def chart_png(name: str, cells: list[Cell], *, scripted: bool) -> bytes:
    """One of `all_charts`' charts (`tokens`, `prompt_growth`, `success`, `cost`) as PNG bytes, written nowhere."""
    if name == "prompt_growth":
        fig, dpi = prompt_growth_figure(cells, scripted=scripted), GROWTH_DPI
    else:
        key, ylabel, title, percent = CHARTS[name]
        fig, dpi = grouped_bars_figure(cells, key, ylabel, title, scripted=scripted, percent=percent), BAR_DPI
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    _plt().close(fig)
    return buf.getvalue()
