"""Approving tool calls: a policy per call (`allow`, `ask`, `deny`) and, for an `ask`, a person's decision.

The policy comes from the agent's `approval=` (a mapping or a callable), then the tool's own
`@tool(approval=...)`, then the mapping's "*", then `allow` (see `rules`). An `ask` is decided by the run's
`approver=` callable, by the consumer of `stream()` / `astream()` (`ApprovalRequested.approve()` / `.deny()`),
or, in `run()` / `arun()` without an approver, after the run: it stops with `stopped="approval"`,
`result.pending` and `result.state()`, and `agent.resume(state, decisions=...)` continues it. The gate is a
CallPolicy on the call path (`gate`); in code mode a program's call waits on it too.
"""

from toolmode.approval.decision import ApprovalRequest, Approved, Denied, ToolDenied, as_decision
from toolmode.approval.rules import ApprovalRules
from toolmode.approval.state import PendingCall

__all__ = ["ApprovalRequest", "ApprovalRules", "Approved", "Denied", "PendingCall", "ToolDenied", "as_decision"]
