"""Mode specs on the command line (`react`, `code+search`, `react+proxy`, ...) and the mode settings they mean."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolmode.bench.task import Task
from toolmode.modes.registry import mode_names, option_names
from toolmode.settings import ModeSettings
from toolmode.tools.base import Tool

_SEARCH_WORDS = {"search", "load", "proxy"}


@dataclass(frozen=True)
class ModeSpec:
    """A parsed mode spec: the Agent `mode`, the react `search` style, and whether task tools are hidden."""

    label: str
    mode: str
    search: str | None = None
    hide: bool = False

    def mode_settings(self, task: Task, tools: list[Tool]) -> ModeSettings:
        """The mode settings for an Agent running `task` with `tools`: the task's direct tools for a mode
        that takes `direct`, react's `search` style, and which tools are visible when the spec hides."""
        names = [t.name for t in tools]
        takes = option_names(self.mode)
        direct = [n for n in (task.direct or []) if n in names] if "direct" in takes else []
        options: dict[str, Any] = {"search": self.search} if self.search else {}
        if direct:
            options["direct"] = direct
        visible = None
        if self.hide:
            # Direct tools stay visible: hybrid sends them as they are.
            visible = [n for n in names if n not in set(task.hidden) or n in direct]
        return ModeSettings(self.mode, visible=visible, options=options)


def parse_mode(spec: str) -> ModeSpec:
    """Parse a registered mode's name (`react`, `code`, `hybrid`, ...), optionally with `+search` (react:
    `+load` or `+proxy`): the task's hidden tools are then found by search."""
    label = spec.strip().lower()
    base, _, variant = label.partition("+")
    if base not in mode_names():
        raise ValueError(f"unknown mode {spec!r}: use {', '.join(mode_names())}, optionally +search")
    if not variant:
        return ModeSpec(label, base)
    if variant not in _SEARCH_WORDS:
        raise ValueError(f"unknown variant {variant!r} in {spec!r}: use +search (+load, +proxy for react)")
    if "search" in option_names(base):  # react: the search style is an option
        return ModeSpec(label, base, "proxy" if variant == "proxy" else "load", hide=True)
    if variant == "proxy":
        raise ValueError(f"{spec!r}: proxy search is for react; other modes use +search")
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
