"""Modes: which tool definitions are sent, and how a call is handled."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from toolmode.modes.base import Catalog, Mode, UnknownTool

MODES = ("react", "code", "hybrid")


def make_mode(
    mode: str,
    tools: Iterable[Any],
    *,
    search: str | None = None,
    visible: Sequence[str] | None = None,
    direct: Sequence[str] | None = None,
    workspace: Path | str = ".",
    sandbox: str = "auto",
    persistent: bool = False,
    sandbox_limits: Any = None,
    ranker: str = "bm25",
    allow_env_in_workspace: bool = False,
    prompts: str = "standard",
) -> Mode:
    """Build a mode by name. `search` applies to react ("load" / "proxy"); code modes always search hidden tools.

    `ranker` is the tool-search ranker: "bm25" (default) or "fused" (BM25 + embeddings, needs the semantic extra).
    `prompts`: "standard", or "local" for the short, example-led prompts sized for small local models.
    """
    tools = list(tools)
    if mode == "react":
        from toolmode.modes.react import ReactMode

        if direct:
            raise ValueError("direct= is for hybrid mode; in react mode every visible tool is direct")
        return ReactMode(tools, visible=visible, search=search, ranker=ranker, prompts=prompts)  # type: ignore[arg-type]
    if mode in ("code", "hybrid"):
        from toolmode.modes.code import CodeMode

        if search not in (None, "code"):
            raise ValueError(f"search={search!r} is for react mode; code and hybrid search with search_tools()")
        if mode == "hybrid" and not direct:
            direct = _default_direct(tools, visible)
        if mode == "code" and direct:
            raise ValueError("direct= needs mode='hybrid'")
        return CodeMode(tools, workspace=workspace, visible=visible, direct=direct, sandbox=sandbox,
                        persistent=persistent, limits=sandbox_limits, ranker=ranker,
                        allow_env_in_workspace=allow_env_in_workspace, prompts=prompts)
    raise ValueError(f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}")


def _default_direct(tools: Iterable[Any], visible: Sequence[str] | None) -> list[str]:
    """Hybrid without a choice: the simple read-only tools, when present, else the first two visible tools."""
    names = Catalog(tools, visible).visible_names
    preferred = [n for n in ("read_file", "list_dir", "current_time") if n in names]
    return preferred or names[:2]


__all__ = ["MODES", "Mode", "UnknownTool", "make_mode"]
