"""The task format: a prompt, a deterministic fixture builder, the tools offered, and a checker.

A task file is a Python module exposing `TASKS = [Task(...), ...]`; `load_tasks(path)` imports it.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolmode.tools.base import Tool


@dataclass(frozen=True)
class CheckResult:
    """The checker's verdict: `ok` and a short human-readable `reason`."""

    ok: bool
    reason: str = ""


@dataclass
class TaskEnv:
    """What a task's `tools()` may use: the episode's workspace, seed, facts, fixture URL and agent mode."""

    workspace: Path
    seed: int
    facts: dict[str, Any]
    base_url: str | None = None
    mode: str | None = None  # "react", "code" or "hybrid"


@dataclass
class Task:
    """One benchmark task.

    `prompt` may contain `{base_url}` (the fixture HTTP server of this episode) and `{key}` for any
    key of the facts that `build` returns. `pages(seed)` (optional) gives the pages the fixture HTTP
    server serves, as `{path: text}`; paths ending in `.html` are served as HTML. `hidden` names the
    tools that search variants hide (found only through tool search); `direct` names the tools that
    hybrid mode exposes directly (the rest go through `run_code`). `player` (optional) is the scripted
    player that `--scripted` uses for this task (see `toolmode.bench.players`).
    """

    name: str
    prompt: str
    build: Callable[[Path, int], dict[str, Any]]
    tools: Callable[[TaskEnv], list[Tool]]
    check: Callable[[str, Path, dict[str, Any]], CheckResult]
    kind: str = "general"
    hidden: list[str] = field(default_factory=list)
    direct: list[str] | None = None
    pages: Callable[[int], dict[str, str]] | None = None
    max_steps: int | None = None
    player: Callable[..., Any] | None = None

    def render_prompt(self, env: TaskEnv) -> str:
        """The prompt with `{base_url}` and fact placeholders filled in."""
        values = {k: v for k, v in env.facts.items() if isinstance(v, str | int | float)}
        values["base_url"] = env.base_url or ""
        return self.prompt.format_map(_Missing(values))


class _Missing(dict[str, Any]):
    """Leave unknown `{names}` in a prompt untouched instead of raising KeyError."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def load_tasks(path: str | Path) -> list[Task]:
    """Import a Python file and return its `TASKS` list."""
    path = Path(path).resolve()
    module_name = f"toolmode_user_tasks_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import tasks from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    tasks = getattr(module, "TASKS", None)
    if not isinstance(tasks, list) or not all(isinstance(t, Task) for t in tasks):
        raise ValueError(f"{path} must define TASKS = [Task(...), ...]")
    names = [t.name for t in tasks]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: task names must be unique, got {names}")
    return tasks
