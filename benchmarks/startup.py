"""Start-up time of the CLI and the package, each as a fresh subprocess: median (and min) of N runs.

Wall time is what a user waits; on a busy machine it mostly measures the queue, so the CPU time the child
used (user + system, from getrusage) is printed beside it as the load-independent figure.

    PYTHONPATH=src python benchmarks/startup.py            # 15 runs each
    PYTHONPATH=src python benchmarks/startup.py --runs 30

Also prints which heavy third-party packages `import toolmode` pulls in (none of openai, mcp, numpy,
matplotlib should be among them).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = {
    "python -c pass (interpreter floor)": [sys.executable, "-c", "pass"],
    "python -c 'import toolmode'": [sys.executable, "-c", "import toolmode"],
    "toolmode --help": [sys.executable, "-m", "toolmode", "--help"],
    "toolmode --version": [sys.executable, "-m", "toolmode", "--version"],
    "toolmode tools": [sys.executable, "-m", "toolmode", "tools"],
    "toolmode tools search 'read a file'": [sys.executable, "-m", "toolmode", "tools", "search", "read a file"],
}
HEAVY = ("openai", "mcp", "numpy", "matplotlib", "httpx", "pydantic", "rich")


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_command(argv: list[str], runs: int, cwd: str) -> tuple[float, float, float]:
    """Median and minimum wall time and median CPU time, in ms, of `runs` fresh runs (after a warm-up run)."""
    subprocess.run(argv, cwd=cwd, capture_output=True, check=True)
    times, cpu = [], []
    for _ in range(runs):
        cpu_start, start = _child_cpu(), time.perf_counter()
        subprocess.run(argv, cwd=cwd, capture_output=True, check=True)
        times.append(1000 * (time.perf_counter() - start))
        cpu.append(1000 * (_child_cpu() - cpu_start))
    return statistics.median(times), min(times), statistics.median(cpu)


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--skip-version", action="store_true", help="for versions without `toolmode --version`")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cwd:  # an empty workspace, so `toolmode tools` is accepted
        print(f"{'command':<40} {'median ms':>10} {'min ms':>8} {'CPU ms':>8}   ({args.runs} runs, "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
        for label, argv in COMMANDS.items():
            if args.skip_version and "--version" in argv:
                continue
            median, low, cpu = time_command(argv, args.runs, cwd)
            print(f"{label:<40} {median:10.1f} {low:8.1f} {cpu:8.1f}")
        probe = f"import sys, toolmode; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
        loaded = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True, check=True)
        print(f"heavy packages loaded by `import toolmode`: {loaded.stdout.strip() or '(none)'}")


if __name__ == "__main__":
    main()
