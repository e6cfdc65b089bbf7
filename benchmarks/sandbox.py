"""Sandbox figures for every tier (namespaces via bubblewrap, namespaces via unshare, landlock): worker cold
start, warm run_code round trip (fresh and persistent worker), tool-call RPC round trip, run_shell round trip,
idle memory, the write budget's overshoot with parallel writers; then throughput against plain python3.

Run: `python benchmarks/sandbox.py [tier ...]` (Linux with Landlock; prints figures, no assertions).

Without persistence a worker runs one program and is then replaced by a spare started (and confined, and
ready) in the background. "Round trip on a warm worker" is one run() on a worker that is already confined
and ready: the benchmark waits for the spare (`Sandbox._wait_ready()`) before each timed run. A persistent
worker is stopped (SIGSTOP) after each run and answers a ping before the next, which its round trip includes.

"Worker cold start" is the time from asking for a new worker (process start, policy sent, namespaces and
view built, confined) until it reported ready and the host attached to it (found its pid, opened its /tmp),
measured alone (no run in flight); the start of a bare `python -I -S -B -c pass` is printed beside it as the
floor. On a busy machine the wall times mostly measure waiting for a CPU (the load average is printed per tier;
the minimum is a sample that hardly waited); the CPU time the worker's processes used until ready does not.

"Overshoot": 4 threads in one program write 1 MiB chunks as fast as they can against a 64 MiB budget; printed
is what the workspace holds when the run was stopped (5 runs).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from toolmode.sandbox import Sandbox, SandboxLimits, StubSpec, usage
from toolmode.sandbox.shell import run_confined

COUNT_CODE = """
import glob, time
t0 = time.perf_counter()
counts = {}
for name in sorted(glob.glob("log*.txt")):
    with open(name, encoding="utf-8") as f:
        counts[name] = sum(1 for line in f if "ERROR" in line)
print(counts)
print("inner", time.perf_counter() - t0)
"""

RPC_CODE = """
import time
samples = []
for _ in range(2000):
    t0 = time.perf_counter()
    noop()
    samples.append(time.perf_counter() - t0)
samples.sort()
print(samples[len(samples) // 2], samples[int(len(samples) * 0.95)])
"""


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


def _make_logs(ws: Path) -> None:
    for i in range(5):
        lines = [f"2024-01-01 12:00:{n % 60:02d} {'ERROR' if n % 7 == 0 else 'INFO'} request {n} done\n"
                 for n in range(200_000)]
        (ws / f"log{i}.txt").write_text("".join(lines), encoding="utf-8")


def _inner(text: str) -> float:
    return float(text.split("inner", 1)[1].split()[0])


def _cold_start(sb: Sandbox, n: int) -> tuple[list[float], list[float]]:
    """Seconds from spawning a worker to ready (and attached), and the CPU seconds (user + system) its
    processes used until then, n times. The worker is killed right after and reaped before the next one, so
    getrusage(RUSAGE_CHILDREN) grows by their CPU time alone: a figure the load of the machine barely moves."""
    wall, cpu = [], []
    for _ in range(n):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        worker = sb._spawn()
        wall.append(time.perf_counter() - t0)
        sb._discard(worker)
        sb._reaping[-1].result()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return wall, cpu


def _ran_ns(pid: int) -> int:
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def _persistent(ws: Path, noop: StubSpec, n: int, policy: str) -> tuple[list[float], list[float]]:
    """Wall seconds per print(1) run on a persistent worker (stopped between runs, pinged before each), and
    the CPU seconds the worker spent per run (/proc/PID/schedstat, nanoseconds), n times."""
    wall, cpu = [], []
    with Sandbox(ws, SandboxLimits(timeout=60), persistent=True, policy=policy) as sb:
        sb.run("pass", [], lambda n, k: None)
        assert sb._worker is not None
        pid = sb._worker.pid
        for _ in range(n):
            before = _ran_ns(pid)
            t0 = time.perf_counter()
            sb.run("print(1)", [noop], lambda n, k: None)
            wall.append(time.perf_counter() - t0)
            cpu.append((_ran_ns(pid) - before) / 1e9)
    return wall, cpu


def _bare_start(n: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds to start and end `python -I -S -B -c pass` (the interpreter alone), n times."""
    from toolmode.sandbox.spawn import interpreter

    wall, cpu = [], []
    for _ in range(n):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([interpreter(), "-I", "-S", "-B", "-c", "pass"], check=True)
        wall.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return wall, cpu


def _pss_kib(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1])
    return total


OVERSHOOT = """
import threading
def fill(i):
    chunk = b"\\1" * (1 << 20)
    with open(f"fill{i}", "wb") as f:
        for _ in range(512):
            f.write(chunk)
threads = [threading.Thread(target=fill, args=(i,)) for i in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
print("WROTE 2 GiB")
"""


def _overshoot(policy: str, n: int) -> list[float]:
    """MiB the workspace holds when 4 parallel writers were stopped at a 64 MiB budget, n runs."""
    held = []
    for _ in range(n):
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp)
            with Sandbox(ws, SandboxLimits(timeout=60, max_write_mb=64, file_size_mb=1024), policy=policy) as sb:
                res = sb.run(OVERSHOOT, [], lambda n, k: None)
            if "wrote more than 64 MiB" not in res.text():
                raise SystemExit(f"the budget did not stop the writers: {res.text()}")
            held.append(sum(p.stat().st_blocks * 512 for p in ws.iterdir()) / (1 << 20))
    return held


