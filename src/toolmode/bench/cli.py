"""`toolmode bench`: run a task suite over modes × runs and report; or rebuild a report from saved results."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from toolmode import hostfiles
from toolmode.bench.checks import (
    MIX_FLAG,
    BenchUsageError,
    bench_dir_state,
    check_conflicts,
    check_scripted_players,
    check_settings,
    saved_settings,
)
from toolmode.bench.episode import BenchConfig
from toolmode.bench.modespec import ModeSpec, parse_modes
from toolmode.bench.results import RESULTS, BenchDirError, read_results, write_settings
from toolmode.bench.source import TaskSource
from toolmode.bench.stats import SCRIPTED_NOTE
from toolmode.bench.task import Task
from toolmode.bench.trust import check_resume, signed
from toolmode.cliargs import add_model_args
from toolmode.defaults import BENCH_MAX_STEPS, DEFAULT_MAX_RESULT_CHARS
from toolmode.textsafe import escape_control

DEFAULT_MODES = "react,code,hybrid,code+search"
_SAVED = ("tasks", "only", "modes", "runs", "seed", "model", "base_url", "api_key_env", "preset", "max_steps",
          "max_result_chars", "sandbox", "stream", "scripted", "failing", "suite", "suite_path", "temperature",
          "max_tokens", "request_timeout", "act_first")  # fmt: skip
EXECUTORS = ("local", "ray")


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad option is one line (no usage block) and exit status 2."""

    def error(self, message: str) -> Any:
        """Print `toolmode bench: error: ...` on one line and exit with 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `toolmode bench`."""
    p = _Parser(
        prog="toolmode bench",
        description="Compare modes over N runs per task: success, requests, tokens, cost, time.",
    )
    p.add_argument(
        "--tasks", help="a Python file defining TASKS = [...], or comma-separated built-in task names"
    )
    p.add_argument("--only", help="comma-separated task names to keep from --tasks")
    p.add_argument("--suite", help="builtin (default) or m3tooleval (a peer's suite, loaded from --suite-path)")
    p.add_argument("--suite-path", metavar="PATH", help="the suite's folder, e.g. .../m3tooleval (holding tasks/)")
    p.add_argument("--executor", default="local", help="local (threads, default) or ray (episodes as Ray tasks)")
    p.add_argument("--ray-address", metavar="ADDR", help="with --executor ray: host:port of a running Ray "
                   "cluster (default: start a local one)")  # fmt: skip
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
    p.add_argument("--max-result-chars", type=int, default=None, help="tool result cap (default: 4000; 0: none)")
    p.add_argument("--sandbox", choices=["auto", "namespaces", "bwrap", "unshare", "landlock", "none"], default=None)
    add_model_args(p)
    p.add_argument("--stream", action="store_true", default=None)
    p.add_argument("--out", help="bench directory (default: runs/bench-<timestamp>); an existing bench continues")
    p.add_argument("--resume", metavar="DIR", help="continue an interrupted bench with its saved settings")
    p.add_argument(MIX_FLAG, action="store_true",
                   help="continue a bench with other --model/--base-url/--seed/... than it was run with")  # fmt: skip
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
    return TaskSource(tasks=spec, only=only).load()


def task_source(settings: dict[str, Any]) -> TaskSource:
    """The settings' task source, with absolute paths (a worker node may run in another directory)."""
    tasks, path = settings["tasks"], settings.get("suite_path")
    if tasks and (tasks.endswith(".py") or Path(tasks).is_file()):
        tasks = str(Path(tasks).resolve())
    return TaskSource(settings.get("suite") or "builtin", tasks, settings["only"],
                      str(Path(path).expanduser().resolve()) if path else None)  # fmt: skip


def _settings(args: argparse.Namespace | None, saved: dict[str, Any]) -> dict[str, Any]:
    defaults = {"modes": DEFAULT_MODES, "runs": 3, "seed": 0, "max_steps": BENCH_MAX_STEPS,
                "max_result_chars": DEFAULT_MAX_RESULT_CHARS, "sandbox": "auto", "stream": False, "scripted": False,
                "failing": False}  # fmt: skip
    out = {k: saved.get(k, defaults.get(k)) for k in _SAVED}
    for key in _SAVED:
        value = None if args is None else getattr(args, key)
        if value is not None:
            out[key] = value
    return out


