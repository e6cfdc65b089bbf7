"""The built-in benchmark suite: 13 tasks across kinds where react, code and hybrid modes differ."""

from __future__ import annotations

from toolmode.bench.task import Task
from toolmode.bench.tasks.api import api_tasks
from toolmode.bench.tasks.catalog import catalog_tasks
from toolmode.bench.tasks.diagnosis import diagnosis_tasks
from toolmode.bench.tasks.files import file_tasks
from toolmode.bench.tasks.web import web_tasks


def builtin_suite() -> list[Task]:
    """All built-in tasks, in a stable order."""
    return [*file_tasks(), *diagnosis_tasks(), *web_tasks(), *api_tasks(), *catalog_tasks()]


def select(tasks: list[Task], names: list[str] | None) -> list[Task]:
    """The tasks named (in the given order); all of them if `names` is empty or None."""
    if not names:
        return tasks
    by_name = {t.name: t for t in tasks}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"unknown task(s) {', '.join(unknown)}; known: {', '.join(by_name)}")
    return [by_name[n] for n in names]
