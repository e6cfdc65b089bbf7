"""Save the raw replies of a real model's bench run as test fixtures (the project's own recordings).

    python benchmarks/save_local_fixtures.py BENCH_DIR tests/fixtures/local_models --model qwen2.5-coder-1.5b

For each episode trace under BENCH_DIR/episodes, writes `<model>__<task>__<mode>__run<k>.json`: the tool
schemas of the first request, the prompt, and every reply as the server sent it (content, native tool
calls, finish reason; calls that the recording's toolmode recovered from text are left out, since the
server sent only text). Labels (`expect`: "call" or "answer") are added by hand afterwards.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> int:
    """Convert every trace of BENCH_DIR."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bench_dir")
    p.add_argument("fixture_dir")
    p.add_argument("--model", required=True)
    p.add_argument("--note", default="", help="how the run was made (server, flags, toolmode commit)")
    args = p.parse_args()
    out = Path(args.fixture_dir)
    out.mkdir(parents=True, exist_ok=True)
    for trace in sorted(Path(args.bench_dir).glob("episodes/*/*/run-*/*.jsonl")):
        events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines() if line.strip()]
        start = next(e for e in events if e["kind"] == "run_start")
        tools = next((e["schemas"] for e in events if e["kind"] == "tools"), [])
        replies = []
        for e in events:
            if e["kind"] != "reply":
                continue
            native = [] if e.get("recovered") else [
                {"name": c["name"], "arguments": c["arguments"]} for c in e.get("tool_calls") or []
            ]
            replies.append({"step": e["step"], "content": e.get("content"), "tool_calls": native,
                            "finish_reason": e.get("finish_reason"), "expect": None})
        run = trace.parent.name.replace("-", "")
        mode, task = trace.parent.parent.name, trace.parent.parent.parent.name
        data = {"model": args.model, "task": task, "mode": mode, "note": args.note, "prompt": start.get("task"),
                "tools": tools, "replies": replies}
        name = f"{args.model}__{task}__{mode}__{run}.json"
        (out / name).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"{name}: {len(replies)} replies")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
