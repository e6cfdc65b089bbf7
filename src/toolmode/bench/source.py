"""Where a bench's tasks come from: the built-in suite, a task file, or a peer's suite loaded from a path.

A `TaskSource` is small and picklable, so a remote executor sends it instead of the tasks (whose tools
and checkers are functions): each worker process loads the tasks itself, once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from toolmode.bench.task import Task

SUITES = ("builtin", "m3tooleval")


@dataclass(frozen=True)
class TaskSource:
    """`suite` (builtin or m3tooleval), `tasks` (a task file or built-in names), `only`, `suite_path`."""

    suite: str = "builtin"
    tasks: str | None = None
    only: str | None = None
    suite_path: str | None = None

    def load(self) -> list[Task]:
        """The tasks (loaded once per process); ValueError with one clear line for bad input."""
        return list(_load(self))


@functools.lru_cache(maxsize=8)
def _load(source: TaskSource) -> tuple[Task, ...]:
    from toolmode.bench.suite import builtin_suite, select
    from toolmode.bench.task import load_tasks
    from toolmode.cliargs import comma_list

    if source.suite not in SUITES:
        raise ValueError(f"unknown suite {source.suite!r}; known: {', '.join(SUITES)}")
    if source.suite == "m3tooleval":
        if not source.suite_path:
            raise ValueError(
                "--suite m3tooleval needs --suite-path PATH (the folder holding M3ToolEval's tasks/)"
            )
        if source.tasks:
            raise ValueError("--tasks is for the builtin suite; pick M3ToolEval tasks with --only")
        from toolmode.bench.suites.m3tooleval import m3tooleval_suite

        tasks = m3tooleval_suite(source.suite_path)
    elif source.suite_path:
        raise ValueError("--suite-path is for a peer's suite (--suite m3tooleval)")
    elif source.tasks and (source.tasks.endswith(".py") or Path(source.tasks).is_file()):
        tasks = load_tasks(source.tasks)
    else:
        tasks = select(builtin_suite(), comma_list(source.tasks))
    return tuple(select(tasks, comma_list(source.only)))
