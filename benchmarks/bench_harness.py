"""How much the bench harness itself costs, measured against the scripted model server.

1. Per-episode overhead: `wall_time - model_time` of each RunResult (agent loop, tools, sandbox, trace;
   model_time is the time spent waiting for the scripted server), and `episode_time - model_time`
   (also fixture building, fixture and scripted servers, Agent and sandbox start-up, checking).
2. Wall time of the whole built-in suite × 4 modes × 3 runs at --jobs 1 and --jobs 8.

    python benchmarks/bench_harness.py [--runs 3] [--modes react,code,hybrid,code+search] [--jobs 1,8]

The replies are scripted: these figures measure the harness, not a model.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from toolmode.bench.episode import BenchConfig
from toolmode.bench.modespec import parse_modes
from toolmode.bench.runner import run_bench
from toolmode.bench.suite import builtin_suite


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "mean_ms": round(1000 * statistics.fmean(values), 1),
        "sd_ms": round(1000 * statistics.stdev(values), 1) if len(values) > 1 else 0.0,
        "median_ms": round(1000 * statistics.median(values), 1),
        "p90_ms": round(1000 * _pct(values, 0.9), 1),
        "n": len(values),
    }


def main() -> None:
    """Run the measurements and print them (and a JSON line with every figure)."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--modes", default="react,code,hybrid,code+search")
    parser.add_argument(
        "--jobs", default="1,8", help="comma-separated --jobs values to time the full suite with"
    )
    args = parser.parse_args()
    tasks, specs = builtin_suite(), parse_modes(args.modes)
    episodes = len(tasks) * len(specs) * args.runs
    print(f"scripted server; {len(tasks)} tasks × {len(specs)} modes × {args.runs} runs = {episodes} episodes; "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    figures: dict[str, object] = {"episodes": episodes, "cpus": os.cpu_count()}
    records: list[dict] = []
    for jobs in [int(j) for j in args.jobs.split(",")]:
        with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
            started = time.perf_counter()
            written = run_bench(tasks, specs, args.runs, Path(tmp), BenchConfig(scripted=True), jobs=jobs,
                                progress=False)  # fmt: skip
            elapsed = time.perf_counter() - started
        failed = [r for r in written if not r["ok"]]
        figures[f"suite_wall_s_jobs{jobs}"] = round(elapsed, 2)
        print(f"--jobs {jobs}: {elapsed:.1f} s for {len(written)} episodes "
              f"({1000 * elapsed / len(written):.0f} ms/episode), {len(failed)} failed")  # fmt: skip
        if jobs == 1:
            records = written  # overhead is measured without contention
    if records:
        loop = [r["wall_time"] - r["model_time"] for r in records if "wall_time" in r]
        whole = [r["episode_time"] - r["model_time"] for r in records if "model_time" in r]
        figures["loop_overhead"] = _summary(loop)
        figures["episode_overhead"] = _summary(whole)
        print("per-episode overhead at --jobs 1 (wall minus model time):")
        print(f"  agent run (RunResult.wall_time - model_time): {figures['loop_overhead']}")
        print(
            f"  whole episode incl. fixtures, servers, Agent/sandbox start, check: {figures['episode_overhead']}"
        )
        by_mode = {}
        for spec in specs:
            mine = [r for r in records if r["mode"] == spec.label and "model_time" in r]
            by_mode[spec.label] = {
                "run_ms": round(1000 * statistics.median(r["wall_time"] - r["model_time"] for r in mine), 1),
                "episode_ms": round(
                    1000 * statistics.median(r["episode_time"] - r["model_time"] for r in mine), 1
                ),
                "model_ms": round(1000 * statistics.median(r["model_time"] for r in mine), 1),
            }
            print(f"  {spec.label:12s} median: run {by_mode[spec.label]['run_ms']} ms, "
                  f"episode {by_mode[spec.label]['episode_ms']} ms, model {by_mode[spec.label]['model_ms']} ms")  # fmt: skip
        figures["by_mode"] = by_mode
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
