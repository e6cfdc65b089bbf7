"""toolmode and the smolagents peer on the same M3ToolEval tasks: one table, per task and in total.

    python benchmarks/m3_table.py --peer runs/peer-1.5b --toolmode runs/tm-code runs/tm-react

Reads the peer's `results.jsonl` (benchmarks/peer_smolagents.py) and toolmode's (benchmarks/local_model.py),
and prints per task and agent: solved, tool calls, steps, prompt and completion tokens; then per agent:
solved, episodes in which a task tool ran, prompt tokens in all and per solved task, and (toolmode) the
episodes whose answer was taken at step 1 with no tool run before it. For toolmode's code modes, "tool calls"
counts run_code programs, and a task tool "ran" when a program's `code_run` event counts calls to the tools
(traces before that event existed: a program that names a tool and ran without error). Only finished
episodes are counted.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def peer_rows(folder: Path) -> list[dict[str, Any]]:
    """The peer's episodes as table rows."""
    return [{"agent": "smolagents CodeAgent", "task": r["task"], "solved": r["solved"],
             "calls": r["tool_calls"], "task_tool_ran": r["tool_calls_ok"] > 0, "steps": r["steps"],
             "prompt": r["prompt_tokens"], "completion": r["completion_tokens"]}
            for r in _read(folder / "results.jsonl")]


def toolmode_rows(folder: Path) -> list[dict[str, Any]]:
    """toolmode's episodes as table rows, with the task tools that ran read from each trace."""
    rows = []
    for r in _read(folder / "results.jsonl"):
        events = _read(folder / r["trace"]) if r.get("trace") else []
        schemas = next((e["schemas"] for e in events if e.get("kind") == "tools"), [])
        inner = _inner_tool_names(schemas)
        counted = any(e.get("kind") == "code_run" for e in events)  # traces that count a program's tool calls
        ran = any(e.get("kind") == "code_run" and (e.get("calls") or 0) > 0 for e in events)
        end = next((e for e in events if e.get("kind") == "run_end"), {})
        first_results = [e for e in events if e.get("kind") == "tool_result" and e.get("step") == 1]
        step1 = end.get("stopped") == "answer" and end.get("steps") == 1 and not first_results
        for e in events:
            if e.get("kind") != "tool_result" or e.get("error"):
                continue
            if e.get("name") == "run_code":
                if counted:
                    continue  # counted by its code_run event
                code = _code_of(e.get("arguments") or "")
                ran = ran or any(re.search(rf"\b{re.escape(n)}\s*\(", code) for n in inner)
            elif e.get("name") not in ("final_answer", "search_tools"):
                ran = True
        rows.append({"agent": f"toolmode {r['mode']} ({folder.name})", "task": r["task"], "solved": bool(r.get("ok")),
                     "calls": r.get("tool_calls") or 0, "task_tool_ran": ran, "steps": r.get("steps") or 0,
                     "prompt": r.get("prompt_tokens") or 0, "completion": r.get("completion_tokens") or 0,
                     "step1": step1})
    return rows


def _inner_tool_names(schemas: list[dict[str, Any]]) -> list[str]:
    for s in schemas:
        fn = s.get("function") or {}
        if fn.get("name") == "run_code":
            return re.findall(r"^([A-Za-z_]\w*)\(", fn.get("description") or "", re.MULTILINE)
    return []


def _code_of(arguments: str) -> str:
    try:
        return str(json.loads(arguments).get("code", ""))
    except (ValueError, AttributeError):
        return arguments


def print_tables(rows: list[dict[str, Any]]) -> None:
    """Per task and agent, then per agent."""
    print("| task | agent | solved | tool calls | steps | prompt tok | completion tok |")
    print("|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: (r["task"], r["agent"])):
        print(f"| {r['task']} | {r['agent']} | {'yes' if r['solved'] else 'no'} | {r['calls']} | {r['steps']} "
              f"| {r['prompt']:,} | {r['completion']:,} |")
    print()
    print("| agent | episodes | solved | a task tool ran | answered at step 1, no tool | prompt tok "
          "| prompt tok per solved task |")
    print("|---|---|---|---|---|---|---|")
    for agent in sorted({r["agent"] for r in rows}):
        rs = [r for r in rows if r["agent"] == agent]
        solved = sum(r["solved"] for r in rs)
        prompt = sum(r["prompt"] for r in rs)
        per = f"{prompt / solved:,.0f}" if solved else "-"
        step1 = sum(r["step1"] for r in rs) if all("step1" in r for r in rs) else "-"
        print(f"| {agent} | {len(rs)} | {solved} | {sum(r['task_tool_ran'] for r in rs)} | {step1} | {prompt:,} "
              f"| {per} |")


def main(argv: list[str] | None = None) -> int:
    """Print the tables for the given result folders."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--peer", type=Path, help="benchmarks/peer_smolagents.py's --out folder")
    p.add_argument("--toolmode", type=Path, nargs="*", default=[], help="benchmarks/local_model.py's --out folders")
    p.add_argument("--tasks", type=Path, help="only these tasks (a file with one a line)")
    args = p.parse_args(argv)
    rows = peer_rows(args.peer) if args.peer else []
    for folder in args.toolmode:
        rows += toolmode_rows(folder)
    if args.tasks:
        keep = {line.split("#", 1)[0].strip() for line in args.tasks.read_text().splitlines()} - {""}
        rows = [r for r in rows if r["task"] in keep]
    print_tables(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