def bench_main(argv: list[str]) -> int:
    """Entry point of `toolmode bench`; returns the exit status (2 for a bench that cannot start as asked)."""
    args = build_parser().parse_args(argv)
    try:
        return _bench(args)
    except (BenchUsageError, BenchDirError) as exc:
        print(f"toolmode bench: error: {escape_control(str(exc))}", file=sys.stderr, flush=True)
        return 2


@dataclass
class _Plan:
    """A bench checked and ready to run: where, what, how, and with which executor."""

    where: Path
    settings: dict[str, Any]
    saved: dict[str, Any]
    source: TaskSource
    tasks: list[Task]
    specs: list[ModeSpec]
    config: BenchConfig


def _bench(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console()
    if args.report:
        _print_paths(console, _report(Path(args.report), console, charts=not args.no_charts))
        return 0
    plan = _plan(args)
    if args.list:
        _list_tasks(console, plan.tasks)
        return 0
    _check_endpoint(args, plan.config, console)
    _start_dir(plan)
    code = _run(args, plan, console)
    if code == 0:
        _print_paths(console, _report(plan.where, console, charts=not args.no_charts))
    return code


def _plan(args: argparse.Namespace) -> _Plan:
    """The settings (saved ones and these options), the tasks and the modes, each checked."""
    where, saved = saved_settings(args.resume, args.out)
    settings = _settings(args, saved)
    if where is not None and saved:
        check_resume(where, saved, vars(args))  # bench.json is model-writable: trust only what is signed
        check_conflicts(where, _settings(None, saved), vars(args), mix=args.mix_settings)
    from_file = {k for k in _SAVED if getattr(args, k) is None and k in saved}
    check_settings(settings, args.jobs, from_file=from_file, saved_in=where)
    try:
        source = task_source(settings)
        tasks = source.load()
    except (ValueError, OSError) as exc:
        raise BenchUsageError(str(exc)) from None
    try:
        specs = parse_modes(settings["modes"])
    except ValueError as exc:
        raise BenchUsageError(f"--modes: {exc}") from None
    _check_executor(args)
    if settings["scripted"]:
        from toolmode.bench.players import PLAYERS

        check_scripted_players(tasks, PLAYERS)
    where = where or Path(f"runs/bench-{datetime.now():%Y%m%d-%H%M%S}")
    return _Plan(where, settings, saved, source, tasks, specs, _config(settings))


def _check_executor(args: argparse.Namespace) -> None:
    if args.executor not in EXECUTORS:
        raise BenchUsageError(f"unknown executor {args.executor!r}; known: {', '.join(EXECUTORS)}")
    if args.ray_address and args.executor != "ray":
        raise BenchUsageError("--ray-address needs --executor ray")


def _config(settings: dict[str, Any]) -> BenchConfig:
    keys = ("model", "base_url", "api_key_env", "preset", "max_steps", "max_result_chars", "sandbox", "temperature",
            "max_tokens", "request_timeout")
    return BenchConfig(**{k: settings[k] for k in keys}, act_first=settings.get("act_first"),
                       stream=bool(settings["stream"]),
                       scripted=bool(settings["scripted"]), failing=bool(settings["failing"]))


def _list_tasks(console: Any, tasks: list[Task]) -> None:
    from rich.markup import escape

    for t in tasks:
        console.print(f"[bold]{escape(t.name)}[/] ({escape(t.kind)}): {escape(t.prompt[:100])}", highlight=False)


def _check_endpoint(args: argparse.Namespace, config: BenchConfig, console: Any) -> None:
    """Before anything is written: the model can be reached (a key), Ray is there; warn of too many jobs."""
    if not config.scripted and (problem := _preflight(config)):
        raise BenchUsageError(problem)
    if args.executor == "ray" and (problem := _ray_preflight(args.ray_address)):
        raise BenchUsageError(problem)
    if not config.scripted and (warning := _jobs_warning(config, args.jobs)):
        from rich.markup import escape

        console.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)


def _start_dir(plan: _Plan) -> None:
    """Check the results file (a corrupt one stops the bench here) and write the settings."""
    read_results(plan.where)
    settings = plan.settings
    settings["tasks_run"] = [t.name for t in plan.tasks]
    settings.setdefault("started", plan.saved.get("started") or datetime.now().isoformat(timespec="seconds"))
    try:
        os.close(hostfiles.open_dir(plan.where))  # never through a planted link
        write_settings(plan.where, signed({**settings, "task_order": settings["tasks_run"],
                                           "mode_order": [s.label for s in plan.specs]}))  # fmt: skip
    except OSError as exc:
        raise BenchUsageError(f"cannot write the bench directory {plan.where}: {exc.strerror or exc}") from None


