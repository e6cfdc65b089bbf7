"""The tool calls of one reply: decoded, checked by the run's call policies, handled by the mode, recorded.

Calls of one reply run concurrently (each on a worker thread, in a copy of the run's context) and are
answered in the model's order. The loop stops waiting at the run's deadline, on cancellation or on
Ctrl-C; calls still running then are cancelled through their call scope (run_shell stops, a sandboxed
program is killed), abandoned, and answered with `call_stopped`, which keeps the conversation valid.
"""

from __future__ import annotations

import contextvars
import functools
import json
import math
import queue
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolmode import callscope, workers
from toolmode.approval.decision import PENDING
from toolmode.budget import RunStopped
from toolmode.events import ToolCallFinished, ToolCallStarted
from toolmode.models.reply import ToolCall
from toolmode.modes.base import FailedResult
from toolmode.result import CallRecord

if TYPE_CHECKING:
    from toolmode.prompts import PromptSet
    from toolmode.run import Run


def run_calls(run: Run, calls: list[ToolCall], deliver: Callable[[list[CallRecord]], None]) -> None:
    """Run `calls` concurrently and `deliver` their records in the model's order, also when the run stops
    while they run (a call not finished then is answered with the prompt set's `call_stopped`)."""
    results: list[CallRecord | None] = [None] * len(calls)
    scopes = [callscope.CallScope(c.name, math.inf, c.id) for c in calls]  # the id: events can name the call
    finished: queue.SimpleQueue[int] = queue.SimpleQueue()  # waited on in C: cheaper than an Event per reply

    def work(i: int) -> None:
        callscope.enter(scopes[i])  # a call abandoned below is cancelled through it
        try:
            results[i] = run_one(run, calls[i])
        finally:  # counted even if something above failed, so the loop never waits for a lost call
            finished.put(i)

    for i in range(len(calls)):
        context = contextvars.copy_context()  # one copy per call: a context is entered by one thread at a time
        workers.submit(functools.partial(context.run, work, i))
    try:
        left = len(calls)
        while left:
            try:
                finished.get(timeout=min(max(run.limits.remaining(), 0.0), 0.05))
                left -= 1
            except queue.Empty:
                run.limits.check_time()
    finally:
        for scope, r in zip(scopes, results, strict=True):
            if r is None:  # still running: the run stopped (deadline, cancel, Ctrl-C) before it did
                scope.cancel()
        stopped = run.prompts.text("call_stopped") if any(r is None for r in results) else ""
        deliver([r or CallRecord(c.id, c.name, c.arguments, stopped, True) for r, c in zip(results, calls, strict=True)])


def run_one(run: Run, call: ToolCall) -> CallRecord:
    """One call, from its `tool_call` event to its `tool_result` event."""
    run.publish(ToolCallStarted(step=run.step, id=call.id, name=call.name, arguments=call.arguments))
    started = time.monotonic()
    text, error = handle(run, call)
    if text is PENDING:  # left for a decision after the run: answered when the run is resumed
        return CallRecord(call.id, call.name, call.arguments, "", False, 0.0)
    record = CallRecord(call.id, call.name, call.arguments, truncate(text, run.max_result_chars, run.prompts),
                        error, time.monotonic() - started)
    run.publish(ToolCallFinished(step=run.step, id=record.id, name=record.name, arguments=record.arguments,
                                 result=record.result, error=record.error, seconds=record.seconds))
    return record


def handle(run: Run, call: ToolCall) -> tuple[str, bool]:
    """The text for the model and whether it reports a failure: bad arguments, a refusal by a call
    policy, the mode's result, or the tool's exception as `Error: <Type>: <message>`."""
    prompts = run.prompts
    try:
        arguments = call.decoded()  # bounded (toolmode.bounded), parsed once per call
    except json.JSONDecodeError as exc:
        return prompts.text("bad_arguments_json", name=call.name, error=exc.msg, position=exc.pos,
                            sent=call.arguments[:200]), True
    if not isinstance(arguments, dict):
        return prompts.text("arguments_not_object", name=call.name, type=type(arguments).__name__), True
    outcome = check_call(run, call, arguments)
    if outcome is PENDING or isinstance(outcome, str):
        return outcome, True
    if outcome is not None:
        arguments = outcome
    try:
        text = run.mode.handle_call(call.name, arguments)
    except RunStopped:
        return prompts.text("call_stopped"), True
    except (KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - every tool failure (even SystemExit) goes back to the model
        return prompts.text("tool_error", type=type(exc).__name__, message=str(exc)), True
    return text, isinstance(text, FailedResult)


def check_call(run: Run, call: ToolCall, arguments: dict[str, Any], where: str = "direct") -> Any:
    """Ask the run's call policies about a call, in order: None (run it as it is), a dict (run it with these
    arguments), a refusal text (the first one ends the check), or PENDING."""
    changed = None
    for policy in run.call_policies:
        outcome = policy.check(run, call, changed or arguments, where)
        if outcome is PENDING or isinstance(outcome, str):
            return outcome
        if isinstance(outcome, dict):
            changed = outcome
    return changed


def truncate(text: str, limit: int, prompts: PromptSet | None = None) -> str:
    """Cut `text` to `limit` characters with a visible marker saying how much was cut (0: no cut)."""
    if limit <= 0 or len(text) <= limit:
        return text
    cut, total = f"{len(text) - limit:,}", f"{len(text):,}"
    marker = prompts.text("truncated", cut=cut, total=total) if prompts is not None else \
        f"\n... [truncated: {cut} of {total} characters cut]"
    return text[:limit] + marker
