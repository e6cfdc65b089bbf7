"""The agent loop, shared by every mode and every driver (`run`, `stream`, `arun`, `astream`).

Each step: check the budget, send the conversation and the mode's tool schemas to the model; if the
reply has no tool calls, it is the answer (validated when an `output_type` is set); otherwise run every
call through the mode (in parallel, answered in order), append the results, and go on, until an answer,
the step limit, a budget or a cancellation. Everything that happens is published as a typed event
(`toolmode.events`) on the run's trace; nothing here prints or writes on its own.
"""

from __future__ import annotations

import contextvars
import functools
import json
import math
import threading
import time
from datetime import UTC, datetime
from typing import Any

from toolmode import runctx, workers
from toolmode.budget import Budget, CancelToken, Limits, RunStopped
from toolmode.defaults import DEFAULT_MAX_RESULT_CHARS, DEFAULT_MAX_STEPS  # noqa: F401 - re-exported
from toolmode.events import (
    ErrorEvent,
    Notice,
    RunEnd,
    RunStart,
    StepUsage,
    ToolCallFinished,
    ToolCallStarted,
    ToolsSent,
)
from toolmode.guard import RunGuard
from toolmode.history import check_history
from toolmode.models.base import Model
from toolmode.models.client import ModelError
from toolmode.models.pricing import PriceTable
from toolmode.models.reply import ToolCall
from toolmode.modes.base import FailedResult, Mode
from toolmode.output import RETRIES, OutputSpec
from toolmode.result import CallRecord, RunResult, StepRecord
from toolmode.tools import callscope
from toolmode.trace import Trace
from toolmode.usage import Usage

STOPPED_CALL = "Error: the run stopped before this call finished"


