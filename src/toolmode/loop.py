"""The agent loop, shared by every mode.

Each step: send the conversation and the mode's tool schemas to the model; if the reply has no tool
calls, it is the answer; otherwise run every call through the mode (in parallel, answered in order),
append the results, and go on, until an answer or the step limit.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from toolmode.guard import RunGuard
from toolmode.models.client import ModelClient, ModelError
from toolmode.models.pricing import PriceTable
from toolmode.models.reply import ToolCall
from toolmode.modes.base import FailedResult, Mode
from toolmode.result import CallRecord, RunResult, StepRecord
from toolmode.trace import Trace
from toolmode.usage import Usage

DEFAULT_MAX_STEPS = 10
DEFAULT_MAX_RESULT_CHARS = 4000


def run_agent(
    task: str,
    mode: Mode,
    model: ModelClient,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    trace: Trace | None = None,
    system_prompt: str | None = None,
    prices: PriceTable | None = None,
) -> RunResult:
    """Run `task` to an answer (or the step limit) and return the result with usage and cost.

    Model errors and unexpected failures end the run with `stopped="error"`; Ctrl-C ends it with
    `stopped="interrupted"` in the trace and is then re-raised. Either way the trace ends with `run_end`.
    """
    trace = trace or Trace()
    prices = prices or PriceTable()
    mode.reset()
    started = time.monotonic()
    messages: list[dict[str, Any]] = []
    system = "\n\n".join(p for p in (system_prompt, mode.system_prompt()) if p)
    if system:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": task})
    records: list[StepRecord] = []
    total = Usage()

    def finish(answer: str | None, stopped: str, error: str | None = None) -> RunResult:
        costs = [r.cost for r in records]
        cost = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
        if not records and prices.lookup(model.model) is None:
            cost = None  # no request made, and an unknown price stays unknown
        result = RunResult(
            answer=answer, stopped=stopped, error=error, usage=total, cost=cost,  # type: ignore[arg-type]
            wall_time=time.monotonic() - started, model_time=sum(r.seconds for r in records),
            records=records, messages=messages,
        )
        trace.emit("run_end", answer=answer, stopped=stopped, error=error, usage=total.to_dict(), cost=cost,
                   wall_time=result.wall_time, model_time=result.model_time, steps=len(records),
                   trace_path=str(trace.path) if trace.path else None)
        return result

    sent_tools: list[str] | None = None
    guard = RunGuard(trace)
    try:
        for step in range(1, max_steps + 1):
            tools = mode.tool_schemas()
            names = [t["function"]["name"] for t in tools]
            if names != sent_tools:
                trace.emit("tools", step=step, names=names, schemas=tools)
                sent_tools = names
            try:
                reply = model.chat(messages, tools)
            except ModelError as exc:
                trace.emit("error", step=step, message=str(exc))
                return finish(None, "error", str(exc))
            cost = reply.reported_cost
            if cost is None:
                cost = prices.cost(model.model, reply.usage, datetime.now(UTC))
            total.add(reply.usage)
            record = StepRecord(step, reply.usage, cost, reply.model_seconds, reply.content,
                                recovered=reply.recovered, finish_reason=reply.finish_reason)
            records.append(record)
            messages.append(reply.message())
            trace.emit(
                "reply", step=step, usage=reply.usage.to_dict(), cost=cost, seconds=reply.model_seconds,
                attempts=reply.attempts, content=reply.content, reasoning=reply.reasoning,
                finish_reason=reply.finish_reason, recovered=reply.recovered,
                tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments, "recovered": c.recovered}
                            for c in reply.tool_calls],
            )
            if (correction := guard.correction(reply, step, tools)) is not None:
                messages.append(correction)  # an unreadable call is not the answer: ask again
                continue
            if not reply.tool_calls:
                if reply.finish_reason in ("length", "content_filter"):
                    trace.emit("notice", step=step, message=f"the answer was cut by the server "
                               f"(finish_reason={reply.finish_reason})")
                return finish(reply.content or "", "answer")

            def done(call: CallRecord, step: int = step) -> None:  # traced as each call finishes
                trace.emit("tool_result", step=step, id=call.id, name=call.name, arguments=call.arguments,
                           result=call.result, error=call.error, seconds=call.seconds)

            record.calls = _run_calls(reply.tool_calls, mode, max_result_chars, done)
            nudge = guard.review(step, record.calls)
            messages.extend({"role": "tool", "tool_call_id": c.id, "content": c.result} for c in record.calls)
            messages.extend(nudge)
    except KeyboardInterrupt:
        finish(None, "interrupted", "interrupted by the user")
        raise
    except Exception as exc:  # noqa: BLE001 - a bug must still end the trace properly
        trace.emit("error", message=f"internal error: {type(exc).__name__}: {exc}")
        return finish(None, "error", f"internal error: {type(exc).__name__}: {exc}")
    return finish(None, "step_limit", f"stopped: step limit ({max_steps}) reached without an answer")


def _run_calls(
    calls: list[ToolCall], mode: Mode, limit: int, done: Callable[[CallRecord], None]
) -> list[CallRecord]:
    """Run the calls of one reply; several run concurrently, results keep the model's order.

    Daemon threads rather than a pool: on Ctrl-C the run ends at once instead of waiting for slow tools.
    """
    def run(i: int) -> None:
        results[i] = _run_call(calls[i], mode, limit)
        done(results[i])

    results: list[CallRecord] = [None] * len(calls)  # type: ignore[list-item]
    if len(calls) == 1:
        run(0)
        return results
    threads = [threading.Thread(target=run, args=(i,), daemon=True, name=f"tool-{i}-{c.name}") for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


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
