"""Per-step CPU of the loop for several source trees, interleaved: `loop_overhead.py` (the `run` driver, one
run each) alternates between the trees REPS times, so a slow patch of a loaded machine hits every tree alike.

    git -C . archive 26c2b24 | tar -x -C /tmp/base26          # a tree to compare with
    python benchmarks/loop_overhead_compare.py /tmp/base26 . --reps 35

Each tree runs this checkout's benchmarks/loop_overhead.py with its own `src` first on PYTHONPATH (the
benchmark uses only the public API). Prints each round, then every tree's median agent CPU per step and
its ratio to the first tree's.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent / "loop_overhead.py"
FIGURE = re.compile(r"run: agent CPU ([0-9.]+) ms/step")


def one(tree: Path) -> float:
    """Agent CPU ms per step of one run of `tree`."""
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    out = subprocess.run([sys.executable, str(BENCH), "--runs", "1", "--drivers", "run"], capture_output=True,
                         text=True, env=env, cwd=tree, check=True).stdout
    found = FIGURE.search(out)
    if found is None:
        raise RuntimeError(f"no figure in the output of {tree}: {out[-300:]}")
    return float(found.group(1))


def main() -> None:
    """Run the comparison and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--reps", type=int, default=35)
    args = parser.parse_args()
    trees = [t.resolve() for t in args.trees]
    figures: dict[Path, list[float]] = {t: [] for t in trees}
    for rep in range(args.reps):
        for tree in trees:
            figures[tree].append(one(tree))
        print(rep + 1, "  ".join(f"{t.name}: {figures[t][-1]:.2f}" for t in trees), flush=True)
    base = statistics.median(figures[trees[0]])
    print(f"\nagent CPU per step, median of {args.reps} interleaved runs (20 steps, 50 tools, run driver):")
    for tree in trees:
        med = statistics.median(figures[tree])
        print(f"  {tree}: {med:.3f} ms ({med / base:.3f}x of {trees[0].name}); min {min(figures[tree]):.2f}, "
              f"max {max(figures[tree]):.2f}")


if __name__ == "__main__":
    main()
