"""Run tasks × modes × runs, concurrently, appending each finished episode to results.jsonl.

An interrupted bench resumes: episodes already in results.jsonl are skipped.

Ctrl-C: the first one stops starting episodes and waits for the running ones, which are recorded as they
finish; then KeyboardInterrupt is raised. A second one abandons the running episodes at once (their agents
are closed, they are not recorded and run again on resume) and raises BenchAbandoned.
"""

from __future__ import annotations

import contextlib
import os
import queue
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from toolmode import hostfiles
from toolmode.bench.earlystop import STOP_AFTER, BenchStopped, EarlyStop
from toolmode.bench.episode import BenchConfig, run_episode
from toolmode.bench.modespec import ModeSpec
from toolmode.bench.results import ResultsFile, finished_keys
from toolmode.bench.results import errored as errored  # re-exported: callers used to import it from here
from toolmode.bench.task import Task

ABANDON_CLOSE_SECONDS = 2.0  # how long a second Ctrl-C waits for abandoned agents to close, at most


class BenchAbandoned(KeyboardInterrupt):
    """A second Ctrl-C: `running` episodes were abandoned without being recorded."""

    def __init__(self, running: int) -> None:
        super().__init__(f"abandoned {running} running episodes")
        self.running = running


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
    stop_after: int = STOP_AFTER,
    executor: Executor | None = None,
) -> list[dict[str, Any]]:
    """Run every episode not yet in `bench_dir/results.jsonl`; return the records written by this call.

    `retry_errors` also reruns the episodes whose record has an error. The `executor` runs the episodes
    (default: `LocalExecutor`, daemon threads in this process), at most `jobs` at a time; each finished
    one is recorded here as soon as the executor hands it back, so a Ctrl-C in the main thread cannot lose
    a finished one; `on_record` is called there too, under the results lock.
    When `stop_after` episodes in a row fail the same way because of the endpoint (see `earlystop`), no
    more episodes start, the running ones are abandoned and BenchStopped is raised (0 turns this off).
    """
    os.close(hostfiles.open_dir(bench_dir))
    results = ResultsFile(bench_dir)
    done = finished_keys(results.read(), retry_errors=retry_errors)
    todo = [e for e in plan(tasks, specs, runs, base_seed) if (e.task.name, e.spec.label, e.run) not in done]
    if not todo:
        return []
    executor = executor or LocalExecutor(bench_dir, config)
    with _Progress(len(todo), len(done), enabled=progress) as bar:
        pool = _Pool(executor, results, on_record, max(1, jobs), EarlyStop(stop_after))
        pool.run(todo, bar)
    return pool.written


class _Pool:
    """Starts episodes on an executor, records them as they come back; handles the first and second Ctrl-C."""

    def __init__(
        self,
        executor: Executor,
        results: ResultsFile,
        on_record: Callable[[dict[str, Any]], None] | None,
        jobs: int,
        watch: EarlyStop | None = None,
    ) -> None:
        self.executor, self.results, self.on_record, self.jobs = executor, results, on_record, jobs
        self.watch = watch or EarlyStop(0)
        self.written: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.abandoned = False
        self.started = 0
        self.active = 0  # episodes started and not yet handed back
        self.finished: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()

    def _done(self, record: dict[str, Any] | None) -> None:
        """Called by the executor (from any thread) once per started episode; None: nothing to record."""
        with self.lock:
            self.active -= 1
            if record is not None and not self.abandoned:
                self.results.append(record)
                self.written.append(record)
                if self.on_record is not None:
                    self.on_record(record)
                self.watch.observe(record)
        self.finished.put(record)

    def running(self) -> int:
        """Episodes started and not finished."""
        with self.lock:
            return self.active

    def run(self, todo: list[Episode], bar: _Progress) -> None:
        """Run `todo`; KeyboardInterrupt after a first Ctrl-C (once the running ones are recorded)."""
        waiting = iter(todo)
        stopping = False
        while True:
            try:
                while not stopping and self.running() < self.jobs:
                    e = next(waiting, None)
                    if e is None:
                        stopping = True  # nothing left to start
                        break
                    with self.lock:
                        self.active += 1
                    try:
                        self.executor.start(self.started, e, self._done)
                    except BaseException as exc:
                        if not getattr(exc, "episode_started", False):
                            with self.lock:  # never started: it will not be handed back
                                self.active -= 1
                        raise
                    self.started += 1
                with contextlib.suppress(queue.Empty):
                    record = self.finished.get(timeout=0.2)
                    if record is not None:
                        bar.advance(record)
                if self.watch.reason is not None:
                    self._stop_early(self.watch.reason)
                if stopping and not self.running() and self.finished.empty():
                    break
            except KeyboardInterrupt:
                running = self.running()
                if not running:
                    raise
                if bar.interrupted:
                    self._abandon(running)
                bar.interrupted = stopping = True
                bar.note(
                    f"waiting for {running} running episode{'s' if running != 1 else ''} to finish "
                    "(Ctrl-C again to abandon them)"
                )
        if bar.interrupted:
            raise KeyboardInterrupt

    def _stop_early(self, reason: str) -> None:
        """Abandon the running episodes (they hit the same endpoint) and raise BenchStopped."""
        try:
            self._abandon(self.running())
        except BenchAbandoned as exc:
            raise BenchStopped(reason, exc.running) from None

    def _abandon(self, running: int) -> None:
        """Stop recording, stop the running episodes (bounded wait), raise BenchAbandoned."""
        with self.lock:
            self.abandoned = True
        self.executor.abandon()
        raise BenchAbandoned(running)


