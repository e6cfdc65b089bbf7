"""report.html: one self-contained file (charts as base64 data URIs, inline CSS, no network)."""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from toolmode.bench.stats import ALL_TASKS, MEASURES, POOLED_NOTE, SCRIPTED_NOTE, Cell
from toolmode.bench.table import fmt, title

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}
table{border-collapse:collapse;font-size:13px;margin:1em 0}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3} td:first-child,td:nth-child(2){text-align:left}
tr.all td{font-weight:bold;background:#fafafa}
.scroll{overflow-x:auto} table.summary td{white-space:nowrap}
.banner{background:#b00020;color:#fff;padding:12px 16px;font-size:18px;font-weight:bold;border-radius:4px}
img{max-width:100%;border:1px solid #ddd;margin:8px 0}
code{background:#f3f3f3;padding:1px 4px}
"""


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'


def render_html(
    cells: list[Cell],
    records: list[dict[str, Any]],
    charts: dict[str, Path],
    settings: dict[str, Any],
    *,
    scripted: bool,
    model: str | None,
    charts_note: str | None = None,
    extra: str = "",
) -> str:
    """The whole report as one HTML string; `extra` (HTML) follows the main table."""
    esc = html.escape
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>toolmode bench</title><style>{_CSS}</style></head><body>"
    ]
    if scripted:
        parts.append(
            f"<div class='banner'>SCRIPTED: {esc(SCRIPTED_NOTE)}. Every figure below comes from scripted "
            "replies; run the bench against a real model to compare modes.</div>"
        )
    parts.append(f"<h1>{esc(title(scripted, model, len(records)))}</h1>")
    shown = {
        k: settings[k]
        for k in ("modes", "tasks", "runs", "model", "base_url", "started")
        if settings.get(k) not in (None, "", [])
    }
    if shown:
        parts.append("<p>" + "; ".join(f"<b>{esc(k)}</b>: {esc(str(v))}" for k, v in shown.items()) + "</p>")
    head = "".join(
        f"<th>{esc(h)}</th>" for h in ["task", "mode", "n", "success", *[lab for k, lab in MEASURES]]
    )
    rows = []
    for c in cells:
        cls = " class='all'" if c.task == ALL_TASKS else ""
        cols = [esc(c.task), esc(c.mode), str(c.n), fmt(c.success, "success")]
        cols += [fmt(c.measures[k], k) for k, _ in MEASURES]
        rows.append(f"<tr{cls}>" + "".join(f"<td>{x}</td>" for x in cols) + "</tr>")
    parts.append("<h2>Per task and mode (mean ± sd over n runs)</h2>")
    parts.append(f"<div class='scroll'><table class='summary'><tr>{head}</tr>{''.join(rows)}</table></div>")
    if any(c.task == ALL_TASKS for c in cells):
        parts.append(f"<p class='note'>{esc(POOLED_NOTE)}.</p>")
    if extra:
        parts.append(extra)
    for name, path in charts.items():
        parts.append(f"<h2>{esc(name.replace('_', ' '))}</h2>{_img(path)}")
    if charts_note:
        parts.append(f"<p class='note'>{esc(charts_note)}</p>")
    failed = [r for r in records if not r.get("ok")]
    if failed:
        parts.append(
            f"<h2>Failed episodes ({len(failed)})</h2><table><tr><th>task</th><th>mode</th><th>run</th>"
            "<th>reason</th><th>error</th><th>trace</th></tr>"
        )
        for r in failed:
            trace = r.get("trace") or ""
            parts.append(
                f"<tr><td>{esc(r['task'])}</td><td>{esc(r['mode'])}</td><td>{r['run']}</td>"
                f"<td>{esc(str(r.get('reason') or ''))}</td><td>{esc(str(r.get('error') or ''))[:300]}</td>"
                f"<td><code>{esc(trace)}</code></td></tr>"
            )
        parts.append("</table>")
    parts.append(
        "<p>Traces: one JSONL file per episode under <code>episodes/</code>; raw records in "
        "<code>results.jsonl</code>; this table in <code>summary.csv</code>.</p></body></html>"
    )
    return "\n".join(parts)
