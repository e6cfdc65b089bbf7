"""The bench charts at 1, 2 and 13 tasks, measured: titles whole, legends off the data, n labels readable.

The figures are rendered with matplotlib's Agg backend exactly as `all_charts` saves them; the checks
read the drawn positions (window extents in pixels) of the title, legend, axes, tick labels and labels.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib")

from toolmode.bench.charts import (  # noqa: E402 - after the importorskip
    CHARTS,
    N_LABEL_GID,
    all_charts,
    grouped_bars_figure,
    prompt_growth_figure,
)
from toolmode.bench.stats import summarize  # noqa: E402
from toolmode.bench.suite import builtin_suite  # noqa: E402

MODES = ["react", "code", "hybrid", "code+search"]
SLACK = 1.0  # pixels


def _records(tasks: int, *, ragged: bool) -> list[dict[str, Any]]:
    """Episode records like a bench's: 3 runs per cell; `ragged` drops runs so some cells have n = 1 or 2."""
    names = [t.name for t in builtin_suite()][:tasks]
    out = []
    for ti, task in enumerate(names):
        for mi, mode in enumerate(MODES):
            for run in (1, 2, 3):
                if ragged and (ti + mi) % 3 == 0 and run > 1 + (ti % 2):
                    continue  # an interrupted bench: this cell has fewer runs
                steps = 2 + (5 - mi) * (ti % 3 + 1) // 2
                prompt = [900 + 600 * k * (4 - mi) + 37 * run for k in range(steps)]
                out.append({
                    "task": task, "mode": mode, "run": run, "ok": (ti + mi + run) % 4 != 0, "scripted": True,
                    "steps": steps, "prompt_tokens": sum(prompt), "completion_tokens": 60 * steps,
                    "cached_tokens": 0, "cost": sum(prompt) * 2e-7, "wall_time": 0.2 * steps,
                    "step_prompt_tokens": prompt,
                })  # fmt: skip
    return out


def _box(artist: Any, renderer: Any) -> Any:
    return artist.get_window_extent(renderer)


def _overlap(a: Any, b: Any) -> bool:
    return a.x0 < b.x1 - SLACK and b.x0 < a.x1 - SLACK and a.y0 < b.y1 - SLACK and b.y0 < a.y1 - SLACK


def _inside(inner: Any, outer: Any) -> bool:
    return (
        inner.x0 >= outer.x0 - SLACK and inner.x1 <= outer.x1 + SLACK
        and inner.y0 >= outer.y0 - SLACK and inner.y1 <= outer.y1 + SLACK
    )  # fmt: skip


def _drawn(fig: Any) -> Any:
    fig.draw_without_rendering()
    return fig.canvas.get_renderer()


def _check_titles(fig: Any, renderer: Any, data_boxes: list[Any]) -> list[Any]:
    """The title and the SCRIPTED note are whole inside the image and off the plotting areas."""
    page = fig.bbox
    title, note = fig._suptitle, fig._supxlabel
    assert title is not None and note is not None
    boxes = [_box(title, renderer), _box(note, renderer)]
    for box, what in zip(boxes, ("title", "scripted note"), strict=True):
        assert _inside(box, page), f"{what} is cut: {box} not inside {page}"
        assert not any(_overlap(box, d) for d in data_boxes), f"{what} covers a plotting area"
    return boxes


def _check_legend(legend: Any, renderer: Any, page: Any, data_boxes: list[Any], others: list[Any]) -> None:
    assert legend is not None
    box = _box(legend, renderer)
    assert _inside(box, page), f"legend is cut: {box}"
    assert not any(_overlap(box, d) for d in data_boxes), "legend sits on a plotting area"
    assert not any(_overlap(box, o) for o in others), "legend covers a title"


@pytest.mark.parametrize("tasks", [1, 2, 13])
@pytest.mark.parametrize(("chart", "ragged"), [("tokens", False), ("tokens", True), ("success", True), ("cost", True)])
def test_bar_charts_read_well(tasks: int, chart: str, ragged: bool) -> None:
    import matplotlib.pyplot as plt

    key, ylabel, title, percent = CHARTS[chart]
    cells = summarize(_records(tasks, ragged=ragged))
    fig = grouped_bars_figure(cells, key, ylabel, title, scripted=True, percent=percent)
    try:
        renderer = _drawn(fig)
        (ax,) = fig.axes
        data = _box(ax, renderer)
        titles = _check_titles(fig, renderer, [data])
        _check_legend(ax.get_legend(), renderer, fig.bbox, [data], titles)
        ticks = [_box(t, renderer) for t in ax.get_xticklabels() if t.get_text()]
        assert len(ticks) == (1 if tasks == 1 else tasks + 1)  # one task: no pooled group repeating it
        for i, tick in enumerate(ticks):
            assert _inside(tick, fig.bbox), f"task name {i} is cut"
            assert not any(_overlap(tick, other) for other in ticks[i + 1 :]), "task names overlap"
            assert not any(_overlap(tick, t) for t in titles), "a task name runs into the scripted note"
        bars = [_box(p, renderer) for p in ax.patches]
        assert len(bars) == len(cells) - (len(MODES) if tasks == 1 else 0)
        labels = [t for t in ax.texts if t.get_gid() == N_LABEL_GID]
        if not ragged:
            assert labels == []  # every bar has the n the subtitle states
            return
        assert labels, "a bench with missing runs must write the odd n on its bars"
        assert "unless written on it" in ax.get_legend().get_title().get_text()
        width = min(b.width for b in bars)
        label_boxes = [_box(t, renderer) for t in labels]
        for i, (text, box) in enumerate(zip(labels, label_boxes, strict=True)):
            assert text.get_fontsize() >= 6, "n label too small to read"
            assert _inside(box, data), f"{text.get_text()} leaves the plotting area"
            assert box.width <= width + SLACK, f"{text.get_text()} is wider than its bar"
            assert not any(_overlap(box, bar) for bar in bars), f"{text.get_text()} covers a bar"
            assert not any(_overlap(box, other) for other in label_boxes[i + 1 :]), "n labels overlap"
    finally:
        plt.close(fig)


@pytest.mark.parametrize("tasks", [1, 2, 13])
def test_prompt_growth_reads_well(tasks: int) -> None:
    import matplotlib.pyplot as plt

    fig = prompt_growth_figure(summarize(_records(tasks, ragged=False)), scripted=True)
    try:
        renderer = _drawn(fig)
        panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
        assert len(panels) == tasks
        data = [_box(ax, renderer) for ax in panels]
        titles = _check_titles(fig, renderer, data)
        panel_titles = [_box(ax.title, renderer) for ax in panels]
        for box in panel_titles:
            assert _inside(box, fig.bbox) and not any(_overlap(box, t) for t in titles)
        legends = [sub.legends[0] for sub in fig.subfigs if sub.legends]
        assert len(legends) == 1
        _check_legend(legends[0], renderer, fig.bbox, data, titles + panel_titles)
        assert [t.get_text() for t in legends[0].get_texts()] == MODES
    finally:
        plt.close(fig)


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", header[16:24])


@pytest.mark.parametrize("tasks", [1, 2, 13])
def test_all_charts_are_written_as_png(tmp_path: Path, tasks: int) -> None:
    paths = all_charts(summarize(_records(tasks, ragged=True)), tmp_path, scripted=True)
    assert sorted(paths) == ["cost", "prompt_growth", "success", "tokens"]
    for path in paths.values():
        width, height = _png_size(path)
        assert 600 <= width <= 2000 and 400 <= height <= 1500, (path.name, width, height)
