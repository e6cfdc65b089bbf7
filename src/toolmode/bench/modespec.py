"""Mode specs on the command line (`react`, `code+search`, `react+proxy`, ...) and the Agent kwargs they mean."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolmode.bench.task import Task
from toolmode.tools.base import Tool

_SEARCH_WORDS = {"search", "load", "proxy"}


@dataclass(frozen=True)
class ModeSpec:
    """A parsed mode spec: the Agent `mode`, the react `search` style, and whether task tools are hidden."""

    label: str
    mode: str
    search: str | None = None
    hide: bool = False

    def agent_kwargs(self, task: Task, tools: list[Tool]) -> dict[str, Any]:
        """`mode`, `search`, `visible` and `direct` for an Agent running `task` with `tools`."""
        names = [t.name for t in tools]
        direct = [n for n in (task.direct or []) if n in names] if self.mode == "hybrid" else []
        kwargs: dict[str, Any] = {"mode": self.mode, "search": self.search}
        if direct:
            kwargs["direct"] = direct
        if self.hide:
            # Direct tools stay visible: hybrid sends them as they are.
            kwargs["visible"] = [n for n in names if n not in set(task.hidden) or n in direct]
        return kwargs


def parse_mode(spec: str) -> ModeSpec:
    """Parse `react`, `code`, `hybrid`, optionally `+search` (`+load`/`+proxy` for react)."""
    label = spec.strip().lower()
    base, _, variant = label.partition("+")
    if base not in ("react", "code", "hybrid"):
        raise ValueError(f"unknown mode {spec!r}: use react, code or hybrid, optionally +search")
    if not variant:
        return ModeSpec(label, base)
    if variant not in _SEARCH_WORDS:
        raise ValueError(f"unknown variant {variant!r} in {spec!r}: use +search (+load, +proxy for react)")
    if base == "react":
        return ModeSpec(label, base, "proxy" if variant == "proxy" else "load", hide=True)
    if variant == "proxy":
        raise ValueError(f"{spec!r}: proxy search is for react; code and hybrid use +search")
    return ModeSpec(label, base, None, hide=True)


def parse_modes(text: str) -> list[ModeSpec]:
    """Comma-separated mode specs, without duplicates."""
    specs = [parse_mode(part) for part in text.split(",") if part.strip()]
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"duplicate mode in {text!r}")
    if not specs:
        raise ValueError("no modes given")
    return specs