def run_agent(
    task: str,
    mode: Mode,
    model: Model,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    trace: Trace | None = None,
    system_prompt: str | None = None,
    instructions: str | None = None,
    prices: PriceTable | None = None,
    history: list[dict[str, Any]] | None = None,
    budget: Budget | None = None,
    cancel: list[CancelToken] | None = None,
    output_type: Any = None,
    event_loop: Any = None,
) -> RunResult:
    """Run `task` to an answer (or a limit) and return the result with usage and cost.

    `system_prompt` replaces the mode's prompt, `instructions` are added to it. `history` (earlier
    `result.messages`) continues a conversation: its system message is kept as is, so the prompt cache
    stays warm. Model errors and unexpected failures end the run with `stopped="error"`; a spent budget
    with `"budget"`, a cancellation with `"cancelled"`; Ctrl-C with `"interrupted"` (then re-raised).
    Every run's events end with `run_end`. Bad arguments (history shape, output_type) raise ValueError
    before the run starts.
    """
    trace = trace or Trace()
    prices = prices or PriceTable()
    spec = OutputSpec(output_type) if output_type is not None else None
    messages = check_history(history) if history else []
    if not messages or messages[0]["role"] != "system":
        base = mode.system_prompt() if system_prompt is None else system_prompt
        system = "\n\n".join(p for p in (base, instructions) if p)
        messages[:0] = [{"role": "system", "content": system}] if system else []
    carried = len(messages)
    messages.append({"role": "user", "content": f"{task}\n\n{spec.instructions()}" if spec else task})
    limits = Limits(budget or Budget(), list(cancel or []))
    ctx = runctx.RunContext(trace.publish, limits, event_loop)
    token = runctx.activate(ctx)
    records: list[StepRecord] = []
    total = Usage()
    output: Any = None

    def spent() -> float | None:
        costs = [r.cost for r in records]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)

    def finish(answer: str | None, stopped: str, error: str | None = None, limit: str | None = None) -> RunResult:
        cost = spent()
        if not records and prices.lookup(model.model) is None:
            cost = None  # no request made, and an unknown price stays unknown
        result = RunResult(
            answer=answer, stopped=stopped, error=error, usage=total, cost=cost,  # type: ignore[arg-type]
            wall_time=time.monotonic() - limits.started, model_time=sum(r.seconds for r in records),
            records=records, messages=messages, output=output, limit=limit, trace_path=trace.path,
        )
        trace.publish(RunEnd(answer, stopped, error, total.to_dict(), cost, result.wall_time, result.model_time,
                             len(records), str(trace.path) if trace.path else None, limit, result))
        return result

    guard = RunGuard(trace, task)
    try:
        trace.publish(RunStart(task, mode.name, model.model, getattr(model, "base_url", None),
                               [s["function"]["name"] for s in mode.tool_schemas()], mode.notes(),
                               str(trace.path) if trace.path else None, carried))
        if limits.budget.max_cost is not None and prices.lookup(model.model) is None:
            trace.publish(Notice(f"the price of {model.model} is unknown: max_cost holds only if the server "
                                 "reports each request's cost"))
        sent_tools: list[str] | None = None
        corrections = 0
        for step in range(1, max_steps + 1):
            limits.check(total, spent())
            ctx.step = step
            tools = mode.tool_schemas()
            names = [t["function"]["name"] for t in tools]
            if names != sent_tools:
                trace.publish(ToolsSent(step, names, tools))
                sent_tools = names
            sent = list(messages)  # the loop appends to `messages` at a stop while an abandoned request may still read
            asked = time.monotonic()
            try:
                reply = _ask(model, sent, tools, limits)
            except ModelError as exc:
                limits.check_time()  # a request cut by the run's deadline is the budget, not an error
                trace.publish(ErrorEvent(str(exc), step, time.monotonic() - asked, type(exc).__name__))
                return finish(None, "error", str(exc))
            cost = reply.reported_cost
            if cost is None:
                cost = prices.cost(reply.model or model.model, reply.usage, datetime.now(UTC))
            total.add(reply.usage)
            record = StepRecord(step, reply.usage, cost, reply.model_seconds, reply.content,
                                recovered=reply.recovered, finish_reason=reply.finish_reason)
            records.append(record)
            messages.append(reply.message())
            trace.publish(StepUsage(
                step, reply.usage.to_dict(), cost, reply.model_seconds, reply.content,
                [{"id": c.id, "name": c.name, "arguments": c.arguments, "recovered": c.recovered}
                 for c in reply.tool_calls],
                reply.reasoning, reply.finish_reason, reply.recovered, reply.attempts, reply.model,
                asked - trace.started, messages=sent,
            ))
            if (correction := guard.correction(reply, step, tools)) is not None:
                messages.append(correction)  # an unreadable call is not the answer: ask again
                continue
            if not reply.tool_calls:
                if reply.finish_reason in ("length", "content_filter"):
                    trace.publish(Notice(f"the answer was cut by the server (finish_reason={reply.finish_reason})",
                                         step))
                answer = reply.content or ""
                if spec is None:
                    return finish(answer, "answer")
                output, problems = spec.parse(answer)
                if problems is None:
                    return finish(answer, "answer")
                if corrections >= RETRIES:
                    return finish(answer, "error", f"the answer does not match {spec.name}: {problems}")
                corrections += 1
                trace.publish(Notice(f"the answer does not match {spec.name}; asking once more: {problems}", step))
                messages.append({"role": "user", "content": spec.correction(problems)})
                continue
            _run_calls(reply.tool_calls, mode, max_result_chars, ctx, messages, record, guard)
    except RunStopped as stop:  # run_end says why, and which limit
        return finish(None, stop.stopped, str(stop), stop.limit)
    except KeyboardInterrupt:
        finish(None, "interrupted", "interrupted by the user")
        raise
    except Exception as exc:  # noqa: BLE001 - a bug must still end the trace properly
        trace.publish(ErrorEvent(f"internal error: {type(exc).__name__}: {exc}", error_type=type(exc).__name__))
        return finish(None, "error", f"internal error: {type(exc).__name__}: {exc}")
    finally:
        ctx.publish = _drop  # tool threads abandoned at a stop may still finish: their events go nowhere
        runctx.deactivate(token)
    return finish(None, "step_limit", f"stopped: step limit ({max_steps}) reached without an answer")


def _drop(event: object) -> None:
    """The event sink of a run that has ended."""