class LocalExecutor:
    """Runs each episode on a daemon thread in this process (the default executor)."""

    def __init__(self, bench_dir: Path, config: BenchConfig) -> None:
        self.bench_dir, self.config = bench_dir, config
        self.lock = threading.Lock()
        self.closers: dict[int, Callable[[], None]] = {}  # by start index, while the episode runs
        self.lost = 0  # episodes that never came back (none here: a harness failure is a failed record)

    def start(self, index: int, e: Episode, done: Callable[[dict[str, Any] | None], None]) -> None:
        """Start `e` on a new thread; `done(record)` is called from that thread when it ends."""

        def register(close: Callable[[], None]) -> None:
            with self.lock:
                self.closers[index] = close

        def work() -> None:
            record = None
            try:
                record = run_episode(e.task, e.spec, e.run, e.seed, self.bench_dir, self.config, register=register)
            finally:
                with self.lock:
                    self.closers.pop(index, None)
                done(record)

        t = threading.Thread(target=work, daemon=True, name=f"episode-{index}")
        try:
            t.start()
        except BaseException as exc:  # a Ctrl-C while starting: say whether the thread runs (and will report)
            exc.episode_started = t.ident is not None  # type: ignore[attr-defined]
            raise

    def abandon(self) -> None:
        """Close the running episodes' agents (their sandboxes and MCP servers), waiting a bounded time."""
        with self.lock:
            closers = list(self.closers.values())

        def close_all() -> None:
            for close in closers:
                with contextlib.suppress(Exception):
                    close()

        closing = threading.Thread(target=close_all, daemon=True, name="bench-abandon")
        closing.start()
        closing.join(ABANDON_CLOSE_SECONDS)


class Executor(Protocol):
    """Runs episodes somewhere; the runner records what comes back (one place for results and resume)."""

    lost: int  # episodes that never came back (a node died after every retry): they run again on resume

    def start(self, index: int, e: Episode, done: Callable[[dict[str, Any] | None], None]) -> None:
        """Start episode `e`; call `done(record)` exactly once when it ends (`None`: nothing to record)."""

    def abandon(self) -> None:
        """Stop the running episodes quickly (second Ctrl-C); their records are not kept."""


class _Progress:
    """A rich progress bar with a running success count (or nothing, when disabled)."""

    def __init__(self, total: int, already: int, *, enabled: bool) -> None:
        self.enabled = enabled
        self.total = total
        self.already = already
        self.ok = 0
        self.failed = 0
        self.interrupted = False
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

    def note(self, text: str) -> None:
        """Print a line above the bar (or on stdout without one)."""
        if self._progress is not None:
            self._progress.console.print(text)
        else:
            print(text, file=sys.stdout, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
