"""Published figures of a peer's suite, shown beside a bench's own figures (same suite, pooled per mode)."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from toolmode.bench.stats import ALL_TASKS, Cell


@dataclass(frozen=True)
class Figure:
    """One published result: what acted (`actions`), the toolmode mode closest to it, success %, turns."""

    actions: str
    mode: str
    success: float
    turns: float


@dataclass(frozen=True)
class Published:
    """A paper's figures for a suite, and the model that produced them."""

    source: str
    model: str
    figures: tuple[Figure, ...]


PUBLISHED: dict[str, Published] = {
    "m3tooleval": Published(
        "M3ToolEval, CodeAct paper (Wang et al., ICML 2024)",
        "gpt-4-1106-preview",
        (Figure("code actions", "code", 74.4, 5.5), Figure("JSON actions", "react", 52.4, 7.6)),
    )
}
NOTE = (
    "this run: success and model requests per episode (toolmode's turns), pooled over the suite's tasks; "
    "the paper's JSON actions are closest to react (native tool calls), its code actions to code"
)


@dataclass
class Row:
    """One line of the comparison."""

    who: str
    mode: str
    success: float | None  # percent
    turns: float | None
    n: int | None
    title: str = ""


def comparison(settings: dict[str, Any], cells: list[Cell], model: str | None) -> list[Row] | None:
    """Paper rows then this run's pooled rows, or None when the bench's suite has no published figures."""
    published = PUBLISHED.get(str(settings.get("suite") or ""))
    if published is None:
        return None
    title = f"Published figures ({published.source}) beside this run"
    rows = [Row(f"paper: {published.model}", f.actions, f.success, f.turns, None) for f in published.figures]
    for c in cells:
        if c.task == ALL_TASKS:
            success = None if c.success.mean is None else 100 * c.success.mean
            rows.append(Row(f"this run: {model or 'model ?'}", c.mode, success, c.measures["steps"].mean, c.n))
    rows[0].title = title
    return rows


def _num(value: float | None, digits: int, suffix: str = "") -> str:
    return "—" if value is None else f"{value:.{digits}f}{suffix}"


def render(rows: list[Row]) -> Any:
    """The comparison as a rich Table."""
    from rich.table import Table

    table = Table(title=rows[0].title, caption=NOTE, caption_justify="left")
    for head in ("who", "actions / mode", "success", "turns", "n"):
        table.add_column(head, justify="left" if head in ("who", "actions / mode") else "right")
    for r in rows:
        table.add_row(r.who, r.mode, _num(r.success, 1, "%"), _num(r.turns, 1), "—" if r.n is None else str(r.n))
    return table


def render_html(rows: list[Row]) -> str:
    """The comparison as an HTML section."""
    esc = html.escape
    body = "".join(
        f"<tr><td>{esc(r.who)}</td><td>{esc(r.mode)}</td><td>{_num(r.success, 1, '%')}</td>"
        f"<td>{_num(r.turns, 1)}</td><td>{'—' if r.n is None else r.n}</td></tr>"
        for r in rows
    )
    return (
        f"<h2>{esc(rows[0].title)}</h2><table><tr><th>who</th><th>actions / mode</th>"
        f"<th>success</th><th>turns</th><th>n</th></tr>{body}</table><p class='note'>{esc(NOTE)}.</p>"
    )
