"""The task format: a prompt, a deterministic fixture builder, the tools offered, and a checker.

A task file is a Python module exposing `TASKS = [Task(...), ...]`; `load_tasks(path)` imports it.
"""

from __future__ import annotations

import importlib.util
import re
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


_NAME = re.compile(r"\w[\w.-]*")  # a task name is a folder name under episodes/: no separators, no leading dot


def load_tasks(path: str | Path) -> list[Task]:
    """Import a Python file and return its `TASKS` list; ValueError (one line) if it cannot be used."""
    path = Path(path).resolve()
    if not path.is_file():
        raise ValueError(f"task file {path} does not exist" if not path.exists() else f"{path} is not a file")
    module_name = f"toolmode_user_tasks_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import tasks from {path} (expected a Python file)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        raise ValueError(f"{path} line {exc.lineno}: syntax error: {exc.msg}") from None
    except SystemExit as exc:
        sys.modules.pop(module_name, None)
        raise ValueError(f"{path} called sys.exit({exc.code!r}) on import") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed on import: say where, in one line
        sys.modules.pop(module_name, None)
        line = _user_line(exc, path)
        raise ValueError(f"{path}{line}: importing the task file failed: {type(exc).__name__}: {exc}") from None
    tasks = getattr(module, "TASKS", None)
    if not isinstance(tasks, list) or not all(isinstance(t, Task) for t in tasks):
        raise ValueError(f"{path} must define TASKS = [Task(...), ...]")
    if not tasks:
        raise ValueError(f"{path} defines no tasks (TASKS is empty)")
    for task in tasks:
        problem = task_problem(task)
        if problem:
            raise ValueError(f"{path}: {problem}")
    names = [t.name for t in tasks]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: task names must be unique, got {names}")
    return tasks


def task_problem(task: Task) -> str | None:
    """What makes `task` unusable (a bad name, a missing callable, a bad field), or None."""
    if not isinstance(task.name, str) or not _NAME.fullmatch(task.name):
        return (
            f"task name {task.name!r} must be letters, digits, '_', '.' or '-' (it names a folder), "
            "not starting with '.' or '-'"
        )
    if not isinstance(task.prompt, str) or not task.prompt.strip():
        return f"task {task.name}: prompt must be non-empty text"
    for field_name in ("build", "tools", "check"):
        if not callable(getattr(task, field_name)):
            return f"task {task.name}: {field_name} must be a function"
    if task.pages is not None and not callable(task.pages):
        return f"task {task.name}: pages must be a function or None"
    if not isinstance(task.hidden, list | tuple) or not all(isinstance(n, str) for n in task.hidden):
        return f"task {task.name}: hidden must be a list of tool names"
    if task.direct is not None and (
        not isinstance(task.direct, list | tuple) or not all(isinstance(n, str) for n in task.direct)
    ):
        return f"task {task.name}: direct must be a list of tool names or None"
    if task.max_steps is not None and (
        isinstance(task.max_steps, bool) or not isinstance(task.max_steps, int) or task.max_steps < 1
    ):
        return f"task {task.name}: max_steps must be a whole number of at least 1, or None"
    return None


def _user_line(exc: BaseException, path: Path) -> str:
    """` line N` of the deepest traceback frame in the user's file, or ""."""
    tb, line = exc.__traceback__, ""
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename) == path:
            line = f" line {tb.tb_lineno}"
        tb = tb.tb_next
    return line