def _ask(model: Model, sent: list[dict[str, Any]], tools: list[dict[str, Any]], limits: Limits) -> Any:
    """`model.chat(sent, tools)` on a worker thread, so a cancellation (or Ctrl-C) stops the run during
    a long request instead of after it; the abandoned request finishes in the background, unread. `sent` is
    the loop's own copy of the conversation."""
    box: list[Any] = []
    done = threading.Event()

    def work() -> None:
        try:
            box.append((True, model.chat(sent, tools)))
        except BaseException as exc:  # noqa: BLE001 - handed to the loop's thread below
            box.append((False, exc))
        finally:
            done.set()

    workers.submit(functools.partial(contextvars.copy_context().run, work))
    while not done.wait(0.05):
        if limits.cancelled:
            limits.check_time()
    ok, value = box[0]
    if not ok:
        raise value
    return value


def _run_calls(calls: list[ToolCall], mode: Mode, limit: int, ctx: runctx.RunContext,
               messages: list[dict[str, Any]], record: StepRecord, guard: RunGuard | None = None) -> None:
    """Run the calls of one reply concurrently; record them and append their results in the model's order.

    Each call runs on a worker thread (in a copy of the run's context), so the loop can stop waiting at
    the run's deadline, on cancellation or on Ctrl-C; calls still running then are abandoned and answered
    with STOPPED_CALL, which keeps `messages` a valid conversation to continue.
    """
    results: list[CallRecord | None] = [None] * len(calls)
    left = [len(calls)]
    lock = threading.Lock()
    all_done = threading.Event()

    scopes = [callscope.CallScope(c.name, math.inf, c.id) for c in calls]

    def work(i: int) -> None:
        call = calls[i]
        callscope.enter(scopes[i])  # a call abandoned below is cancelled through it (run_shell stops)
        try:
            ctx.publish(ToolCallStarted(ctx.step, call.id, call.name, call.arguments))
            done = results[i] = _run_call(call, mode, limit)
            ctx.publish(ToolCallFinished(ctx.step, done.id, done.name, done.arguments, done.result, done.error,
                                         done.seconds))
        finally:  # counted even if something above failed, so the loop never waits for a lost call
            with lock:
                left[0] -= 1
                if left[0] == 0:
                    all_done.set()

    for i in range(len(calls)):
        context = contextvars.copy_context()  # one copy per call: a context is entered by one thread at a time
        workers.submit(functools.partial(context.run, work, i))
    try:
        while not all_done.wait(min(max(ctx.limits.remaining(), 0.0), 0.05)):
            ctx.limits.check_time()
    finally:
        for scope, r in zip(scopes, results, strict=True):
            if r is None:  # still running: the run stopped (deadline, cancel, Ctrl-C) before it did
                scope.cancel()
        record.calls = [r or CallRecord(c.id, c.name, c.arguments, STOPPED_CALL, True)
                        for r, c in zip(results, calls, strict=True)]
        nudge = guard.review(ctx.step, record.calls) if guard is not None else []  # repeated calls get a note
        messages.extend({"role": "tool", "tool_call_id": r.id, "content": r.result} for r in record.calls)
        messages.extend(nudge)


def _run_call(call: ToolCall, mode: Mode, limit: int) -> CallRecord:
    started = time.monotonic()
    error = True
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError as exc:
        text = (
            f"Error: the arguments of {call.name} are not valid JSON ({exc.msg} at position {exc.pos}); "
            f"nothing was run. Send the arguments as one JSON object. You sent: {call.arguments[:200]}"
        )
    else:
        if not isinstance(arguments, dict):
            text = f"Error: the arguments of {call.name} must be a JSON object, got {type(arguments).__name__}"
        else:
            try:
                text = mode.handle_call(call.name, arguments)
                error = isinstance(text, FailedResult)
            except RunStopped:
                text = STOPPED_CALL
            except (KeyboardInterrupt, GeneratorExit):
                raise
            except BaseException as exc:  # noqa: BLE001 - every tool failure (even SystemExit) goes back to the model
                text = f"Error: {type(exc).__name__}: {exc}"
    return CallRecord(call.id, call.name, call.arguments, truncate(text, limit), error, time.monotonic() - started)


def truncate(text: str, limit: int) -> str:
    """Cut `text` to `limit` characters with a visible marker saying how much was cut."""
    if limit <= 0 or len(text) <= limit:
        return text
    cut = len(text) - limit
    return f"{text[:limit]}\n... [truncated: {cut:,} of {len(text):,} characters cut]"
