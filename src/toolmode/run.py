"""`Run`: one run in progress, its state and its few steps.

A run owns its conversation (`messages`), its step records, its usage, its limits, where its events go,
its reply and call policies, and the per-run state of its mode (`context.state`). The loop
(`toolmode.loop.drive`) calls `start()`, then `step_once()` until it returns a result. Everything that
happens is published as a typed event; every message added is published as it is sent (`MessageAdded`),
so the trace is the whole trajectory (docs/CONTRACTS.md, "The trajectory").
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from toolmode import runctx
from toolmode.approval.decision import PENDING
from toolmode.budget import Limits
from toolmode.calls import check_call, run_calls
from toolmode.events import (
    BaseEvent,
    Carried,
    ErrorEvent,
    MessageAdded,
    Notice,
    RunEnd,
    RunStart,
    StepUsage,
    ToolsSent,
)
from toolmode.models.base import ask_model, request_info
from toolmode.models.errors import ModelError
from toolmode.models.pricing import PriceTable
from toolmode.models.reply import Reply, ToolCall
from toolmode.modes.base import Mode
from toolmode.output import OutputSpec
from toolmode.policies import CallPolicy, ReplyPolicy, RequestPlan, Verdict
from toolmode.result import CallRecord, RunResult, StepRecord
from toolmode.trace import Trace
from toolmode.usage import Usage


class Run:
    """One run: `start()`, then `step_once()` until it returns the RunResult (the loop does this)."""

    def __init__(self, task: str, mode: Mode, model: Any, *, trace: Trace | None = None, limits: Limits,
                 prices: PriceTable | None = None, max_steps: int, max_result_chars: int, system: str | None,
                 history: Sequence[dict[str, Any]] = (), output: OutputSpec | None = None,
                 policies: Sequence[ReplyPolicy] = (), call_policies: Sequence[CallPolicy] = (),
                 event_loop: Any = None, deps: Any = None, config: dict[str, Any] | None = None,
                 resume: Any = None) -> None:
        self.task, self.mode, self.model, self.trace = task, mode, model, trace or Trace()
        self.prompts = mode.prompts
        self.limits, self.prices = limits, prices or PriceTable()
        self.max_steps, self.max_result_chars = max_steps, max_result_chars
        self.system, self.history, self.output_spec = system, list(history), output
        self.policies, self.call_policies = list(policies), list(call_policies)
        self.config = config or {}
        self.messages: list[dict[str, Any]] = []
        self.records: list[StepRecord] = []
        self.usage = Usage()
        self.output: Any = None
        self.step = 0
        self.tools: list[dict[str, Any]] = []
        self.request_fields: dict[str, Any] = {}  # the extra fields of the step's request (a policy's)
        self._sent_names: list[str] | None = None
        self._asked = 0.0  # when the step's request was sent (time.monotonic())
        self.pending: list[Any] = []  # calls of this step left for a decision after the run (ApprovalRequest)
        self.held: list[CallRecord] = []  # this step's call records while some are pending
        self.resume = resume  # a SavedRun this run continues (toolmode.approval.state), or None
        self.run_index = 0
        self.context = runctx.RunContext(self.trace.publish, limits, event_loop, deps=deps, run=self)

    # ------------------------------------------------------------------ events and messages

    def publish(self, event: BaseEvent) -> None:
        """Send an event to the run's trace (from any thread)."""
        self.context.publish(event)

    def notice(self, message: str, *, about: str | None = None, call_id: str | None = None) -> None:
        """Publish a Notice for this step."""
        self.publish(Notice(message, self.step or None, about=about, call_id=call_id))

    def add(self, message: dict[str, Any], source: str, about: str | None = None) -> None:
        """Append `message` to the conversation and publish it as sent."""
        self.messages.append(message)
        self.publish(MessageAdded(index=len(self.messages) - 1, message=message, source=source,
                                  step=self.step or None, about=about))

    # ------------------------------------------------------------------ the steps

    def start(self) -> None:
        """Publish `run_start` and lay out the conversation: the system prompt, the carried history, the task."""
        history = self.history
        carried = history[1:] if history and history[0]["role"] == "system" else history
        saved = self.resume
        self.run_index = self.trace.next_run()
        self.publish(RunStart(
            task=self.task, mode=self.mode.name, model=self.model.model, base_url=getattr(self.model, "base_url", None),
            tools_sent=[s["function"]["name"] for s in self.mode.tool_schemas()], notes=self.mode.notes(),
            trace_path=str(self.trace.path) if self.trace.path else None, history=len(carried),
            run=self.run_index, system=self.system, request=request_info(self.model), config=self.config,
            resumes=None if saved is None else {**saved.trace, "step": saved.step},
        ))
        if saved is not None:
            self._continue(saved)
            return
        if self.system:
            kept = history and history[0]["role"] == "system" and history[0]["content"] == self.system
            self.add(history[0] if kept else {"role": "system", "content": self.system}, "system")
        self._carry(carried)
        self._add_task()

    def _add_task(self) -> None:
        """The task message (with the answer format, when there is one); a note when max_cost cannot be priced."""
        task = f"{self.task}\n\n{self.output_spec.instructions(self.prompts)}" if self.output_spec else self.task
        self.add({"role": "user", "content": task}, "task")
        if self.limits.budget.max_cost is not None and self.prices.lookup(self.model.model) is None:
            self.notice(f"the price of {self.model.model} is unknown: max_cost holds only if the server reports "
                        "each request's cost (otherwise the run stops after its first request)", about="price_unknown")

    def _carry(self, carried: list[dict[str, Any]]) -> None:
        """Add the carried history: as a reference to an earlier run of this trace when it continues one."""
        ref = self.trace.find_messages(carried)
        if ref is not None:
            self.messages.extend(carried)
            self.publish(Carried(from_run=ref[0], start=ref[1], count=len(carried)))
            return
        for message in carried:
            self.add(message, "history")

    def _continue(self, saved: Any) -> None:
        """A resumed run: the saved conversation (a reference to the stopped run when this trace holds it),
        then the pending calls decided (run or refused) and every result of that step added."""
        same = saved.trace.get("path") is not None and str(self.trace.path) == saved.trace["path"]
        if same:
            self.messages.extend(saved.messages)
            self.publish(Carried(from_run=int(saved.trace.get("run", 0)), start=0, count=len(saved.messages)))
        else:
            for message in saved.messages:
                self.add(message, "resumed")
        self.step = self.context.step = saved.step
        records = saved.records()
        waiting = {p.call_id for p in saved.pending}
        calls = [ToolCall(r.id, r.name, r.arguments) for r in records if r.id in waiting]
        done: dict[str, CallRecord] = {}
        if calls:
            run_calls(self, calls, lambda made: done.update((r.id, r) for r in made))
        self.take_results([done.get(r.id, r) for r in records])

    def step_once(self) -> RunResult | None:
        """One request and what follows from its reply; the result when the run ends here."""
        self.limits.check(self.usage, self.spent())
        self.step += 1
        self.context.step = self.step
        try:
            reply = self.ask()
        except ModelError as exc:
            self.limits.check_time()  # a request cut by the run's deadline is the budget, not an error
            return self.fail(str(exc), seconds=time.monotonic() - self._asked, error_type=type(exc).__name__,
                             request_fields=self.request_fields or None)
        for policy in self.policies:
            policy.read_reply(self, reply)
        self.take(reply)
        verdict = self.review(reply)
        if verdict is not None:
            return self.apply(verdict, reply)
        if reply.tool_calls:
            self.run_calls(reply)
            return self.defer() if self.pending else None
        return self.answer(reply, None)

    def ask(self) -> Reply:
        """Send the conversation and the mode's tool schemas, as the policies plan the request (publishing the
        tools when they changed)."""
        plan = RequestPlan(self.mode.tool_schemas())
        for policy in self.policies:
            policy.plan_request(self, plan)
        self.tools, self.request_fields = plan.tools, plan.fields
        names = [t["function"]["name"] for t in self.tools]
        if names != self._sent_names:
            self.publish(ToolsSent(step=self.step, names=names, schemas=self.tools))
            self._sent_names = names
        self._asked = time.monotonic()
        return ask_model(self.model, self.messages, self.tools, self.context, self.mode.code_tool,
                         self.request_fields)

    def take(self, reply: Reply) -> StepRecord:
        """Account for a reply (usage, cost, a step record), add it to the conversation and publish it."""
        for i, call in enumerate(reply.tool_calls):
            if call.recovered not in (None, "arguments"):  # read from the text: the server gave it no id
                call.id = f"recovered_{self.step}_{i}"  # the same in every replay of the run
        sent = len(self.messages)
        usage = reply.usage
        usage.requests = max(usage.requests, 1)  # a custom Model need not count its requests
        cost = reply.reported_cost
        if cost is None:
            cost = self.prices.cost(reply.model or self.model.model, usage, datetime.now(UTC))
        self.usage.add(usage)
        record = StepRecord(self.step, usage, cost, reply.model_seconds, reply.content,
                            recovered=reply.recovered, finish_reason=reply.finish_reason)
        self.records.append(record)
        self.publish(StepUsage(
            step=self.step, usage=usage.to_dict(), cost=cost, seconds=reply.model_seconds,
            content=reply.content if reply.wire_content is None else reply.wire_content,
            tool_calls=[c.to_event() for c in reply.tool_calls], reasoning=reply.reasoning,
            finish_reason=reply.finish_reason, recovered=reply.recovered, attempts=reply.attempts,
            model=reply.model, sent_messages=sent,
            wire_tool_calls=None if reply.wire_calls is None else [c.to_event() for c in reply.wire_calls],
            sent_at=self._asked - self.trace.started, messages=self.messages[:sent],
            request_fields=self.request_fields or None,
        ))
        self.add(reply.message(), "reply")
        return record

    def review(self, reply: Reply) -> Verdict | None:
        """The first verdict of the run's reply policies, or None."""
        for policy in self.policies:
            verdict = policy.review_reply(self, reply)
            if verdict is not None:
                return verdict
        return None

    def apply(self, verdict: Verdict, reply: Reply) -> RunResult | None:
        """Act on a policy's verdict: ask again (None), take the answer, or stop."""
        if verdict.action == "answer":
            return self.answer(reply, verdict.output)
        if verdict.action == "stop":
            return self.finish(reply.content or "", "error", verdict.error)
        if verdict.notice:
            self.notice(verdict.notice, about=verdict.about)
        self.add({"role": "user", "content": verdict.message}, "policy", verdict.about)
        return None

    def run_calls(self, reply: Reply) -> None:
        """Run the reply's calls (their results join the conversation even when the run stops meanwhile,
        so it stays valid to continue)."""
        run_calls(self, reply.tool_calls, self.take_results)

    def check_program_call(self, name: str, arguments: dict[str, Any], call_id: str) -> str | dict[str, Any] | None:
        """The call policies on a call made by a `run_code` program: None (run it), new arguments, or the
        refusal text (a policy cannot leave a program's call pending: the program would wait forever)."""
        if not self.call_policies:
            return None
        made = ToolCall(call_id, name, json.dumps(arguments, ensure_ascii=False, default=str))
        outcome = check_call(self, made, arguments, "run_code")
        if outcome is PENDING:
            return self.prompts.text("call_needs_approver", tool=name)
        return outcome  # type: ignore[no-any-return]

    def take_results(self, calls: list[CallRecord]) -> None:
        """Record a step's call results and add them, then whatever the policies add after them (held back,
        when some call waits for a decision after the run, until the run is resumed)."""
        if self.records and self.records[-1].step == self.step:
            self.records[-1].calls = calls
        if self.pending:
            self.held = calls
            return
        nudges = [text for policy in self.policies for text in policy.review_calls(self, calls)]
        for call in calls:
            self.add({"role": "tool", "tool_call_id": call.id, "content": call.result}, "tool")
        for text in nudges:
            self.add({"role": "user", "content": text}, "policy", "repeated_call")

    def answer(self, reply: Reply, output: Any) -> RunResult:
        """End with the reply as the answer (a reply the server cut is noted as such)."""
        if reply.finish_reason in ("length", "content_filter"):
            self.notice(f"the answer was cut by the server (finish_reason={reply.finish_reason})", about="cut_answer")
        self.output = output
        return self.finish(reply.content or "", "answer")

    def defer(self) -> RunResult:
        """Stop for approval: the step's pending calls and the saved state go with the result."""
        from toolmode.approval.state import saved_run

        saved = saved_run(self)
        result = self.finish(None, "approval", None, saved=saved)
        return result

    def fail(self, message: str, *, seconds: float | None = None, error_type: str | None = None,
             request_fields: dict[str, Any] | None = None) -> RunResult:
        """End with an error: a model error (`seconds`: how long the failed request took; `request_fields`: its
        extra fields) or an internal one."""
        self.publish(ErrorEvent(message, self.step or None, seconds, error_type, request_fields))
        return self.finish(None, "error", message)

    # ------------------------------------------------------------------ the end

    def spent(self) -> float | None:
        """USD spent so far; None when a request's cost is unknown."""
        costs = [r.cost for r in self.records]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)

    def finish(self, answer: str | None, stopped: str, error: str | None = None,
               limit: str | None = None, saved: Any = None) -> RunResult:
        """The RunResult, published with `run_end`."""
        if self.pending and saved is None:  # stopped otherwise meanwhile: answer the waiting calls, keep it valid
            stopped_text = self.prompts.text("call_stopped")
            waiting = {r.call_id for r in self.pending}
            held = [CallRecord(c.id, c.name, c.arguments, stopped_text, True) if c.id in waiting else c
                    for c in self.held]
            self.pending = []
            self.take_results(held)
        cost = self.spent()
        if not self.records and self.prices.lookup(self.model.model) is None:
            cost = None  # no request made, and an unknown price stays unknown
        result = RunResult(
            answer=answer, stopped=stopped, error=error, usage=self.usage, cost=cost,  # type: ignore[arg-type]
            wall_time=time.monotonic() - self.limits.started, model_time=sum(r.seconds for r in self.records),
            records=self.records, messages=self.messages, output=self.output, limit=limit,
            trace_path=self.trace.path, pending=list(saved.pending) if saved else [], saved=saved,
        )
        self.publish(RunEnd(
            answer=answer, stopped=stopped, error=error, usage=self.usage.to_dict(), cost=cost,
            wall_time=result.wall_time, model_time=result.model_time, steps=len(self.records),
            trace_path=str(self.trace.path) if self.trace.path else None, limit=limit,
            messages=len(self.messages), result=result,
        ))
        self.trace.remember_messages(self.messages)
        return result
