"""Hybrid mode: a few tools sent directly beside `run_code`, for the one-call lookups code mode would
otherwise wrap in a program. Everything else is code mode's; its prompts come from `code.toml`, then
`hybrid.toml`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from toolmode.modes.base import Catalog, ModeSetup
from toolmode.modes.code import CodeMode
from toolmode.modes.registry import register_mode

PREFERRED_DIRECT = ("read_file", "list_dir", "current_time")


@dataclass(frozen=True)
class HybridOptions:
    """`direct`: the tools sent directly beside run_code (None: the simple read-only tools present, else the
    first two visible tools); `search_k`: how many tools `search_tools()` returns by default."""

    direct: Sequence[str] | None = None
    search_k: int = 5


@register_mode
class HybridMode(CodeMode):
    """`run_code` plus a few tools sent directly."""

    name = "hybrid"
    summary = "run_code plus a few tools sent directly"
    Options = HybridOptions  # type: ignore[assignment]
    prompt_files = ("code.toml", "hybrid.toml")

    @classmethod
    def build(cls, tools: Iterable[Any], setup: ModeSetup, options: Any) -> CodeMode:
        """Code mode's build, with `direct` defaulting to the simple read-only tools."""
        tools = list(tools)
        direct = list(options.direct or default_direct(tools, setup.visible))
        return super().build(tools, setup, HybridOptions(direct, options.search_k))


def default_direct(tools: Iterable[Any], visible: Sequence[str] | None) -> list[str]:
    """Hybrid without a choice: the simple read-only tools, when present, else the first two visible tools."""
    names = Catalog(tools, visible).visible_names
    preferred = [n for n in PREFERRED_DIRECT if n in names]
    return preferred or names[:2]
