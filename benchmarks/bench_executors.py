"""Episodes per minute: `--executor local --jobs J` against `--executor ray` on the same scripted bench.

    python benchmarks/bench_executors.py [--runs 3] [--jobs 2] [--ray-address HOST:PORT]

Both executors run the same episodes (built-in suite × react,code,hybrid × runs, scripted players) through
`run_bench`. The clock runs from the first episode started to the last one recorded; joining Ray (or starting
a local Ray when no address is given) is timed separately. Without an address, Ray starts on this machine
with `--jobs` CPUs, so the figures show Ray's own cost per episode, not a bigger machine.
The replies are scripted: these figures measure the harness and the executor, not a model.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from toolmode.bench.episode import BenchConfig
from toolmode.bench.modespec import parse_modes
from toolmode.bench.runner import LocalExecutor, run_bench
from toolmode.bench.source import TaskSource


def _timed(label: str, run: callable, episodes: int) -> float:  # type: ignore[valid-type]
    started = time.monotonic()
    written = run()
    seconds = time.monotonic() - started
    assert len(written) == episodes and all(r["ok"] for r in written), f"{label}: not every episode succeeded"
    rate = episodes / seconds * 60
    print(f"{label:<34} {episodes:>4} episodes  {seconds:7.1f} s  {rate:7.1f} episodes/min")
    return rate


def main() -> None:
    """Run the bench with both executors and print episodes/min for each."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--modes", default="react,code,hybrid")
    p.add_argument("--ray-address", default=None)
    args = p.parse_args()
    source = TaskSource()
    tasks, specs = source.load(), parse_modes(args.modes)
    episodes = len(tasks) * len(specs) * args.runs
    config = BenchConfig(scripted=True)
    with tempfile.TemporaryDirectory(prefix="bench-exec-") as tmp:
        local_dir, ray_dir = Path(tmp) / "local", Path(tmp) / "ray"
        _timed(
            f"local --jobs {args.jobs}",
            lambda: run_bench(
                tasks,
                specs,
                args.runs,
                local_dir,
                config,
                jobs=args.jobs,
                progress=False,
                executor=LocalExecutor(local_dir, config),
            ),  # fmt: skip
            episodes,
        )
        import ray

        from toolmode.bench.ray_executor import RayExecutor

        started = time.monotonic()
        if args.ray_address is None:
            ray.init(num_cpus=args.jobs, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        executor = RayExecutor(ray_dir, config, source, args.ray_address)
        print(
            f"ray: joined in {time.monotonic() - started:.1f} s ({args.ray_address or 'local Ray started here'})"
        )
        try:
            _timed(
                f"ray --jobs {args.jobs}",
                lambda: run_bench(
                    tasks,
                    specs,
                    args.runs,
                    ray_dir,
                    config,
                    jobs=args.jobs,
                    progress=False,
                    executor=executor,
                ),  # fmt: skip
                episodes,
            )
            print(executor.summary())
        finally:
            executor.close()
            ray.shutdown()


if __name__ == "__main__":
    main()
