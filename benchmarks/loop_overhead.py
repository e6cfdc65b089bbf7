"""Framework time per step outside the model server: a 20-step react run with 50 tools.

    python benchmarks/loop_overhead.py [--runs 7] [--steps 20] [--tools 50]

The scripted model server runs in its own process (`python -m toolmode.testing`), so its work never
competes with the agent for the GIL. The figure is the agent thread's CPU time per step: request building
and JSON (de)serialisation in the openai SDK, HTTP handling, dispatch, the tool call, tool-result handling
and the JSONL trace; time blocked waiting for the server is not CPU time, so the server is excluded.
CPU time is also robust on a loaded machine, where wall-clock differences are mostly scheduling noise.
For context, the wall time per step (server and loopback included) is printed too, and the CPU is split
into the openai SDK's request path (`OpenAI.post`: request building, httpx, response decoding) and
toolmode's own share (loop, request encoding, dispatch, tool validation, trace).
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import openai

from toolmode import Agent, Tool
from toolmode.testing import call, reply

SDK_CPU = [0.0]  # thread CPU seconds spent inside OpenAI.post


def _timed(post):  # type: ignore[no-untyped-def]
    @functools.wraps(post)
    def wrapper(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        start = time.thread_time()
        try:
            return post(self, *args, **kwargs)
        finally:
            SDK_CPU[0] += time.thread_time() - start

    return wrapper


openai.OpenAI.post = _timed(openai.OpenAI.post)  # type: ignore[method-assign]


def make_tools(n: int) -> list[Tool]:
    """n small tools with three parameters and a docstring each."""
    tools = []
    for i in range(n):

        def fn(city: str, days: int = 3, units: str = "metric", _i: int = i) -> dict:
            return {"tool": _i, "city": city, "days": days, "units": units}

        fn.__doc__ = f"Tool number {i}: look up record {i} for a city.\n\nArgs:\n    city: The city.\n    days: How many days.\n    units: metric or imperial."
        tools.append(Tool.from_function(fn, name=f"lookup_{i:02d}"))
    return tools


def start_server(script: list, workdir: Path) -> tuple[subprocess.Popen, str]:
    """A scripted model server in a child process; returns it and its base URL."""
    path = workdir / "script.json"
    path.write_text(json.dumps(script))
    proc = subprocess.Popen([sys.executable, "-m", "toolmode.testing", "--script", str(path)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    url = next(word for word in line.split() if word.startswith("http"))
    return proc, url


def one_run(steps: int, tools: list[Tool], workdir: Path) -> tuple[float, float, float]:
    """Returns (wall s, agent-thread CPU s, of which in the SDK's post s) of one measured run."""
    script = [call(f"lookup_{s % len(tools):02d}", city=f"city {s}", days=s % 7 + 1) for s in range(steps - 1)]
    script.append(reply("done"))
    proc, url = start_server(script, workdir)
    try:
        with Agent(tools=tools, mode="react", base_url=url, model="bench", console=False,
                   runs_dir=workdir / "runs", max_steps=steps) as agent:
            agent.run("warm up the connection")  # not measured: the first request opens the connection
    finally:
        proc.terminate()
        proc.wait()
    proc, url = start_server(script, workdir)
    try:
        with Agent(tools=tools, mode="react", base_url=url, model="bench", console=False,
                   runs_dir=workdir / "runs", max_steps=steps) as agent:
            SDK_CPU[0] = 0.0
            cpu0, wall0 = time.thread_time(), time.perf_counter()
            result = agent.run("Look up every city.")
            wall, cpu = time.perf_counter() - wall0, time.thread_time() - cpu0
    finally:
        proc.terminate()
        proc.wait()
    assert result.stopped == "answer" and result.steps == steps, result.error
    return wall, cpu, SDK_CPU[0]


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--tools", type=int, default=50)
    args = parser.parse_args()
    tools = make_tools(args.tools)
    cpu_ms, wall_ms, sdk_ms = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):
            wall, cpu, sdk = one_run(args.steps, tools, Path(tmp))
            cpu_ms.append(cpu / args.steps * 1000)
            sdk_ms.append(sdk / args.steps * 1000)
            wall_ms.append(wall / args.steps * 1000)
            print(f"run: agent CPU {cpu_ms[-1]:.2f} ms/step (openai SDK post {sdk_ms[-1]:.2f}), "
                  f"wall {wall_ms[-1]:.2f} ms/step (server included)")
    print(f"\nloop overhead per step ({args.steps} steps, {args.tools} tools, {args.runs} runs):")
    print(f"  agent-thread CPU per step: median {statistics.median(cpu_ms):.2f} ms "
          f"(min {min(cpu_ms):.2f}, max {max(cpu_ms):.2f})")
    own = [c - s for c, s in zip(cpu_ms, sdk_ms, strict=True)]
    print(f"    of which the openai SDK's post: median {statistics.median(sdk_ms):.2f} ms; "
          f"toolmode's own: median {statistics.median(own):.2f} ms")
    print(f"  wall per step, server incl.: median {statistics.median(wall_ms):.2f} ms "
          f"(min {min(wall_ms):.2f}, max {max(wall_ms):.2f})")


if __name__ == "__main__":
    main()
