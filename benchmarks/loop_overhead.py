"""Framework time per step outside the model server: a 20-step react run with 50 tools.

    python benchmarks/loop_overhead.py [--runs 7] [--steps 20] [--tools 50]

Overhead per step = (run wall time - time spent inside the scripted server) / steps. It covers the
openai SDK's request building and JSON (de)serialisation, HTTP over loopback, dispatch, tool-result
handling and the JSONL trace. The scripted server's own time (tokenising for usage, replay) is excluded.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from toolmode import Agent, Tool
from toolmode.testing import ScriptedModelServer, call, reply


def make_tools(n: int) -> list[Tool]:
    """n small tools with three parameters and a docstring each."""
    tools = []
    for i in range(n):

        def fn(city: str, days: int = 3, units: str = "metric", _i: int = i) -> dict:
            return {"tool": _i, "city": city, "days": days, "units": units}

        fn.__doc__ = f"Tool number {i}: look up record {i} for a city.\n\nArgs:\n    city: The city.\n    days: How many days.\n    units: metric or imperial."
        tools.append(Tool.from_function(fn, name=f"lookup_{i:02d}"))
    return tools


def one_run(steps: int, n_tools: int, trace_dir: Path) -> tuple[float, float, int]:
    """Returns (wall seconds, server seconds, requests)."""
    tools = make_tools(n_tools)
    script = [call(f"lookup_{s % n_tools:02d}", city=f"city {s}", days=s % 7 + 1) for s in range(steps - 1)]
    script.append(reply("done"))
    with ScriptedModelServer(script) as server:
        agent = Agent(tools=tools, mode="react", base_url=server.base_url, model="bench", console=False,
                      runs_dir=trace_dir, max_steps=steps)
        with agent:
            start = time.perf_counter()
            result = agent.run("Look up every city.")
            wall = time.perf_counter() - start
        assert result.stopped == "answer" and result.steps == steps, result.error
        return wall, server.server_seconds, len(server.requests)


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--tools", type=int, default=50)
    args = parser.parse_args()
    per_step = []
    with tempfile.TemporaryDirectory() as tmp:
        one_run(args.steps, args.tools, Path(tmp))  # warm-up: imports, tokenizer, connection pool
        for _ in range(args.runs):
            wall, server, requests = one_run(args.steps, args.tools, Path(tmp))
            per_step.append((wall - server) / requests * 1000)
            print(f"run: wall {wall * 1000:.1f} ms, in server {server * 1000:.1f} ms, "
                  f"{requests} requests, overhead {per_step[-1]:.2f} ms/step")
    print(f"\nloop overhead per step ({args.steps} steps, {args.tools} tools, {args.runs} runs): "
          f"median {statistics.median(per_step):.2f} ms, min {min(per_step):.2f} ms, max {max(per_step):.2f} ms")


if __name__ == "__main__":
    main()
