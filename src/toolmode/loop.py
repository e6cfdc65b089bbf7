"""The agent loop, shared by every mode and every driver (`run`, `stream`, `arun`, `astream`).

Each step: check the budget, send the conversation and the mode's tool schemas to the model; the run's
reply policies look at the reply (ask again, take it as the answer, or stop); a reply without tool calls
is the answer; otherwise every call runs through the mode and the results join the conversation. Until an
answer, the step limit, a budget or a cancellation. The state lives in a `Run` (`toolmode.run`); this
module only drives it and ends it properly whatever happens. Nothing here prints or writes on its own.
"""

from __future__ import annotations

from typing import Any

from toolmode import runctx
from toolmode.act_first import ActFirst
from toolmode.budget import Budget, CancelToken, Limits, RunStopped
from toolmode.calls import truncate
from toolmode.defaults import DEFAULT_MAX_RESULT_CHARS, DEFAULT_MAX_STEPS
from toolmode.history import check_history
from toolmode.models.base import Model
from toolmode.models.pricing import PriceTable
from toolmode.modes.base import Mode
from toolmode.output import OutputSpec
from toolmode.policies import CallPolicy, ReplyPolicy, default_policies
from toolmode.result import RunResult
from toolmode.run import Run
from toolmode.trace import Trace

__all__ = ["DEFAULT_MAX_RESULT_CHARS", "DEFAULT_MAX_STEPS", "drive", "run_agent", "truncate"]


def run_agent(
    task: str, mode: Mode, model: Model, *,
    max_steps: int = DEFAULT_MAX_STEPS, max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    trace: Trace | None = None, system_prompt: str | None = None, instructions: str | None = None,
    prices: PriceTable | None = None, history: list[dict[str, Any]] | None = None, budget: Budget | None = None,
    cancel: list[CancelToken] | None = None, output_type: Any = None, policies: list[ReplyPolicy] | None = None,
    call_policies: list[CallPolicy] | None = None, event_loop: Any = None, deps: Any = None,
    config: dict[str, Any] | None = None, act_first: str | ActFirst = "off", resume: Any = None,
) -> RunResult:
    """Run `task` to an answer (or a limit) and return the result with usage and cost.

    `system_prompt` replaces the mode's prompt, `instructions` are added to it. `history` (earlier
    `result.messages`) continues a conversation under this run's system prompt (the history's own system
    message, if any, is replaced). `policies` are added after the default reply policies. `act_first` (a
    setting of `toolmode.act_first`, or its policy) makes a run that offers tools start with a call. Model errors and
    unexpected failures end the run with `stopped="error"`; a spent budget with `"budget"`, a cancellation
    with `"cancelled"`; Ctrl-C with `"interrupted"` (then re-raised); calls left for a decision with
    `"approval"` (`resume`: the SavedRun such a run continues). Every run's events end with `run_end`.
    Bad arguments (history shape, output_type) raise ValueError before the run starts.
    """
    spec = OutputSpec(output_type) if output_type is not None else None
    run = Run(
        task, mode, model, trace=trace, limits=Limits(budget or Budget(), list(cancel or [])), prices=prices,
        max_steps=max_steps, max_result_chars=max_result_chars, system=system_text(mode, system_prompt, instructions),
        history=check_history(history or []), output=spec,
        policies=[*default_policies(spec, _act_first(act_first)), *(policies or [])],
        call_policies=call_policies or [], event_loop=event_loop, deps=deps, config=config, resume=resume,
    )
    return drive(run)


def _act_first(act_first: str | ActFirst) -> ActFirst | None:
    """The run's ActFirst policy (a fresh one per run for a setting); None for "off"."""
    if isinstance(act_first, ActFirst):
        return act_first
    return None if act_first == "off" else ActFirst(act_first)


def system_text(mode: Mode, system_prompt: str | None, instructions: str | None) -> str | None:
    """The system prompt sent: `system_prompt` or the mode's own, then `instructions`; None when empty."""
    base = mode.system_prompt() if system_prompt is None else system_prompt
    return "\n\n".join(p for p in (base, instructions) if p) or None


def drive(run: Run) -> RunResult:
    """Start `run` and step it to its end; every way out publishes `run_end`."""
    token = runctx.activate(run.context)
    try:
        run.start()
        while run.step < run.max_steps:
            result = run.step_once()
            if result is not None:
                return result
        return run.finish(None, "step_limit", f"stopped: step limit ({run.max_steps}) reached without an answer")
    except RunStopped as stop:  # run_end says why, and which limit
        return run.finish(None, stop.stopped, str(stop), stop.limit)
    except KeyboardInterrupt:
        run.finish(None, "interrupted", "interrupted by the user")
        raise
    except Exception as exc:  # noqa: BLE001 - a bug must still end the trace properly
        return run.fail(f"internal error: {type(exc).__name__}: {exc}", error_type=type(exc).__name__)
    finally:
        run.context.publish = _drop  # tool threads abandoned at a stop may still finish: their events go nowhere
        runctx.deactivate(token)


def _drop(event: object) -> None:
    """The event sink of a run that has ended."""
