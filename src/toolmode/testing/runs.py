"""Real run traces on demand, for tests, screenshots and benchmarks of `toolmode view`.

`record_runs` runs a react Agent against the scripted model server, so every trace is written by the real
loop and JSONL sink (nothing is faked): run k asks a question, calls the `lookup` tool a number of times
(each result `result_chars` long) and answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolmode.testing.script import call, reply

TOPICS = ("invoice totals", "shipping zones", "error logs", "sensor drift", "tariff codes", "payroll runs",
          "release notes", "cache misses", "disk quotas", "login failures", "exchange rates", "queue depth")


def _plan(count: int, calls: int | None, max_calls: int) -> list[int]:
    return [calls if calls is not None else (k * 3) % (max_calls + 1) for k in range(count)]  # 0, 3, 6, 2, 5, ...


def record_runs(runs_dir: Path | str, count: int, *, calls: int | None = None, max_calls: int = 6,
                result_chars: int = 1500, model: str = "deepseek-v4-flash",
                task: Callable[[int], str] | None = None) -> list[Path]:
    """Write `count` real traces into `runs_dir`; return their paths, in order.

    Run k makes `calls` tool calls (default: a spread from 0 to `max_calls`); `task(k)` gives its task
    (default: a question about one of a dozen topics); the task sent is `#k <task>`.
    """
    from toolmode import Agent, tool
    from toolmode.testing.server import ScriptedModelServer

    plan = _plan(count, calls, max_calls)
    filler = "The quick brown fox jumps over the lazy dog. "

    @tool
    def lookup(key: str) -> str:
        """Look a key up in the records; returns what is known about it."""
        return (f"{key}: " + filler * (result_chars // len(filler) + 1))[:result_chars]

    def script(request: dict[str, Any], index: int) -> dict[str, Any]:
        messages = request["messages"]
        user = next(m["content"] for m in messages if m["role"] == "user")
        found = re.search(r"#(\d+)", user)
        k = int(found.group(1)) if found else 0
        done = sum(1 for m in messages if m["role"] == "tool")
        if done < plan[k % count]:
            return call("lookup", key=f"{TOPICS[k % len(TOPICS)]}-{done + 1}")
        return reply(f"Run #{k}: {done} look-ups; the {TOPICS[k % len(TOPICS)]} are in order.")

    paths = []
    with ScriptedModelServer(script) as server, Agent(tools=[lookup], mode="react", model=model,
                                                      base_url=server.base_url, runs_dir=runs_dir,
                                                      max_steps=max(plan, default=0) + 2,
                                                      max_result_chars=0) as agent:
        for k in range(count):
            text = task(k) if task else f"Check the {TOPICS[k % len(TOPICS)]} and say whether they are in order."
            result = agent.run(f"#{k} {text}")  # the script reads the run's number back from the task
            if result.trace_path is None:
                raise RuntimeError("the agent wrote no trace")
            paths.append(Path(result.trace_path))
    return paths
