"""The approval gate: a CallPolicy that asks each call's policy (`ApprovalRules`) and, for an `ask`, waits for
a decision from the run's decider. It publishes `approval_request` and `approval` events, holds the run's clock
(and a program's, for a call from run_code) while a person decides, and turns a refusal into the text the model
reads. The loop knows nothing of it beyond the CallPolicy seam and the run's `pending` calls."""

from __future__ import annotations

import concurrent.futures
import contextlib
import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolmode import callscope
from toolmode.approval.deciders import Decider, Deferred
from toolmode.approval.decision import PENDING, ApprovalRequest, Approved, Decision, Denied
from toolmode.approval.rules import ApprovalRules
from toolmode.budget import RunStopped
from toolmode.events import ApprovalDecided, ApprovalRequested, Notice
from toolmode.models.reply import ToolCall
from toolmode.policies import CallPolicy

if TYPE_CHECKING:
    from toolmode.run import Run

WAIT_SLICE = 0.05  # seconds between checks of cancellation and deadlines while a decision is awaited


class ApprovalGate(CallPolicy):
    """Approval on the call path. `timeout`: seconds to wait for a decision, then deny (None: wait);
    `count_wait`: the run's deadline and a program's timeout keep running while a decision is awaited (by
    default they stand still); `preset`: decisions already made, by call id (a resumed run's)."""

    def __init__(self, rules: ApprovalRules, decider: Decider, *, timeout: float | None = None,
                 count_wait: bool = False, preset: Mapping[str, Decision] | None = None) -> None:
        self.rules, self.decider = rules, decider
        self.timeout, self.count_wait = timeout, count_wait
        self.preset = dict(preset or {})

    def check(self, run: Run, call: ToolCall, arguments: dict[str, Any], where: str = "direct") -> Any:
        """None (run it), a dict (run it with these arguments), a refusal text, or PENDING (a deferred run)."""
        request = ApprovalRequest(call.name, arguments, call.id, run.step, where, run.context)
        decision = self.decide(run, request)
        if decision is PENDING:
            return PENDING
        if isinstance(decision, Denied):
            return self.refusal(run, request, decision)
        return decision.arguments

    def refusal(self, run: Run, request: ApprovalRequest, decision: Denied) -> str:
        """The text the model reads for a refused call."""
        if decision.reason == _BY_POLICY:
            return run.prompts.text("call_refused_by_policy", tool=request.tool)
        if decision.reason == _NO_DECIDER:
            return run.prompts.text("call_needs_approver", tool=request.tool)
        if decision.reason == _STOPPED:
            return run.prompts.text("call_stopped")
        reason = f": {decision.reason}" if decision.reason else ""
        return run.prompts.text("call_refused", tool=request.tool, reason=reason)

    def decide(self, run: Run, request: ApprovalRequest) -> Any:
        """The decision on `request` (a preset one, the policy's, or a person's), or PENDING."""
        preset = self.preset.pop(request.call_id, None)
        if preset is not None:
            self._decided(run, request, preset, "resume", 0.0)
            return preset
        policy, why = self.rules.policy(request)
        if policy == "allow":
            return Approved()
        if policy == "deny":
            denied = Denied(why or _BY_POLICY)
            self._decided(run, request, denied, "rule", 0.0)
            return denied
        return self._ask(run, request)

    def _ask(self, run: Run, request: ApprovalRequest) -> Any:
        answer: concurrent.futures.Future[Decision] = concurrent.futures.Future()
        decider = self.decider
        streamed = decider.waits_for == "stream"
        deferred = isinstance(decider, Deferred)
        waits_for = "rule" if deferred and request.where != "direct" else decider.waits_for  # refused at once
        run.publish(ApprovalRequested(request.step, request.call_id, request.tool, request.arguments, request.where,
                                      waits_for, answer if streamed else None))
        if deferred:
            if request.where == "direct":
                run.pending.append(request)
                return PENDING
            run.notice(f"{request.tool} (called from run_code) needs approval and was refused: a run without an "
                       "approver cannot stop inside a program. Pass approver=, use stream(), or allow it with an "
                       "approval rule", about="approval_needs_approver", call_id=request.call_id)
            denied = Denied(_NO_DECIDER)
            self._decided(run, request, denied, "rule", 0.0)
            return denied
        started = time.monotonic()
        decider.start(request, answer)
        decision, by = self._wait(run, answer, decider.waits_for)
        self._decided(run, request, decision, by, time.monotonic() - started)
        return decision

    def _wait(self, run: Run, answer: concurrent.futures.Future[Decision], who: str) -> tuple[Decision, str]:
        """Wait for the answer (the clock held unless count_wait), until approval_timeout or the run stops."""
        end = math.inf if self.timeout is None else time.monotonic() + self.timeout
        with contextlib.ExitStack() as held:
            if not self.count_wait:
                held.enter_context(run.limits.hold())
                scope = callscope.current()
                if scope is not None:
                    held.enter_context(scope.hold())
            while True:
                try:
                    return _read(answer.result(timeout=max(0.0, min(WAIT_SLICE, end - time.monotonic())))), who
                except concurrent.futures.TimeoutError:
                    pass
                try:
                    run.limits.check_time()
                except RunStopped:
                    answer.cancel()
                    return Denied(_STOPPED), "stopped"
                if time.monotonic() >= end:
                    answer.cancel()
                    return Denied(f"no decision within {self.timeout:g} s"), "timeout"

    def _decided(self, run: Run, request: ApprovalRequest, decision: Decision, by: str, waited: float) -> None:
        approved = isinstance(decision, Approved)
        reason = None if approved else _shown_reason(decision.reason)  # type: ignore[union-attr]
        edited = decision.arguments if approved else None  # type: ignore[union-attr]
        run.publish(ApprovalDecided(request.step, request.call_id, request.tool, "approved" if approved else "denied",
                                    by, reason, edited, round(waited, 4)))
        if edited is not None:
            run.publish(Notice(f"{request.tool} runs with arguments edited by the {by}", request.step,
                               about="approval_edited", call_id=request.call_id))


def _read(answer: Any) -> Decision:
    """A decider's answer: a Decision, or the stream event's ("approve", arguments) / ("deny", reason)."""
    if isinstance(answer, tuple):
        verb, value = answer
        return Approved(value) if verb == "approve" else Denied(value)
    return answer  # type: ignore[no-any-return]


_BY_POLICY = "\0policy"  # markers of refusals whose text for the model comes from the prompt set
_NO_DECIDER = "\0no_decider"
_STOPPED = "\0stopped"


def _shown_reason(reason: str) -> str | None:
    return {_BY_POLICY: "the approval policy says deny", _NO_DECIDER: "no approver can decide inside a program",
            _STOPPED: "the run stopped while the decision was awaited"}.get(reason, reason or None)
