"""Modes: which tool definitions are sent, and how a call is handled. See `toolmode.modes.registry`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from toolmode.modes.base import Catalog, Mode, ModeSetup, UnknownTool
from toolmode.modes.registry import build_mode, mode_class, mode_names, register_mode
from toolmode.settings import PromptSettings, SandboxSettings


def make_mode(
    mode: str,
    tools: Iterable[Any],
    *,
    search: str | None = None,
    visible: Sequence[str] | None = None,
    direct: Sequence[str] | None = None,
    workspace: Path | str | None = None,
    sandbox: str = "auto",
    persistent: bool = False,
    sandbox_limits: Any = None,
    ranker: str = "bm25",
    allow_env_in_workspace: bool = False,
    prompts: str = "standard",
) -> Mode:
    """Build a mode by name from flat keywords (the Agent uses `build_mode` with settings objects)."""
    options = {k: v for k, v in (("search", search), ("direct", direct)) if v is not None}
    setup = ModeSetup(visible, ranker, SandboxSettings(workspace, sandbox, sandbox_limits, persistent,
                                                       allow_env_in_workspace), PromptSettings(prompts))
    return build_mode(mode, tools, setup, options)


__all__ = ["Catalog", "Mode", "ModeSetup", "UnknownTool", "build_mode", "make_mode", "mode_class", "mode_names",
           "register_mode"]
