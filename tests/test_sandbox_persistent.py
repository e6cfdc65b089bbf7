"""A persistent worker does nothing between runs (issue 16, class 4), on every tier.

A program arms an interval timer whose handler writes to the workspace and burns CPU, and first disables the
worker's own clean-up (persistent code can change the worker's Python: the host's stop is the wall). Between
runs the worker is stopped (SIGSTOP): while a control process with the same timer shows twenty ticks, the
worker writes nothing and uses no CPU. The next run is charged what ran after the previous one was measured.
Waits are on signals (the worker's state in /proc, bytes on a pipe), never on sleeps.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from toolmode.sandbox import Sandbox, SandboxLimits, landlock
from toolmode.sandbox.workerproc import cpu_seconds

pytestmark = pytest.mark.skipif(landlock.abi_version() < 1, reason="needs Landlock")

TIMER = """
import signal, sys, time
busy = []
def tick(signum, frame):
    if busy:  # a tick that comes while the last one still runs (a loaded machine) is skipped, not nested
        return
    busy.append(1)
    with open("ticks.txt", "a") as f:
        f.write("x" * 4096)
    t0 = time.process_time()
    while time.process_time() - t0 < 0.004:
        pass
    {after}
    busy.pop()
signal.signal(signal.SIGALRM, tick)
signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)
"""
DISARM_CLEANUP = "import sys\nsys.modules['__main__']._quiet_between_runs = lambda handlers: None\n"


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _control_ticks(tmp_path: Path, n: int) -> None:
    """Run the same timer in a plain process and return once it ticked `n` times (each tick: a byte on a
    pipe): the time in which an unstopped worker would have ticked too."""
    control = tmp_path / "control"
    control.mkdir()
    code = TIMER.format(after="sys.stdout.write('t'); sys.stdout.flush()") + "while True:\n    signal.pause()\n"
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=control, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        assert len(proc.stdout.read(n)) == n
    finally:
        proc.kill()
        proc.wait()


def test_a_timer_does_nothing_between_runs(tier: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with Sandbox(ws, SandboxLimits(timeout=10), persistent=True, policy=tier) as sb:
        first = sb.run(DISARM_CLEANUP + TIMER.format(after="") + "print('armed')", [], lambda n, k: None)
        assert first.text() == "armed"
        worker = sb._worker
        assert worker is not None and worker.pid
        assert _state(worker.pid) == "T"  # stopped when the run returned
        size, cpu = (ws / "ticks.txt").stat().st_size if (ws / "ticks.txt").exists() else 0, cpu_seconds(worker.pid)
        _control_ticks(tmp_path, 20)  # ~0.2 s: twenty ticks of an unstopped timer, 80 ms of CPU
        assert _state(worker.pid) == "T"
        assert ((ws / "ticks.txt").stat().st_size if (ws / "ticks.txt").exists() else 0) == size
        assert cpu_seconds(worker.pid) == cpu
        second = sb.run("import signal\nprint(signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0))", [],
                        lambda n, k: None)
        assert second.text() == "True" and not second.reset  # the same worker, its timer still armed


def test_the_worker_disarms_timers_and_restores_handlers_at_run_end(tier: str, tmp_path: Path) -> None:
    # Belt and braces: without the program's interference the worker itself cleans up after each run.
    with Sandbox(tmp_path / "ws", SandboxLimits(timeout=10), persistent=True, policy=tier) as sb:
        assert sb.run(TIMER.format(after="") + "print('armed')", [], lambda n, k: None).text() == "armed"
        res = sb.run("import signal\nprint(signal.getitimer(signal.ITIMER_REAL), "
                     "signal.getsignal(signal.SIGALRM) is signal.SIG_DFL)", [], lambda n, k: None)
    assert res.text() == "(0.0, 0.0) True"


def test_writes_and_cpu_after_a_run_are_charged_to_the_next(tier: str, tmp_path: Path) -> None:
    # The second run's baselines are the readings taken when the first ended (after the stop): what the
    # armed timer writes once the worker runs again is that run's, against its budget.
    ws = tmp_path / "ws"
    heavy = TIMER.format(after="").replace('f.write("x" * 4096)', 'f.write("x" * (2 << 20))')
    with Sandbox(ws, SandboxLimits(timeout=10, max_write_mb=8), persistent=True, policy=tier) as sb:
        first = sb.run(DISARM_CLEANUP + heavy + "print('armed')", [], lambda n, k: None)
        assert first.text() == "armed"
        second = sb.run("import time\nwhile True:\n    time.sleep(0.01)", [], lambda n, k: None)
    assert "wrote more than 8 MiB" in second.text(), second.text()
