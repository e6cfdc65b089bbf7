"""Sandbox figures: warm run_code round trip, tool-call RPC round trip, worker cold start, throughput vs plain
python3, idle RSS.

Run: `python benchmarks/sandbox.py` (Linux with Landlock; prints figures, no assertions).

Without persistence a worker runs one program and is then replaced by a spare started in the background.
"Round trip on a warm worker" is one run() on a worker that is already confined and ready: the benchmark
waits for the spare (`Sandbox._wait_ready()`) before each timed run. The back-to-back figure (runs with no
pause between them, so each also waits for its spare to start) is printed too.

"Worker cold start" is the time from asking for a new worker (process start, policy sent) until it has
confined itself and reported ready, measured alone (no run in flight); the start of a bare
`python -I -S -B -c pass` is printed beside it as the floor. On a busy machine the wall times mostly
measure waiting for a CPU; the CPU time the worker used until ready does not.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from toolmode.sandbox import Sandbox, SandboxLimits, StubSpec

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
    """Seconds from spawning a worker to its `ready` frame, and the CPU seconds (user + system) the worker
    used until then, n times. The worker is killed right after `ready` and reaped before the next one, so
    getrusage(RUSAGE_CHILDREN) grows by its CPU time alone: a figure the load of the machine barely moves."""
    wall, cpu = [], []
    for _ in range(n):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        worker = sb._spawn()
        msg = worker.chan.recv(deadline=time.monotonic() + 15)
        wall.append(time.perf_counter() - t0)
        sb._discard(worker)
        sb._reaping[-1].result()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if msg.get("op") != "ready":
            raise SystemExit(f"worker did not start: {msg}")
    return wall, cpu


def _worker_run_cpu(ws: Path, noop: StubSpec, n: int) -> list[float]:
    """CPU seconds the worker spends per print(1) run, n times: a persistent worker (the same Runner.run as
    a fresh one; a fresh worker is killed as its run ends) read in /proc/PID/schedstat (nanoseconds) around
    each run."""
    def ran_ns(pid: int) -> int:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])

    out = []
    with Sandbox(ws, SandboxLimits(timeout=60), persistent=True) as sb:
        sb.run("pass", [], lambda n, k: None)
        pid = sb.spawned_pids[-1]
        for _ in range(n):
            before = ran_ns(pid)
            sb.run("print(1)", [noop], lambda n, k: None)
            out.append((ran_ns(pid) - before) / 1e9)
    return out


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


def main() -> None:
    """Print the figures."""
    noop = StubSpec("noop", [], "noop() -> None", "Do nothing.")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        _make_logs(ws)
        with Sandbox(ws, SandboxLimits(timeout=60, max_tool_calls=5000)) as sb:
            print(sb.describe_policy())
            sb.run("pass", [], lambda n, k: None)
            sb._wait_ready()
            rss = Path(f"/proc/{sb.spawned_pids[-1]}/status").read_text()
            fields = {line.split(":")[0]: line.split(":")[1].strip() for line in rss.splitlines() if ":" in line}
            rounds, host_cpu = [], []
            for _ in range(300):
                sb._wait_ready()  # the spare is confined and ready: time the run alone
                t0, c0 = time.perf_counter(), time.thread_time()
                sb.run("print(1)", [noop], lambda n, k: None)
                rounds.append(time.perf_counter() - t0)
                host_cpu.append(time.thread_time() - c0)
            print(f"run_code round trip (ready worker, print(1), n=300): median {statistics.median(rounds) * 1e3:.2f} ms, "
                  f"p95 {_pct(rounds, 0.95) * 1e3:.2f} ms; CPU time of the calling thread in run() median "
                  f"{statistics.median(host_cpu) * 1e3:.3f} ms")
            back = []
            for _ in range(50):
                t0 = time.perf_counter()
                sb.run("print(1)", [noop], lambda n, k: None)
                back.append(time.perf_counter() - t0)
            print(f"run_code back to back (each run also waits for its new worker to start, n=50): median "
                  f"{statistics.median(back) * 1e3:.1f} ms, p95 {_pct(back, 0.95) * 1e3:.1f} ms")
            med, p95 = map(float, sb.run(RPC_CODE, [noop], lambda n, k: None).output.split())
            print(f"tool call RPC round trip (n=2000, timed inside the program): median {med * 1e3:.3f} ms, "
                  f"p95 {p95 * 1e3:.3f} ms")
            worker_cpu = _worker_run_cpu(ws, noop, 300)
            print(f"CPU time of the worker per print(1) run (a persistent worker, /proc schedstat, n=300): median "
                  f"{statistics.median(worker_cpu) * 1e3:.3f} ms; with the calling thread's: "
                  f"{(statistics.median(worker_cpu) + statistics.median(host_cpu)) * 1e3:.3f} ms")
            sb._wait_ready()
            (cold, cold_cpu), (bare, bare_cpu) = _cold_start(sb, 40), _bare_start(40)
            print(f"worker cold start, spawn to ready (n=40): median {statistics.median(cold) * 1e3:.1f} ms, "
                  f"p95 {_pct(cold, 0.95) * 1e3:.1f} ms, the worker's CPU time median "
                  f"{statistics.median(cold_cpu) * 1e3:.1f} ms; bare `python -I -S -B -c pass`: median "
                  f"{statistics.median(bare) * 1e3:.1f} ms, CPU {statistics.median(bare_cpu) * 1e3:.1f} ms")

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
            print(f"count ERROR lines, 5 files x 200,000 lines (median of 5): in run_code {s * 1e3:.0f} ms "
                  f"(whole round trip {statistics.median(sandboxed_wall) * 1e3:.0f} ms), plain python3 {p * 1e3:.0f} ms "
                  f"(whole process incl. startup {statistics.median(plain_wall) * 1e3:.0f} ms); ratio {s / p:.2f}x")
            print(f"idle worker memory (a ready spare): VmHWM (peak RSS) {fields.get('VmHWM')}, "
                  f"VmRSS {fields.get('VmRSS')}")


if __name__ == "__main__":
    main()
