"""An agent's approval settings, checked once, and the gate each run gets from them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolmode.approval.deciders import CallApprover, Decider, Deferred, StreamDecider
from toolmode.approval.decision import Decision
from toolmode.approval.gate import ApprovalGate
from toolmode.approval.rules import ApprovalRules


@dataclass(frozen=True)
class ApprovalSettings:
    """`rules` (which calls need a decision), `approver` (who decides, when set), `timeout` (seconds to wait,
    then deny; None: wait) and `count_wait` (the clock runs while a decision is awaited)."""

    rules: ApprovalRules
    approver: Any = None
    timeout: float | None = None
    count_wait: bool = False

    @classmethod
    def build(cls, approval: Any, approver: Any, timeout: Any, count_wait: Any, tools: list[Any]) -> ApprovalSettings:
        """Check the Agent's approval keywords (ValueError, one line, for a bad one)."""
        rules = approval if isinstance(approval, ApprovalRules) else ApprovalRules(approval, tools)
        if isinstance(approval, ApprovalRules):
            rules.own = {t.name: t.approval for t in tools if getattr(t, "approval", None)} | rules.own
        if approver is not None and not callable(approver):
            raise ValueError(f"approver= must be a callable that takes the ApprovalRequest, not {type(approver).__name__}")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                    or not math.isfinite(timeout) or timeout <= 0):
            raise ValueError(f"approval_timeout must be a positive number of seconds, got {timeout!r}")
        if not isinstance(count_wait, bool):
            raise ValueError(f"count_approval_wait must be True or False, got {count_wait!r}")
        return cls(rules, approver, timeout, count_wait)

    def gate(self, approver: Any = None, *, streamed: bool = False,
             preset: Mapping[str, Decision] | None = None) -> ApprovalGate | None:
        """The gate of one run (None when no call can need a decision): the run's `approver`, else the agent's,
        else the stream's consumer (`streamed`), else nobody (the run stops for approval)."""
        if approver is not None and not callable(approver):
            raise ValueError(f"approver= must be a callable that takes the ApprovalRequest, not {type(approver).__name__}")
        if not self.rules.active and not preset:
            return None
        chosen = approver or self.approver
        decider: Decider
        if chosen is not None:
            decider = CallApprover(chosen, getattr(chosen, "waits_for", "approver"))
        else:
            decider = StreamDecider() if streamed else Deferred()
        return ApprovalGate(self.rules, decider, timeout=self.timeout, count_wait=self.count_wait, preset=preset)
