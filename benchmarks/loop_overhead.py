"""Framework time per step outside the model server: a 20-step react run with 50 tools.

    python benchmarks/loop_overhead.py [--runs 7] [--steps 20] [--tools 50] [--drivers run,stream,arun]

Each driver of the one loop is measured on the same run: `run()` (the loop in the calling thread),
`stream()` (the loop on a worker thread, events handed over a queue) and `arun()` (the loop on a worker
thread, the result handed to an asyncio loop); the drivers alternate within each round.

The scripted model server runs in its own process (`python -m toolmode.testing`), so its work never
competes with the agent for the GIL. The figure is the agent process's CPU time per step (every thread:
the loop, tool threads, the stream consumer or the event loop), covering request building
and JSON (de)serialisation in the openai SDK, HTTP handling, dispatch, the tool call, tool-result handling
and the JSONL trace; time blocked waiting for the server is not CPU time, so the server is excluded.
CPU time is also robust on a loaded machine, where wall-clock differences are mostly scheduling noise.
Garbage is collected before the measured run, so each tree's window holds only the collections its own
steps cause.
For context, the wall time per step (server and loopback included) is printed too, and the CPU is split
into the openai SDK's request path (`OpenAI.post`: request building, httpx, response decoding) and
toolmode's own share (loop, request encoding, dispatch, tool validation, trace).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
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


def drive(agent: Agent, driver: str, task: str):  # type: ignore[no-untyped-def]
    """Run `task` with one driver and return the RunResult."""
    if driver == "run":
        return agent.run(task)
    if driver == "stream":
        events = list(agent.stream(task))
        return events[-1].result
    if driver == "arun":
        return asyncio.run(agent.arun(task))
    raise ValueError(f"unknown driver {driver!r}")


def one_run(steps: int, tools: list[Tool], workdir: Path, driver: str = "run") -> tuple[float, float, float]:
    """Returns (wall s, agent-process CPU s, of which in the SDK's post s) of one measured run."""
    script = [call(f"lookup_{s % len(tools):02d}", city=f"city {s}", days=s % 7 + 1) for s in range(steps - 1)]
    script.append(reply("done"))
    proc, url = start_server(script, workdir)
    try:
        with Agent(tools=tools, mode="react", base_url=url, model="bench", console=False,
                   runs_dir=workdir / "runs", max_steps=steps) as agent:
            drive(agent, driver, "warm up the connection")  # not measured: the first request opens the connection
    finally:
        proc.terminate()
        proc.wait()
    proc, url = start_server(script, workdir)
    try:
        with Agent(tools=tools, mode="react", base_url=url, model="bench", console=False,
                   runs_dir=workdir / "runs", max_steps=steps) as agent:
            SDK_CPU[0] = 0.0
            # Start the window with no garbage pending: otherwise whether a costly older-generation collection,
            # owed to the warm-up and to imports, lands in these 20 steps depends on allocation counts alone
            # (one more module imported moved a 2 ms gen-1 collection into the window: +0.1 ms/step).
            gc.collect()
            cpu0, wall0 = time.process_time(), time.perf_counter()
            result = drive(agent, driver, "Look up every city.")
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
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
    parser.add_argument("--drivers", default="run,stream,arun", help="comma-separated: run, stream, arun")
    args = parser.parse_args()
    drivers = [d.strip() for d in args.drivers.split(",") if d.strip()]
    tools = make_tools(args.tools)
    cpu_ms: dict[str, list[float]] = {d: [] for d in drivers}
    wall_ms: dict[str, list[float]] = {d: [] for d in drivers}
    sdk_ms: dict[str, list[float]] = {d: [] for d in drivers}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):
            for d in drivers:  # alternate, so a slow patch of the machine hits every driver alike
                wall, cpu, sdk = one_run(args.steps, tools, Path(tmp), d)
                cpu_ms[d].append(cpu / args.steps * 1000)
                sdk_ms[d].append(sdk / args.steps * 1000)
                wall_ms[d].append(wall / args.steps * 1000)
                print(f"{d:>6}: agent CPU {cpu_ms[d][-1]:.2f} ms/step (openai SDK post {sdk_ms[d][-1]:.2f}), "
                      f"wall {wall_ms[d][-1]:.2f} ms/step (server included)")
    print(f"\nloop overhead per step ({args.steps} steps, {args.tools} tools, {args.runs} runs per driver):")
    base = statistics.median(cpu_ms[drivers[0]])
    for d in drivers:
        med = statistics.median(cpu_ms[d])
        rel = f" ({(med / base - 1) * 100:+.1f}% vs {drivers[0]})" if d != drivers[0] else ""
        own = [c - s for c, s in zip(cpu_ms[d], sdk_ms[d], strict=True)]
        print(f"  {d:>6}: agent CPU per step median {med:.2f} ms{rel} (min {min(cpu_ms[d]):.2f}, "
              f"max {max(cpu_ms[d]):.2f}); openai SDK post {statistics.median(sdk_ms[d]):.2f} ms, "
              f"toolmode's own {statistics.median(own):.2f} ms; wall median {statistics.median(wall_ms[d]):.2f} ms")


if __name__ == "__main__":
    main()
