"""The requests toolmode sends in an M3ToolEval episode, with the settings of the issue-18 evidence runs
(benchmarks/local_model.py: llamacpp preset, qwen2.5-coder-1.5b, temperature 0.2, 768 tokens, 8 steps), printed
as JSON: `{"task", "mode", "requests"}`. The model is the scripted server: it serves the replies of a recorded
trace (`--trace`; the tools run for real), or one answer (then only the first request is made). No real server
is asked anything.

It uses only APIs that branch `local` (the code that produced the evidence) and the ported code share, so running
it on both shows whether they send the same requests; tests/fixtures/local_models/m3/requests.json holds
`local`'s, captured with:

    git -C /work/wt/local archive local src | tar -x -C /tmp/local-src
    PYTHONPATH=/tmp/local-src/src python benchmarks/episode_requests.py --suite-path /work/shared/data/m3tooleval \\
        [--trace EVIDENCE.jsonl] TASK:MODE
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from toolmode.bench.episode import BenchConfig, run_episode
from toolmode.bench.modespec import parse_modes
from toolmode.bench.suites.m3tooleval import m3tooleval_suite
from toolmode.testing import ScriptedModelServer, reply

EVIDENCE = {"model": "qwen2.5-coder-1.5b", "preset": "llamacpp", "temperature": 0.2, "max_tokens": 768,
            "request_timeout": 900.0}
EVIDENCE_STEPS = 8


def recorded_replies(trace: Path) -> list[dict[str, Any]]:
    """The scripted server's items: each recorded reply as the server sent it (calls read from the text are
    left in the text; `wire_tool_calls` when recovery changed the server's calls)."""
    items = []
    for line in trace.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("kind") != "reply":
            continue
        wire = event.get("wire_tool_calls")
        calls = wire if wire is not None else [c for c in event["tool_calls"] if c.get("recovered") is None]
        item: dict[str, Any] = {"content": event["content"], "finish_reason": event.get("finish_reason")}
        if calls:
            item["tool_calls"] = [{"id": c["id"], "name": c["name"], "arguments": c["arguments"]} for c in calls]
        items.append(item)
    return items


def episode_requests(suite_path: str, task_name: str, mode: str, trace: Path | None = None,
                     out: Path | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every request body an episode of `task_name` in `mode` sends (evidence settings), and its results
    record; the episode's folder is under `out` (a temporary one when None)."""
    [task] = [t for t in m3tooleval_suite(suite_path) if t.name == task_name]
    [spec] = parse_modes(mode)
    script = recorded_replies(trace) if trace else [reply("Answer: 0")]
    steps = EVIDENCE_STEPS if trace else 1
    with ScriptedModelServer(script) as server, tempfile.TemporaryDirectory() as scratch:
        config = BenchConfig(base_url=server.base_url, max_steps=steps, **EVIDENCE)  # type: ignore[arg-type]
        record = run_episode(task, spec, 1, 1, out or Path(scratch), config)
        return list(server.requests), record


def main(argv: list[str] | None = None) -> int:
    """Print one JSON line for the episode."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite-path", required=True, help="M3ToolEval's folder (holding tasks/)")
    p.add_argument("--trace", type=Path, help="serve this recorded episode's replies (default: one answer)")
    p.add_argument("episode", metavar="TASK:MODE")
    args = p.parse_args(argv)
    task, mode = args.episode.rsplit(":", 1)
    requests, _ = episode_requests(args.suite_path, task, mode, args.trace)
    print(json.dumps({"task": task, "mode": mode, "requests": requests}, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
