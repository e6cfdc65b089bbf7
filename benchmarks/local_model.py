"""Classic tasks × modes × N runs against a real OpenAI-compatible endpoint (a local model, typically).

    python benchmarks/local_model.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-1.5b \
        --tasks log_stats --modes code --runs 3 --out runs/local-1.5b

Runs one episode at a time (a CPU llama.cpp server has one slot), appends each result to
`OUT/results.jsonl` (a rerun with the same OUT skips finished episodes), prints one line per episode
with its failure class, then the table: solved/N, median steps, prompt and completion tokens, wall time.

Failure classes, read from each episode's trace:
- server: the request failed (timeout, HTTP error, unreachable);
- toolmode: a harness or internal error, a reply that was a tool call taken as the final answer, or a wrong
  answer toolmode let through (`toolmode_part`: the answer is a tool's error or toolmode's note, every call
  failed, `import tools` refused, no program called a tool), unless toolmode sent it back and it came again;
- model: a wrong answer, or no answer within the step limit.
This runs by hand (minutes per episode on a CPU), never in the test suite.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

from toolmode.act_first import not_an_answer
from toolmode.bench.episode import BenchConfig, run_episode
from toolmode.bench.modespec import parse_modes
from toolmode.bench.suite import builtin_suite, select
from toolmode.models.text_calls import Tools, find_text_calls

CLASSIC = "log_stats,time_and_title,csv_sales"


def main(argv: list[str] | None = None) -> int:
    """Run the episodes that are not yet in OUT/results.jsonl, then print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    p.add_argument("--model", default="default")
    p.add_argument("--preset", default="llamacpp")
    p.add_argument("--tasks", default=CLASSIC, help="task names, comma-separated, or a file with one a line")
    p.add_argument("--suite-path", help="run M3ToolEval's tasks from this folder (holding tasks/) instead")
    p.add_argument("--modes", default="react,code,hybrid")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--max-steps", type=int, default=8)
    p.add_argument("--request-timeout", type=float, default=600.0)
    p.add_argument("--temperature", type=float, default=None)
    p.add_argument("--max-tokens", type=int, default=1024)
    p.add_argument("--act-first", choices=["schema", "tool_choice", "nudge", "off"], default=None,
                   help="how runs are made to start with a call (default: the preset's)")
    p.add_argument("--out", required=True)
    p.add_argument("--table-only", action="store_true", help="print the table of OUT, run nothing")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    done = {(r["model"], r["task"], r["mode"], r["run"]) for r in _read(results)}
    config = BenchConfig(model=args.model, base_url=args.base_url, preset=args.preset, max_steps=args.max_steps,
                         temperature=args.temperature, max_tokens=args.max_tokens,
                         request_timeout=args.request_timeout, act_first=args.act_first)
    if not args.table_only:
        try:
            tasks = select(_suite(args.suite_path), _task_names(args.tasks))
            specs = parse_modes(args.modes)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        for run in range(1, args.runs + 1):
            for task in tasks:
                for spec in specs:
                    if (args.model, task.name, spec.label, run) in done:
                        continue
                    record = run_episode(task, spec, run, run, out, config)
                    record["model"] = args.model
                    record["class"], record["why"] = classify(record, out)
                    with results.open("a", encoding="utf-8") as f:
                        f.write(json.dumps(record, ensure_ascii=False) + "\n")
                    print(_line(record), flush=True)
    print_table(_read(results))
    return 0


def _suite(suite_path: str | None) -> list[Any]:
    if suite_path is None:
        return builtin_suite()
    from toolmode.bench.suites.m3tooleval import m3tooleval_suite

    return m3tooleval_suite(suite_path)


def _task_names(tasks: str) -> list[str]:
    """Names from `a,b,c`, or from a file with one a line (`#` starts a comment)."""
    path = Path(tasks)
    if path.is_file():
        lines = [line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]
        return [line for line in lines if line]
    return [t.strip() for t in tasks.split(",") if t.strip()]


def classify(record: dict[str, Any], out: Path) -> tuple[str | None, str]:
    """(failure class, short reason) of one episode; (None, reason) when it was solved."""
    if record.get("ok"):
        return None, record.get("reason", "")
    events = _events(out / record["trace"]) if record.get("trace") else []
    notes = _notes(events)
    if record.get("reason") == "harness error":
        return "toolmode", f"harness error: {record.get('error')}"
    if record.get("stopped") == "error":
        error = str(record.get("error") or "")
        if error.startswith("internal error"):
            return "toolmode", error[:160]
        return "server", error[:160]
    if record.get("stopped") == "answer":
        schemas = next((e["schemas"] for e in events if e.get("kind") == "tools"), [])
        found = find_text_calls(record.get("answer") or "", Tools.from_schemas(schemas), code_blocks=True)
        if found.calls or found.problem:
            return "toolmode", "a tool call written as text was taken as the answer"
        why = toolmode_part(record.get("answer") or "", events)
        if why is not None:
            return "toolmode", f"{why} ({record.get('reason')}){notes}"
        return "model", f"wrong answer ({record.get('reason')}){notes}"
    return "model", f"{record.get('reason')}{notes}"


