"""Run tasks × modes × runs, concurrently, appending each finished episode to results.jsonl.

An interrupted bench resumes: episodes already in results.jsonl are skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolmode.bench.episode import BenchConfig, run_episode
from toolmode.bench.modespec import ModeSpec
from toolmode.bench.results import ResultsFile, episode_key
from toolmode.bench.task import Task


@dataclass(frozen=True)
class Episode:
    """One planned episode. The seed depends on the run only, so every mode sees the same fixtures."""

    task: Task
    spec: ModeSpec
    run: int
    seed: int


def plan(tasks: list[Task], specs: list[ModeSpec], runs: int, base_seed: int = 0) -> list[Episode]:
    """All episodes, run-major so a partial bench already covers every task and mode."""
    return [
        Episode(task, spec, run, base_seed + run)
        for run in range(1, runs + 1)
        for task in tasks
        for spec in specs
    ]


def run_bench(
    tasks: list[Task],
    specs: list[ModeSpec],
    runs: int,
    bench_dir: Path,
    config: BenchConfig,
    *,
    jobs: int = 1,
    base_seed: int = 0,
    retry_errors: bool = False,
    progress: bool = True,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every episode not yet in `bench_dir/results.jsonl`; return the records written by this call."""
    bench_dir.mkdir(parents=True, exist_ok=True)
    results = ResultsFile(bench_dir)
    done = {
        episode_key(r) for r in results.read() if not (retry_errors and r.get("error") and not r.get("steps"))
    }
    todo = [e for e in plan(tasks, specs, runs, base_seed) if (e.task.name, e.spec.label, e.run) not in done]
    written: list[dict[str, Any]] = []
    if not todo:
        return written

    def finish(record: dict[str, Any]) -> None:
        results.append(record)
        written.append(record)
        if on_record is not None:
            on_record(record)

    def one(e: Episode) -> dict[str, Any]:
        return run_episode(e.task, e.spec, e.run, e.seed, bench_dir, config)

    with _Progress(len(todo), len(done), enabled=progress) as bar:
        if jobs <= 1:
            for e in todo:
                record = one(e)
                finish(record)
                bar.advance(record)
            return written
        pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="episode")
        pending: set[Future[dict[str, Any]]] = {pool.submit(one, e) for e in todo}
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    record = future.result()
                    finish(record)
                    bar.advance(record)
        finally:
            # On Ctrl-C: drop queued episodes; running ones finish and are recorded by nobody (they rerun).
            pool.shutdown(wait=not pending, cancel_futures=True)
    return written


class _Progress:
    """A rich progress bar with a running success count (or nothing, when disabled)."""

    def __init__(self, total: int, already: int, *, enabled: bool) -> None:
        self.enabled = enabled
        self.total = total
        self.already = already
        self.ok = 0
        self.failed = 0
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("[bold]bench[/]"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
            )
            self._progress.start()
            skipped = f" ({self.already} done before)" if self.already else ""
            self._task = self._progress.add_task("bench", total=self.total, status=f"starting{skipped}")
        return self

    def advance(self, record: dict[str, Any]) -> None:
        """Count one finished episode."""
        if record.get("ok"):
            self.ok += 1
        else:
            self.failed += 1
        if self._progress is not None:
            status = f"[green]{self.ok} ok[/] [red]{self.failed} failed[/]  last: {record['task']} / {record['mode']}"
            self._progress.update(self._task, advance=1, status=status)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
