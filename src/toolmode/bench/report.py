"""Build a bench's report from its results: terminal table, summary.csv, PNG charts, report.html."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolmode import hostfiles
from toolmode.bench.charts import all_charts
from toolmode.bench.html_report import render_html
from toolmode.bench.results import BenchDirError, read_results, read_settings
from toolmode.bench.stats import is_scripted, summarize
from toolmode.bench.table import render_table, write_csv


@dataclass
class Report:
    """Where the report went, and what it summarised."""

    csv: Path
    html: Path
    charts: dict[str, Path]
    cells: list[Any]
    scripted: bool
    charts_note: str | None = None  # why there are no charts, when they were asked for


def model_label(records: list[dict[str, Any]], settings: dict[str, Any]) -> str | None:
    """The model name(s) of the episodes, marked as pricing-only for scripted runs."""
    models = sorted({str(r["model"]) for r in records if r.get("model")}) or (
        [settings["model"]] if settings.get("model") else []
    )
    text = ", ".join(models) or None
    if is_scripted(records) and text:
        return f"scripted server, priced as {text}"
    return text


def build_report(bench_dir: Path, *, console: Any = None, charts: bool = True) -> Report:
    """Read `results.jsonl`, print the table (if a rich console is given), write CSV, charts and HTML."""
    bench_dir = Path(bench_dir)
    records = read_results(bench_dir)
    if not records:
        raise BenchDirError(f"no results in {bench_dir} (expected {bench_dir / 'results.jsonl'})")
    settings = read_settings(bench_dir)
    scripted = is_scripted(records)
    model = model_label(records, settings)
    cells = summarize(records, settings.get("task_order"), settings.get("mode_order"))
    if console is not None:
        narrow = console.width < 150
        console.print(
            render_table(cells, scripted=scripted, model=model, episodes=len(records), narrow=narrow)
        )
    from toolmode.bench import reference

    published = reference.comparison(settings, cells, model)
    if console is not None and published:
        console.print(reference.render(published))
    csv_path = bench_dir / "summary.csv"
    write_csv(csv_path, cells, scripted=scripted, model=model)
    chart_paths: dict[str, Path] = {}
    note = None
    if charts:
        try:
            chart_paths = all_charts(cells, bench_dir, scripted=scripted)
        except ImportError as exc:  # matplotlib missing or broken: the rest of the report still stands
            note = (
                "charts skipped: matplotlib is not installed"
                if (exc.name or "").split(".")[0] == "matplotlib"
                else f"charts skipped: matplotlib cannot be imported ({exc})"
            )
            if console is not None:
                console.print(f"[yellow]{note}[/]", markup=True, highlight=False)
            else:
                print(note, file=sys.stderr)
    html_path = bench_dir / "report.html"
    hostfiles.write_text(
        html_path,
        render_html(cells, records, chart_paths, settings, scripted=scripted, model=model, charts_note=note,
                    extra=reference.render_html(published) if published else ""),  # fmt: skip
    )
    return Report(csv_path, html_path, chart_paths, cells, scripted, note)
