"""One episode: a fresh workspace, the task's fixtures, an Agent in one mode, the checker's verdict."""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolmode import hostfiles
from toolmode.bench.fixtures import FixtureServer
from toolmode.bench.modespec import ModeSpec
from toolmode.bench.task import Task, TaskEnv
from toolmode.defaults import BENCH_MAX_STEPS, DEFAULT_MAX_RESULT_CHARS
from toolmode.settings import LimitSettings, ModelSettings, settings_from_options

SCRIPTED_MODEL = "deepseek-v4-flash"  # scripted runs are priced as this model, so cost figures exist
MAX_ANSWER_CHARS = 2000


@dataclass
class BenchConfig:
    """How episodes talk to a model. With `scripted`, each episode gets its own scripted server and player."""

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    preset: str | None = None
    max_steps: int = BENCH_MAX_STEPS
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    sandbox: str = "auto"
    stream: bool = False
    scripted: bool = False
    failing: bool = False
    players: dict[str, Any] = field(default_factory=dict)
    console: bool = False
    temperature: float | None = None
    max_tokens: int | None = None
    request_timeout: float | None = None
    act_first: str | None = None  # None: the preset's

    def settings(self, task: Task) -> tuple[ModelSettings, LimitSettings]:
        """The model and limit settings of an episode of `task`, built as the command line builds them."""
        options = {k: getattr(self, k) for k in ("model", "base_url", "api_key_env", "preset", "stream",
                                                  "temperature", "max_tokens", "request_timeout", "max_result_chars",
                                                  "act_first")}
        return settings_from_options({**options, "max_steps": task.max_steps or self.max_steps})


def unattended(request: Any) -> str:
    """The approver of bench episodes: nobody is there, so a call whose policy is `ask` is refused (the episode
    goes on and its trace shows the refusal) rather than waiting or stopping the run for approval."""
    return "toolmode bench runs unattended: no one approves tool calls"


def episode_dir(bench_dir: Path, task: str, mode: str, run: int) -> Path:
    """`<bench>/episodes/<task>/<mode>/run-<k>`: the episode's workspace and trace live here."""
    safe_mode = mode.replace("+", "_")
    return Path(bench_dir) / "episodes" / task / safe_mode / f"run-{run}"


def run_episode(
    task: Task,
    spec: ModeSpec,
    run: int,
    seed: int,
    bench_dir: Path,
    config: BenchConfig,
    *,
    register: Callable[[Callable[[], None]], None] | None = None,
) -> dict[str, Any]:
    """Run one episode and return its results record (harness failures become a failed record).

    `register`, if given, receives the agent's `close` once the agent exists (so an abandoned bench can
    stop its sandbox and MCP servers from another thread).
    """
    started = time.monotonic()
    record: dict[str, Any] = {
        "task": task.name,
        "kind": task.kind,
        "mode": spec.label,
        "run": run,
        "seed": seed,
        "scripted": config.scripted,
        "player": ("fail" if config.failing else "solve") if config.scripted else None,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    where = episode_dir(bench_dir, task.name, spec.label, run)
    hostfiles.remove_tree(where)  # a half-finished episode from an interrupted bench
    workspace = where / "workspace"
    os.close(hostfiles.open_dir(workspace))
    try:
        with ExitStack() as stack:
            facts = task.build(workspace, seed)
            base_url = None
            if task.pages is not None:
                base_url = stack.enter_context(FixtureServer(task.pages(seed))).base_url
            env = TaskEnv(workspace=workspace, seed=seed, facts=facts, base_url=base_url, mode=spec.mode)
            tools = task.tools(env)
            model, limits = config.settings(task)
            server = None
            if config.scripted:
                server = stack.enter_context(_scripted_server(task, config))
                model = replace(model, model=config.model or SCRIPTED_MODEL, base_url=server.base_url,
                                api_key="scripted", preset=None, api_key_env=None)
            from toolmode.agent import Agent
            from toolmode.settings import OutputSettings, SandboxSettings

            agent = stack.enter_context(Agent(
                tools, spec.mode_settings(task, tools), model=model, limits=limits,
                sandbox=SandboxSettings(workspace, config.sandbox),
                output=OutputSettings(console=config.console, runs_dir=where), approver=unattended,
            ))
            if register is not None:
                register(agent.close)
            record["model"] = agent.model.model
            result = agent.run(task.render_prompt(env))
            answer = result.answer or ""
            verdict = task.check(answer, workspace, facts)
            record.update(_result_fields(result, bench_dir))
            record.update(ok=bool(verdict.ok and result.stopped == "answer"), reason=verdict.reason)
            if result.stopped != "answer":
                record["reason"] = f"stopped: {result.stopped}"
            record["answer"] = answer[:MAX_ANSWER_CHARS]
            if server is not None:
                record["server_time"] = round(server.server_seconds, 4)
    except Exception as exc:  # noqa: BLE001 - any failure is this episode's result, not the bench's end
        record.update(ok=False, reason="harness error", error=f"{type(exc).__name__}: {exc}")
        record["traceback"] = traceback.format_exc(limit=8)
    record["episode_time"] = round(time.monotonic() - started, 4)
    return record


def _scripted_server(task: Task, config: BenchConfig) -> Any:
    from toolmode.bench.players import PLAYERS, script_for
    from toolmode.testing import ScriptedModelServer

    player = config.players.get(task.name) or task.player or PLAYERS.get(task.name)
    if player is None:
        raise LookupError(f"no scripted player for task {task.name!r}")
    return ScriptedModelServer(script_for(player, failing=config.failing), cache_block=64)


def _result_fields(result: Any, bench_dir: Path) -> dict[str, Any]:
    usage = result.usage
    trace = None
    if result.trace_path is not None:
        try:
            trace = str(Path(result.trace_path).relative_to(bench_dir))
        except ValueError:
            trace = str(result.trace_path)
    return {
        "stopped": result.stopped,
        "error": result.error,
        "steps": result.steps,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cached_tokens": usage.cached_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "cost": result.cost,
        "wall_time": round(result.wall_time, 4),
        "model_time": round(result.model_time, 4),
        "tool_calls": sum(len(r.calls) for r in result.records),
        "step_prompt_tokens": [r.usage.prompt_tokens for r in result.records],
        "step_cached_tokens": [r.usage.cached_tokens for r in result.records],
        "trace": trace,
    }
