"""Benchmarks: run task suites over modes × runs, check answers without a model, report the figures."""

from toolmode.bench.task import CheckResult, Task, TaskEnv, load_tasks

__all__ = ["CheckResult", "Task", "TaskEnv", "load_tasks"]
