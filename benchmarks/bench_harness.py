"""How much the bench harness itself costs, measured against the scripted model server.

1. Per-episode overhead at --jobs 1, three ways (each record has `episode_time`, the whole episode's wall
   time; `server_time`, the time the scripted server spent producing its replies; `model_time`, the time
   the agent waited for the model, i.e. server time plus HTTP round trips; and `wall_time`, the agent run):
   - harness overhead = episode_time - server_time: the issue's "episode wall time minus model-server
     time": fixture building, fixture and scripted servers, Agent and sandbox start-up, the agent loop,
     tools, traces, the HTTP client, checking;
   - without the client = episode_time - model_time: the same minus the HTTP round trips to the server;
   - agent loop only = wall_time - model_time: RunResult's own figure (loop, tools, sandbox, trace).
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
        ways = {
            "harness_overhead": (
                "episode_time",
                "server_time",
                "episode_time - server_time (the issue's figure)",
            ),
            "without_client": ("episode_time", "model_time", "episode_time - model_time (also minus HTTP)"),
            "agent_loop": ("wall_time", "model_time", "wall_time - model_time (agent loop only)"),
        }
        timed = [
            r
            for r in records
            if all(r.get(k) is not None for k in ("episode_time", "server_time", "model_time"))
        ]
        print(f"per-episode overhead at --jobs 1 over {len(timed)} episodes (mean, sd, median, p90 in ms):")
        for name, (whole, minus, label) in ways.items():
            figures[name] = _summary([r[whole] - r[minus] for r in timed])
            print(f"  {label:50s} {figures[name]}")
        figures["server_time"] = _summary([r["server_time"] for r in timed])
        figures["model_time"] = _summary([r["model_time"] for r in timed])
        print(f"  {'server_time (scripted server producing replies)':50s} {figures['server_time']}")
        print(f"  {'model_time (agent waiting for the model)':50s} {figures['model_time']}")
        by_mode = {}
        for spec in specs:
            mine = [r for r in timed if r["mode"] == spec.label]
            by_mode[spec.label] = {
                name: round(1000 * statistics.median(r[whole] - r[minus] for r in mine), 1)
                for name, (whole, minus, _) in ways.items()
            } | {"server_ms": round(1000 * statistics.median(r["server_time"] for r in mine), 1)}
            m = by_mode[spec.label]
            print(f"  {spec.label:12s} median ms: harness {m['harness_overhead']}, without client "
                  f"{m['without_client']}, agent loop {m['agent_loop']}, server {m['server_ms']}")  # fmt: skip
        figures["by_mode"] = by_mode
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