def tier_figures(policy: str, noop: StubSpec) -> None:
    """The figures of one tier."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        with Sandbox(ws, SandboxLimits(timeout=60, max_tool_calls=5000), policy=policy) as sb:
            print(f"== {policy}: {sb.describe_policy()}; load average {os.getloadavg()[0]:.1f} "
                  f"on {os.cpu_count()} CPUs")
            sb.run("pass", [], lambda n, k: None)
            sb._wait_ready()
            worker = sb._worker
            assert worker is not None
            status = Path(f"/proc/{worker.pid}/status").read_text()
            fields = {line.split(":")[0]: line.split(":")[1].strip() for line in status.splitlines() if ":" in line}
            own = [worker.proc.pid, *([usage.in_namespace(worker.proc.pid, 1)] if worker.pid != worker.proc.pid else [])]
            print(f"idle ready worker: VmRSS {fields.get('VmRSS')}, VmHWM {fields.get('VmHWM')}; Pss of the worker "
                  f"{_pss_kib([worker.pid])} kB, of the sandbox's own other processes {_pss_kib([p for p in own if p and p != worker.pid])} kB")
            rounds, host_cpu = [], []
            for _ in range(300):
                sb._wait_ready()  # the spare is confined and ready: time the run alone
                t0, c0 = time.perf_counter(), time.thread_time()
                sb.run("print(1)", [noop], lambda n, k: None)
                rounds.append(time.perf_counter() - t0)
                host_cpu.append(time.thread_time() - c0)
            print(f"run_code round trip (ready worker, print(1), n=300): median {statistics.median(rounds) * 1e3:.2f} ms, "
                  f"min {min(rounds) * 1e3:.2f} ms, p95 {_pct(rounds, 0.95) * 1e3:.2f} ms; CPU time of the calling thread in run() median "
                  f"{statistics.median(host_cpu) * 1e3:.3f} ms")
            back = []
            for _ in range(30):
                t0 = time.perf_counter()
                sb.run("print(1)", [noop], lambda n, k: None)
                back.append(time.perf_counter() - t0)
            print(f"run_code back to back (each run also waits for its new worker to start, n=30): median "
                  f"{statistics.median(back) * 1e3:.1f} ms, p95 {_pct(back, 0.95) * 1e3:.1f} ms")
            med, p95 = map(float, sb.run(RPC_CODE, [noop], lambda n, k: None).output.split())
            print(f"tool call RPC round trip (n=2000, timed inside the program): median {med * 1e3:.3f} ms, "
                  f"p95 {p95 * 1e3:.3f} ms")
            sb._wait_ready()
            cold, cold_cpu = _cold_start(sb, 40)
            print(f"worker cold start, spawn to ready (n=40): median {statistics.median(cold) * 1e3:.1f} ms, "
                  f"min {min(cold) * 1e3:.1f} ms, p95 {_pct(cold, 0.95) * 1e3:.1f} ms; CPU time of its processes median "
                  f"{statistics.median(cold_cpu) * 1e3:.1f} ms")
        wall, cpu = _persistent(ws, noop, 200, policy)
        print(f"persistent worker, print(1) (stopped between runs, pinged before each; n=200): median "
              f"{statistics.median(wall) * 1e3:.2f} ms, min {min(wall) * 1e3:.2f} ms, p95 {_pct(wall, 0.95) * 1e3:.2f} ms; the worker's CPU per run "
              f"{statistics.median(cpu) * 1e3:.3f} ms")
        shell_wall = []
        for _ in range(20):
            t0 = time.perf_counter()
            run_confined("true", workspace=ws, timeout=30, policy=policy)
            shell_wall.append(time.perf_counter() - t0)
        print(f"run_shell('true') round trip (n=20): median {statistics.median(shell_wall) * 1e3:.1f} ms, "
              f"p95 {_pct(shell_wall, 0.95) * 1e3:.1f} ms")
    held = _overshoot(policy, 5)
    print(f"write budget 64 MiB, 4 parallel writers as fast as they go (n=5): the workspace held "
          f"{', '.join(f'{h:.0f}' for h in held)} MiB when they were stopped")


def main() -> None:
    """Print the figures of the tiers named on the command line (default: all three)."""
    noop = StubSpec("noop", [], "noop() -> None", "Do nothing.")
    policies = sys.argv[1:] or ["bwrap", "unshare", "landlock"]
    bare, bare_cpu = _bare_start(40)
    print(f"bare `python -I -S -B -c pass` (the floor of a cold start, n=40): median {statistics.median(bare) * 1e3:.1f} ms, "
          f"CPU {statistics.median(bare_cpu) * 1e3:.1f} ms")
    for policy in policies:
        tier_figures(policy, noop)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        _make_logs(ws)
        with Sandbox(ws, SandboxLimits(timeout=60), policy=policies[0]) as sb:
            sandboxed, sandboxed_wall, plain, plain_wall = [], [], [], []
            for _ in range(5):
                t0 = time.perf_counter()
                res = sb.run(COUNT_CODE, [], lambda n, k: None)
                sandboxed_wall.append(time.perf_counter() - t0)
                sandboxed.append(_inner(res.output))
                t0 = time.perf_counter()
                out = subprocess.run([sys.executable, "-c", COUNT_CODE], cwd=ws, capture_output=True, text=True, check=True)
                plain_wall.append(time.perf_counter() - t0)
                plain.append(_inner(out.stdout))
            s, p = statistics.median(sandboxed), statistics.median(plain)
            print(f"count ERROR lines, 5 files x 200,000 lines ({policies[0]}, median of 5): in run_code {s * 1e3:.0f} ms "
                  f"(whole round trip {statistics.median(sandboxed_wall) * 1e3:.0f} ms), plain python3 {p * 1e3:.0f} ms "
                  f"(whole process incl. startup {statistics.median(plain_wall) * 1e3:.0f} ms); ratio {s / p:.2f}x")


if __name__ == "__main__":
    main()
