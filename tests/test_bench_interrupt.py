"""Ctrl-C during a bench, in a real `toolmode bench` process: the first waits for the running episodes and
records them, the second abandons them at once; `--resume` runs only what is missing.

The episodes of the slow modes block (in the fixture builder or in a tool) until the test releases them,
so nothing here depends on timing; the bounds are only there to fail instead of hanging.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from toolmode.bench.cli import bench_main

SLOW_TASKS = '''
import os
import time
from pathlib import Path

from toolmode.bench.suite import builtin_suite, select
from toolmode.bench.task import Task

(BASE,) = select(builtin_suite(), ["log_stats"])  # same name, so the scripted log_stats player plays it


def hold(workspace):
    """In a slow mode, say so and block until the test creates CONTROL/release (or 10 minutes pass)."""
    control = Path(os.environ["BENCH_CONTROL"])
    mode, run = workspace.parts[-3], workspace.parts[-2]  # .../episodes/log_stats/<mode>/run-<k>/workspace
    if mode not in os.environ["BENCH_SLOW_MODES"].split(","):
        return
    (control / f"started-{mode}-{run}").touch()
    deadline = time.monotonic() + 600
    while not (control / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def build(workspace, seed):
    if os.environ["BENCH_HOLD"] == "build":
        hold(workspace)
    return BASE.build(workspace, seed)


def tools(env):
    offered = BASE.tools(env)
    if os.environ["BENCH_HOLD"] == "tool":
        lister = next(t for t in offered if t.name == "list_dir")
        real = lister.fn

        def slow(*args, **kwargs):
            hold(env.workspace)
            return real(*args, **kwargs)

        lister.fn = slow
    return offered


TASKS = [Task(**{**BASE.__dict__, "build": build, "tools": tools})]
'''

BOUND = 120.0  # seconds; generous: only to fail instead of hanging


def _until(what: str, check: Callable[[], bool], proc: subprocess.Popen[bytes], out: Path) -> None:
    deadline = time.monotonic() + BOUND
    while not check():
        if proc.poll() is not None:
            pytest.fail(f"bench exited ({proc.returncode}) before {what}:\n{out.read_text()}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {BOUND} s:\n{out.read_text()}")
        time.sleep(0.05)


def _records(bench: Path) -> list[dict]:
    path = bench / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def slow_bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., tuple]]:
    """Start `toolmode bench` on the slow task in a subprocess; always released and reaped afterwards."""
    control = tmp_path / "control"
    control.mkdir()
    task_file = tmp_path / "slow_tasks.py"
    task_file.write_text(SLOW_TASKS)
    procs: list[subprocess.Popen[bytes]] = []

    def start(hold: str, slow_modes: str) -> tuple[subprocess.Popen[bytes], Path, Path, Path]:
        env = {
            **os.environ,
            "BENCH_CONTROL": str(control),
            "BENCH_HOLD": hold,
            "BENCH_SLOW_MODES": slow_modes,
        }
        for key in ("BENCH_CONTROL", "BENCH_HOLD", "BENCH_SLOW_MODES"):
            monkeypatch.setenv(key, env[key])  # for the in-process --resume afterwards
        bench, out = tmp_path / "bench", tmp_path / "out.txt"
        argv = [sys.executable, "-m", "toolmode", "bench", "--scripted", "--tasks", str(task_file),
                "--modes", "react,code", "--runs", "2", "--jobs", "2", "--out", str(bench),
                "--no-progress", "--no-charts"]  # fmt: skip
        with out.open("wb") as sink:
            procs.append(subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, env=env))
        return procs[-1], bench, control, out

    yield start
    (control / "release").touch()
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def test_first_ctrl_c_waits_for_running_episodes_and_records_them(slow_bench: Callable[..., tuple]) -> None:
    proc, bench, control, out = slow_bench(hold="build", slow_modes="react,code")
    # Run 1 of both modes is running (blocked in its fixture builder); run 2 waits for a free slot.
    _until("two running episodes", lambda: len(list(control.glob("started-*"))) == 2, proc, out)
    proc.send_signal(signal.SIGINT)
    _until("the waiting message", lambda: "waiting for 2 running episodes" in out.read_text(), proc, out)
    assert _records(bench) == []  # nothing finished yet: they are still blocked
    (control / "release").touch()
    assert proc.wait(timeout=BOUND) == 130, out.read_text()
    records = _records(bench)
    assert sorted((r["mode"], r["run"]) for r in records) == [("code", 1), ("react", 1)]
    assert all(r["ok"] for r in records), records
    assert sorted(p.name for p in control.glob("started-*")) == ["started-code-run-1", "started-react-run-1"]
    assert "--resume" in out.read_text()

    assert bench_main(["--resume", str(bench), "--no-progress", "--no-charts"]) == 0
    records = _records(bench)
    assert sorted((r["mode"], r["run"]) for r in records) == [
        ("code", 1),
        ("code", 2),
        ("react", 1),
        ("react", 2),
    ]
    assert all(r["ok"] for r in records)


def test_second_ctrl_c_abandons_running_episodes_at_once(slow_bench: Callable[..., tuple]) -> None:
    proc, bench, control, out = slow_bench(hold="tool", slow_modes="code")
    # react runs 1 and 2 finish; code runs 1 and 2 block inside their agent's list_dir call.
    _until(
        "two finished and two blocked episodes",
        lambda: len(_records(bench)) == 2 and len(list(control.glob("started-code-*"))) == 2,
        proc,
        out,
    )
    proc.send_signal(signal.SIGINT)
    _until("the waiting message", lambda: "waiting for 2 running episodes" in out.read_text(), proc, out)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=BOUND) == 130, out.read_text()  # the blocked tools would hold it for 10 minutes
    printed = out.read_text()
    assert "abandoned 2 running episode" in printed and "--resume" in printed
    assert not (control / "release").exists()
    assert sorted((r["mode"], r["run"]) for r in _records(bench)) == [("react", 1), ("react", 2)]

    (control / "release").touch()
    assert bench_main(["--resume", str(bench), "--no-progress", "--no-charts"]) == 0
    records = _records(bench)
    assert sorted((r["mode"], r["run"]) for r in records) == [
        ("code", 1),
        ("code", 2),
        ("react", 1),
        ("react", 2),
    ]
    assert all(r["ok"] for r in records)
