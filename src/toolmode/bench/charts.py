"""PNG charts of a bench (matplotlib, Agg backend). Every chart shows mean, sd (error bars/bands) and n."""

from __future__ import annotations

import io
import math
import os
from pathlib import Path
from typing import Any

from toolmode import hostfiles
from toolmode.bench.stats import ALL_TASKS, SCRIPTED_NOTE, Cell


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


def _label(fig: Any, title: str, scripted: bool) -> None:
    fig.suptitle(title, fontsize=12, fontweight="bold")
    if scripted:
        fig.text(0.5, 0.005, f"SCRIPTED: {SCRIPTED_NOTE}", ha="center", va="bottom", color="red", fontsize=10)


def _n_text(cells: list[Cell]) -> str:
    ns = sorted({c.n for c in cells if c.task != ALL_TASKS})
    if not ns:
        return "n = 0"
    return f"n = {ns[0]} runs per bar" if len(ns) == 1 else f"n = {ns[0]}–{ns[-1]} runs per bar"


def grouped_bars(
    cells: list[Cell], key: str, ylabel: str, title: str, path: Path, *, scripted: bool, percent: bool = False
) -> Path:
    """One group of bars per task (and all tasks), one bar per mode: mean with ±sd error bars, n on the bar."""
    plt = _plt()
    tasks = list(dict.fromkeys(c.task for c in cells))
    modes = list(dict.fromkeys(c.mode for c in cells))
    by = {(c.task, c.mode): c for c in cells}
    width = 0.8 / max(len(modes), 1)
    fig, ax = plt.subplots(figsize=(min(16, max(8, 0.3 * len(tasks) * max(1, len(modes)) + 3)), 5.5))
    anything = False
    for i, mode in enumerate(modes):
        xs, means, sds, ns = [], [], [], []
        for j, task in enumerate(tasks):
            c = by.get((task, mode))
            stat = None if c is None else (c.success if key == "success" else c.measures[key])
            if stat is None or stat.mean is None:
                continue
            xs.append(j - 0.4 + width * (i + 0.5))
            scale = 100 if percent else 1
            means.append(stat.mean * scale)
            sds.append(stat.sd * scale)
            ns.append(stat.n)
        if not xs:
            continue
        anything = True
        bars = ax.bar(xs, means, width, yerr=sds, capsize=2, label=mode)
        for bar, n in zip(bars, ns, strict=True):
            ax.annotate(
                f"n={n}",
                (bar.get_x() + bar.get_width() / 2, 0),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=6,
                rotation=90,
            )
    ax.set_xticks(range(len(tasks)))
    ax.set_xticklabels(tasks, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(f"mean ± sd; {_n_text(cells)}", fontsize=9)
    if anything:
        ax.legend(fontsize=8, ncols=min(len(modes), 4))
    else:
        ax.text(0.5, 0.5, "not measured (no price known for this model)", transform=ax.transAxes, ha="center")
    ax.grid(axis="y", alpha=0.3)
    _label(fig, title, scripted)
    fig.tight_layout(rect=(0, 0.03, 1, 0.97))
    _save(fig, path, dpi=110)
    plt.close(fig)
    return path


def prompt_growth(cells: list[Cell], path: Path, *, scripted: bool) -> Path:
    """Prompt tokens per request, per task (small multiples), one line per mode: mean with ±sd band."""
    plt = _plt()
    from matplotlib.ticker import MaxNLocator

    tasks = [t for t in dict.fromkeys(c.task for c in cells) if t != ALL_TASKS]
    cols = min(4, max(1, len(tasks)))
    rows = max(1, math.ceil(len(tasks) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.1 * rows + 0.6), squeeze=False)
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
        ax.set_title(f"{task} ({n_text}/mode)", fontsize=9)
        ax.set_xlabel("request", fontsize=8)
        ax.set_ylabel("prompt tokens", fontsize=8)
        ax.tick_params(labelsize=7)
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
        fig.legend(handles, labels, loc="upper right", fontsize=8, ncols=min(len(labels), 6))
    _label(fig, "Prompt size per request (mean ± sd over runs that reached that request)", scripted)
    fig.tight_layout(rect=(0, 0.03, 1, 0.93))
    _save(fig, path, dpi=100)
    plt.close(fig)
    return path


def all_charts(cells: list[Cell], out_dir: Path, *, scripted: bool) -> dict[str, Path]:
    """Write the four charts; return {name: path}."""
    return {
        "tokens": grouped_bars(
            cells,
            "total_tokens",
            "tokens per episode (prompt + completion)",
            "Total tokens per task and mode",
            out_dir / "tokens.png",
            scripted=scripted,
        ),
        "prompt_growth": prompt_growth(cells, out_dir / "prompt_growth.png", scripted=scripted),
        "success": grouped_bars(
            cells,
            "success",
            "success rate (%)",
            "Success rate per task and mode",
            out_dir / "success.png",
            scripted=scripted,
            percent=True,
        ),
        "cost": grouped_bars(
            cells,
            "cost",
            "cost per episode (USD)",
            "Cost per task and mode",
            out_dir / "cost.png",
            scripted=scripted,
        ),
    }
