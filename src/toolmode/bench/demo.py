"""`toolmode demo`: the two classic tasks in react, code and hybrid mode, with scripted replies.

No API key and no network: a local scripted model server plays the model. The players behave the way
real model runs of these tasks behave (react reads file by file, code writes one program, and one code
run first treats fetch_url's dict as a string, reads the error and fixes it), so the step view and the
comparison table show the shape of a real comparison, but the replies are scripted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from toolmode import hostfiles
from toolmode.bench.checks import BenchUsageError, bench_dir_state
from toolmode.bench.episode import BenchConfig, run_episode
from toolmode.bench.modespec import parse_modes
from toolmode.bench.players import PLAYERS
from toolmode.bench.players.web import time_and_title_guessing
from toolmode.bench.report import build_report
from toolmode.bench.results import BenchDirError, ResultsFile, read_settings, write_settings
from toolmode.bench.stats import SCRIPTED_NOTE
from toolmode.bench.suite import builtin_suite, select

DEMO_TASKS = ["log_stats", "time_and_title"]
DEMO_MODES = "react,code,hybrid"
REAL_MODEL_HINT = (
    "To run the same comparison with a real model:\n"
    "  export DEEPSEEK_API_KEY=sk-...\n"
    "  toolmode bench --tasks log_stats,time_and_title --modes react,code,hybrid --runs 5\n"
    "or against a local OpenAI-compatible server:\n"
    "  toolmode bench --tasks log_stats,time_and_title --base-url http://127.0.0.1:8080/v1 --model qwen"
)


def demo_main(argv: list[str]) -> int:
    """Entry point of `toolmode demo`; returns the exit status. Without `--out`, the results go to a
    temporary folder that is removed at the end (kept when the demo fails, to inspect its traces)."""
    from toolmode.cliargs import OneLineParser

    parser = OneLineParser(prog="toolmode demo", description="Scripted demo: no API key, no network.")
    parser.add_argument(
        "--out", help="keep the results, traces and report here (default: a temporary directory)"
    )
    parser.add_argument("--quiet", action="store_true", help="no step view, only the comparison table")
    parser.add_argument("--charts", action="store_true", help="also write PNG charts into the report")
    parser.add_argument("--sandbox", choices=["auto", "namespaces", "bwrap", "unshare", "landlock", "none"], default="auto")
    args = parser.parse_args(argv)
    if args.out:
        refused = _out_refused(Path(args.out))
        if refused:
            print(f"toolmode demo: error: {refused}", file=sys.stderr)
            return 2
        return _run_demo(args, Path(args.out), temporary=False)
    out = Path(tempfile.mkdtemp(prefix="toolmode-demo-"))
    failed = False
    try:
        status = _run_demo(args, out, temporary=True)
        failed = status != 0
    finally:
        if not failed:  # a failed demo keeps its folder: the traces say what went wrong
            shutil.rmtree(out, ignore_errors=True)
    return status


def _is_demo(settings: dict[str, Any]) -> bool:
    """Whether saved bench settings are a demo's (marked, or the demo's tasks and modes, scripted, one run)."""
    return settings.get("demo") is True or (
        settings.get("tasks") == ",".join(DEMO_TASKS) and settings.get("modes") == DEMO_MODES
        and settings.get("runs") == 1 and settings.get("scripted") is True
    )


def _out_refused(out: Path) -> str | None:
    """Why `--out` cannot take the demo (None when it can): the demo rewrites a folder's results, so it
    takes only a new or empty folder or an earlier demo's, never one holding other files or a bench."""
    try:
        state = bench_dir_state(out)
        if state in ("missing", "empty") or (state == "bench" and _is_demo(read_settings(out))):
            return None
    except (BenchUsageError, BenchDirError) as exc:
        return str(exc)
    what = {"file": "is a file", "foreign": "already holds other files",
            "bench": "holds a bench run (its results would be replaced)"}[state]  # fmt: skip
    return f"--out {out} {what}; give a new or empty folder"


def _run_demo(args: argparse.Namespace, out: Path, *, temporary: bool) -> int:
    """Run the demo's episodes into `out` and print the comparison; returns the exit status."""
    from rich.console import Console
    from rich.markup import escape
    from rich.panel import Panel

    console = Console()
    console.print(
        Panel(
            f"[bold]This demo uses a scripted model server[/]: the replies are scripted, not written by a model "
            f"({SCRIPTED_NOTE}).\nIt runs two tasks — log statistics over 5 files, and the time in a city plus "
            "the title of a local web page — in react, code and hybrid mode, through the real agent loop, "
            "tools and sandbox.",
            title="toolmode demo",
            border_style="red",
        )
    )
    os.close(hostfiles.open_dir(out))
    tasks = select(builtin_suite(), DEMO_TASKS)
    specs = parse_modes(DEMO_MODES)
    players = {**PLAYERS, "time_and_title": time_and_title_guessing}
    config = BenchConfig(scripted=True, players=players, console=not args.quiet, sandbox=args.sandbox)
    write_settings(out, {"demo": True, "tasks": ",".join(DEMO_TASKS), "modes": DEMO_MODES, "runs": 1, "scripted": True,
                         "task_order": DEMO_TASKS, "mode_order": [s.label for s in specs]})  # fmt: skip
    results = ResultsFile(out)
    results.path.unlink(missing_ok=True)
    failed: list[str] = []
    for task in tasks:
        for spec in specs:
            if not args.quiet:
                console.rule(f"[bold]{task.name}[/] · {spec.label} mode (scripted)")
            record = run_episode(task, spec, 1, 1, out, config)
            results.append(record)
            problem = _problem(record)
            verdict = "[green]correct[/]" if problem is None else f"[red]{escape(problem)}[/]"
            if problem is not None:
                failed.append(f"{task.name} · {spec.label}: {problem}")
            console.print(f"checker: {verdict}; {record.get('steps') or 0} requests, "
                          f"{record.get('prompt_tokens') or 0:,} prompt tokens")  # fmt: skip
    report = build_report(out, console=console, charts=args.charts)
    if temporary and not failed:
        console.print(f"\n(results and report were written to {out}, removed now; "
                      "`toolmode demo --out DIR` keeps them)")
    else:
        console.print(f"\nresults: {out / 'results.jsonl'}\nreport:  {report.html}")
    console.print(Panel(f"[bold red]The replies above were scripted[/] ({SCRIPTED_NOTE}).\n{REAL_MODEL_HINT}",
                        border_style="red"))  # fmt: skip
    if failed:
        lines = "\n".join(f"  {escape(line)}" for line in failed)
        console.print(
            Panel(
                f"[bold red]The demo FAILED: {len(failed)} of {len(tasks) * len(specs)} episodes went wrong.[/]\n"
                f"{lines}\nThe scripted replies always solve these tasks, so this is a problem with this "
                f"toolmode installation or machine (sandbox, network on 127.0.0.1), not with a model. "
                f"Each episode's trace is under {out / 'episodes'}.",
                title="demo failed",
                border_style="red",
            )
        )
        return 1
    return 0


def _problem(record: dict[str, Any]) -> str | None:
    """What went wrong in a demo episode (a harness or run error, or a wrong answer), or None."""
    if record.get("error"):
        where = (
            "harness error" if record.get("reason") == "harness error" else f"error ({record.get('stopped')})"
        )
        return f"{where}: {record['error']}"
    if not record.get("ok"):
        return f"wrong answer: {record.get('reason')}"
    return None