def _run(args: argparse.Namespace, plan: _Plan, console: Any) -> int:
    """Run the episodes; 0 when they all came back, else the exit status (the reason printed)."""
    from rich.markup import escape

    from toolmode.bench.earlystop import BenchStopped
    from toolmode.bench.runner import BenchAbandoned, run_bench

    where = plan.where
    if plan.config.scripted:
        console.print(f"[bold red]SCRIPTED run: {SCRIPTED_NOTE}.[/]")
    console.print(f"bench directory: {escape(str(where))}  ({len(plan.tasks)} tasks × {len(plan.specs)} modes × "
                  f"{plan.settings['runs']} runs)")
    resume = escape(f"Finished episodes are saved in {where / RESULTS}; resume with: toolmode bench --resume {where}")
    executor = _executor(args, plan)
    try:
        run_bench(plan.tasks, plan.specs, int(plan.settings["runs"]), where, plan.config, jobs=args.jobs,
                  base_seed=int(plan.settings["seed"]), retry_errors=args.retry_errors,
                  progress=not args.no_progress, executor=executor)  # fmt: skip
        return 0 if executor is None else _executor_done(console, executor, resume)
    except BenchStopped as exc:
        print(f"toolmode bench: stopped early: {escape_control(exc.reason)}. Fix the endpoint, key or model and "
              f"resume with: toolmode bench --resume {where} (episodes that failed this way run again)",
              file=sys.stderr, flush=True)
        return 1
    except BenchAbandoned as exc:
        console.print(f"[yellow]abandoned {exc.running} running episode(s)[/]: not recorded, they run again "
                      f"on resume. {resume}", soft_wrap=True)  # fmt: skip
        return 130
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted.[/] {resume}", soft_wrap=True)
        return 130
    finally:
        if executor is not None:
            executor.close()


def _executor(args: argparse.Namespace, plan: _Plan) -> Any:
    """None for the local executor; a RayExecutor (its errors are usage errors) for --executor ray."""
    if args.executor != "ray":
        return None
    from toolmode.bench.ray_executor import ExecutorError, RayExecutor

    try:
        return RayExecutor(plan.where, plan.config, plan.source, args.ray_address)
    except ExecutorError as exc:
        raise BenchUsageError(str(exc)) from None


def _executor_done(console: Any, executor: Any, resume: str) -> int:
    """Print a Ray executor's summary; 1 when episodes never came back."""
    from rich.markup import escape

    console.print(executor.summary(), highlight=False)
    if not executor.lost:
        return 0
    console.print(f"[yellow]{executor.lost} episode(s) never came back[/] "
                  f"({escape(escape_control(executor.errors[-1]))}); they are not recorded. {resume}",
                  soft_wrap=True, highlight=False)  # fmt: skip
    return 1


def _report(where: Path, console: Any, *, charts: bool) -> Any:
    """Build the report of `where`, or say in one line why there is none."""
    from toolmode.bench.report import build_report

    state = bench_dir_state(where)
    if state in ("missing", "file"):
        raise BenchUsageError(f"{where} is not a bench directory ({'no such folder' if state == 'missing' else 'a file'})")
    if not read_results(where):
        raise BenchUsageError(
            f"{where} has no results yet ({where / RESULTS} is missing or empty): nothing to report"
        )
    try:
        return build_report(where, console=console, charts=charts)
    except OSError as exc:
        raise BenchUsageError(f"cannot write the report into {where}: {exc.strerror or exc}") from None


def _ray_preflight(address: str | None) -> str | None:
    """Fail before the bench directory is made when Ray is missing or nothing answers at `address`."""
    from toolmode.bench.ray_executor import ExecutorError, check_address, require_ray

    try:
        require_ray()
        if address:
            check_address(address)
    except ExecutorError as exc:
        return str(exc)
    return None


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
    console.print(f"summary: {report.csv}\nreport:  {report.html}", markup=False)
    if report.scripted:
        console.print("[bold red]SCRIPTED: these figures test the harness, not a model.[/]")