CORRECTIONS = ("act_first", "not_an_answer")  # notices of toolmode's checks that send an answer back


def toolmode_part(answer: str, events: list[dict[str, Any]]) -> str | None:
    """What toolmode let through on the way to a wrong answer, read from the trace (issue 18's analysis): the
    answer was a tool's error or toolmode's note, every call failed, the tools could not be imported, or no
    program called a tool; None when none of these, or when toolmode's check sent the answer back and the
    model gave it again (then the failure is the model's)."""
    results = [e for e in events if e.get("kind") == "tool_result"]
    runs = [e for e in events if e.get("kind") == "code_run"]
    corrected = any(e.get("kind") == "notice" and e.get("about") in CORRECTIONS for e in events)
    errors = [str(e.get("result", "")) for e in results if e.get("error")]
    notes = [n.strip() for e in results for n in re.findall(r"\[note: (.*?)\]", str(e.get("result", "")), re.S)]
    signals = []
    why = not_an_answer(answer, errors, notes)
    if why is not None:
        signals.append(f"the answer is not an answer ({why.replace('_', ' ')})")
    if any("ModuleNotFoundError" in text and "'tools'" in text for text in errors):
        signals.append("`import tools` refused")
    if results and len(errors) == len(results):
        signals.append("answered after calls that all failed")
    direct = [e for e in results if e.get("name") != "run_code" and not e.get("error")]
    if runs and not direct and all(e.get("calls") == 0 for e in runs):
        signals.append("no program called a tool (code_run calls 0)")
    if not signals or corrected and why is None:
        return None
    return "; ".join(signals) + (" (after a correction)" if corrected else "")


def _notes(events: list[dict[str, Any]]) -> str:
    counts = {
        "recovered": sum(1 for e in events if e.get("kind") == "reply" and e.get("recovered")),
        "corrected": sum(1 for e in events if e.get("kind") == "notice" and e.get("about") == "unreadable_call"),
        "repeats": sum(1 for e in events if e.get("kind") == "notice" and e.get("about") == "repeated_call"),
        "failed programs": sum(1 for e in events if e.get("kind") == "tool_result" and e.get("error")),
    }
    text = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
    return f"; {text}" if text else ""


def print_table(records: list[dict[str, Any]]) -> None:
    """task × mode × model: solved/N, median steps, tokens and wall time, failure classes."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["task"], r["mode"], r.get("model", "?")), []).append(r)
    w = max([15, *(len(task) + 1 for task, _, _ in groups)])
    head = f"{'task':<{w}}{'mode':<8}{'model':<22}{'solved':>7}{'steps':>7}{'prompt tok':>11}{'compl tok':>10}{'wall s':>8}  failures"
    print(head)
    print("-" * len(head))
    for (task, mode, model), rs in sorted(groups.items()):
        solved = sum(1 for r in rs if r.get("ok"))
        classes: dict[str, int] = {}
        for r in rs:
            if r.get("class"):
                classes[r["class"]] = classes.get(r["class"], 0) + 1
        fails = ", ".join(f"{k} {v}" for k, v in sorted(classes.items())) or "-"
        print(f"{task:<{w}}{mode:<8}{model:<22}{f'{solved}/{len(rs)}':>7}{_median(rs, 'steps'):>7}"
              f"{_median(rs, 'prompt_tokens'):>11}{_median(rs, 'completion_tokens'):>10}"
              f"{_median(rs, 'wall_time', 0):>8}  {fails}")


def _median(rs: list[dict[str, Any]], key: str, digits: int = 0) -> str:
    values = [r[key] for r in rs if isinstance(r.get(key), int | float)]
    return f"{statistics.median(values):,.{digits}f}" if values else "-"


def _line(r: dict[str, Any]) -> str:
    verdict = "solved" if r.get("ok") else f"FAILED [{r.get('class')}] {r.get('why')}"
    return (f"{r['task']} · {r['mode']} · run {r['run']}: {verdict}; {r.get('steps')} steps, "
            f"{r.get('prompt_tokens')} prompt tokens, {r.get('wall_time')} s")


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _events(path: Path) -> list[dict[str, Any]]:
    try:
        return _read(path)
    except (OSError, ValueError):
        return []


if __name__ == "__main__":
    raise SystemExit(main())
