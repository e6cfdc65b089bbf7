"""`toolmode bench`: run a task suite over modes × runs and report; or rebuild a report from saved results."""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import Any

from toolmode.bench.episode import BenchConfig
from toolmode.bench.modespec import parse_modes
from toolmode.bench.results import read_settings, write_settings
from toolmode.bench.stats import SCRIPTED_NOTE
from toolmode.bench.task import Task, load_tasks
from toolmode.cli import add_model_args, comma_list

DEFAULT_MODES = "react,code,hybrid,code+search"
_SAVED = ("tasks", "only", "modes", "runs", "seed", "model", "base_url", "api_key_env", "preset", "max_steps",
          "max_result_chars", "sandbox", "stream", "scripted", "failing", "temperature", "max_tokens",
          "request_timeout")  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `toolmode bench`."""
    p = argparse.ArgumentParser(
        prog="toolmode bench",
        description="Compare modes over N runs per task: success, requests, tokens, cost, time.",
    )
    p.add_argument(
        "--tasks", help="a Python file defining TASKS = [...], or comma-separated built-in task names"
    )
    p.add_argument("--only", help="comma-separated task names to keep from --tasks")
    p.add_argument("--modes", default=None, help=f"comma-separated mode specs (default: {DEFAULT_MODES}); "
                   "react, code, hybrid, each with +search (react: +load or +proxy)")  # fmt: skip
    p.add_argument("--runs", type=int, default=None, help="runs per task and mode (default: 3)")
    p.add_argument("--jobs", type=int, default=4, help="episodes run concurrently (default: 4)")
    p.add_argument("--seed", type=int, default=None, help="base seed for fixtures (default: 0)")
    p.add_argument("--model")
    p.add_argument("--base-url", help="any OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    p.add_argument("--api-key-env", help="environment variable holding the API key")
    p.add_argument("--preset", help="deepseek (default), openai, openrouter, ollama, vllm, llamacpp")
    p.add_argument("--max-steps", type=int, default=None, help="model requests per episode (default: 12)")
    p.add_argument("--max-result-chars", type=int, default=None, help="tool result cap (default: 4000)")
    p.add_argument("--sandbox", choices=["auto", "landlock", "bwrap", "none"], default=None)
    add_model_args(p)
    p.add_argument("--stream", action="store_true", default=None)
    p.add_argument("--out", help="bench directory (default: runs/bench-<timestamp>); an existing one resumes")
    p.add_argument("--resume", metavar="DIR", help="continue an interrupted bench with its saved settings")
    p.add_argument("--retry-errors", action="store_true", help="on resume, rerun episodes that errored")
    p.add_argument("--report", metavar="DIR", help="only rebuild the report from DIR's results.jsonl")
    p.add_argument(
        "--scripted",
        action="store_true",
        default=None,
        help=f"play built-in tasks with scripted players on a local scripted server ({SCRIPTED_NOTE})",
    )
    p.add_argument(
        "--failing", action="store_true", default=None, help="with --scripted: players answer wrongly"
    )
    p.add_argument("--list", action="store_true", help="list the tasks and exit")
    p.add_argument(
        "--no-charts", action="store_true", help="skip the PNG charts (and their place in the HTML)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def resolve_tasks(spec: str | None, only: str | None) -> list[Task]:
    """Tasks from a file or built-in names, filtered by `only`."""
    from toolmode.bench.suite import builtin_suite, select

    if spec and (spec.endswith(".py") or Path(spec).is_file()):
        tasks = load_tasks(spec)
    else:
        tasks = select(builtin_suite(), comma_list(spec))
    return select(tasks, comma_list(only))


def _settings(args: argparse.Namespace, saved: dict[str, Any]) -> dict[str, Any]:
    defaults = {"modes": DEFAULT_MODES, "runs": 3, "seed": 0, "max_steps": 12, "max_result_chars": 4000,
                "sandbox": "auto", "stream": False, "scripted": False, "failing": False}  # fmt: skip
    out = {k: saved.get(k, defaults.get(k)) for k in _SAVED}
    for key in _SAVED:
        value = getattr(args, key)
        if value is not None:
            out[key] = value
    return out


def bench_main(argv: list[str]) -> int:
    """Entry point of `toolmode bench`; returns the exit status."""
    from rich.console import Console

    from toolmode.bench.report import build_report

    args = build_parser().parse_args(argv)
    console = Console()
    if args.report:
        report = build_report(Path(args.report), console=console, charts=not args.no_charts)
        _print_paths(console, report)
        return 0
    where = Path(args.resume or args.out or f"runs/bench-{datetime.now():%Y%m%d-%H%M%S}")
    settings = _settings(args, read_settings(where) if (args.resume or args.out) else {})
    try:
        tasks = resolve_tasks(settings["tasks"], settings["only"])
        specs = parse_modes(settings["modes"])
    except (ValueError, OSError) as exc:
        console.print(f"[red]error:[/] {exc}")
        return 2
    if args.list:
        for t in tasks:
            console.print(f"[bold]{t.name}[/] ({t.kind}): {t.prompt[:100]}")
        return 0
    config = BenchConfig(
        model=settings["model"], base_url=settings["base_url"], api_key_env=settings["api_key_env"],
        preset=settings["preset"], max_steps=settings["max_steps"], max_result_chars=settings["max_result_chars"],
        sandbox=settings["sandbox"], stream=bool(settings["stream"]), scripted=bool(settings["scripted"]),
        failing=bool(settings["failing"]), temperature=settings["temperature"], max_tokens=settings["max_tokens"],
        request_timeout=settings["request_timeout"],
    )  # fmt: skip
    if not config.scripted and (problem := _preflight(config)):
        console.print(f"[red]error:[/] {problem}")
        return 2
    if not config.scripted and (warning := _jobs_warning(config, args.jobs)):
        console.print(f"[yellow]warning:[/] {warning}", soft_wrap=True)
    where.mkdir(parents=True, exist_ok=True)
    settings["tasks_run"] = [t.name for t in tasks]
    settings.setdefault("started", datetime.now().isoformat(timespec="seconds"))
    write_settings(where, {**settings, "tasks": settings["tasks"], "task_order": settings["tasks_run"],
                           "mode_order": [s.label for s in specs]})  # fmt: skip
    if config.scripted:
        console.print(f"[bold red]SCRIPTED run: {SCRIPTED_NOTE}.[/]")
    console.print(
        f"bench directory: {where}  ({len(tasks)} tasks × {len(specs)} modes × {settings['runs']} runs)"
    )
    from toolmode.bench.runner import BenchAbandoned, run_bench

    resume = f"Finished episodes are saved in {where / 'results.jsonl'}; resume with: toolmode bench --resume {where}"
    try:
        run_bench(tasks, specs, int(settings["runs"]), where, config, jobs=args.jobs,
                  base_seed=int(settings["seed"]), retry_errors=args.retry_errors,
                  progress=not args.no_progress)  # fmt: skip
    except BenchAbandoned as exc:
        console.print(f"[yellow]abandoned {exc.running} running episode(s)[/]: not recorded, they run again "
                      f"on resume. {resume}", soft_wrap=True)  # fmt: skip
        return 130
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted.[/] {resume}", soft_wrap=True)
        return 130
    report = build_report(where, console=console, charts=not args.no_charts)
    _print_paths(console, report)
    return 0


def _preflight(config: BenchConfig) -> str | None:
    """Fail before the first episode when the model cannot be reached for a missing key."""
    from toolmode.models.client import ModelClient

    try:
        ModelClient(
            config.model, base_url=config.base_url, api_key_env=config.api_key_env, preset=config.preset
        ).close()
    except Exception as exc:  # noqa: BLE001 - MissingApiKey and bad presets alike end the bench here
        return str(exc)
    return None


def _jobs_warning(config: BenchConfig, jobs: int) -> str | None:
    """Warn when more episodes run at once than a local single-slot server can serve."""
    from toolmode.bench.slots import jobs_warning
    from toolmode.models.presets import preset_for

    try:
        preset = preset_for(config.preset, config.base_url)
    except ValueError:
        return None
    return jobs_warning(config.base_url or preset.base_url, preset.local, jobs)


def _print_paths(console: Any, report: Any) -> None:
    console.print(f"summary: {report.csv}\nreport:  {report.html}")
    if report.scripted:
        console.print("[bold red]SCRIPTED: these figures test the harness, not a model.[/]")
