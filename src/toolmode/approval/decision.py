"""What a decision on a call is, and the request a decider sees.

A policy says `allow`, `ask` or `deny` for a call. An `ask` is decided by a person (or code acting for one):
`Approved` (optionally with edited arguments) or `Denied` (with a reason). Every place a decision comes from
(an approver's return value, `agent.resume(decisions=...)`) accepts the same short forms, read by
`as_decision`: True, False, a reason (str: denied), `{"arguments": {...}}` (approved with those arguments).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Policy = Literal["allow", "ask", "deny"]
POLICIES: tuple[str, ...] = ("allow", "ask", "deny")


@dataclass(frozen=True)
class Approved:
    """Run the call; with `arguments`, run it with those instead of the model's."""

    arguments: dict[str, Any] | None = None


@dataclass(frozen=True)
class Denied:
    """Do not run the call; the model is told it was refused, with `reason`."""

    reason: str = ""


Decision = Approved | Denied


class _Pending:
    """The mark of a call left for a decision after the run (`CallPolicy.check` may return it)."""

    def __repr__(self) -> str:
        return "PENDING"


PENDING: Any = _Pending()


class ToolDenied(PermissionError):
    """A call was refused (by a person or a policy); inside a `run_code` program, the exception a refused
    tool call raises."""


@dataclass
class ApprovalRequest:
    """A call awaiting a policy or a decision: the tool, its arguments, the model's call id, the step,
    `where` it was made ("direct", or "run_code" for a call from the model's program) and the run's
    `RunContext` (`context.deps` are the run's dependencies)."""

    tool: str
    arguments: dict[str, Any]
    call_id: str
    step: int
    where: str = "direct"
    context: Any = field(default=None, repr=False)

    @property
    def deps(self) -> Any:
        """The run's dependencies (`agent.run(task, deps=...)`)."""
        return getattr(self.context, "deps", None)


def as_decision(value: Any, *, what: str = "a decision") -> Decision:
    """`value` as a Decision: Approved/Denied as they are, True (approved), False (denied), a str (denied
    with that reason), `{"arguments": {...}}` (approved with those arguments); ValueError for anything else."""
    if isinstance(value, Approved | Denied):
        return value
    if value is True:
        return Approved()
    if value is False:
        return Denied()
    if isinstance(value, str):
        return Denied(value)
    if isinstance(value, dict) and set(value) == {"arguments"}:
        arguments = value["arguments"]
        if not isinstance(arguments, dict):
            raise ValueError(f"{what}: 'arguments' must be a JSON object, not {type(arguments).__name__}")
        return Approved(arguments)
    raise ValueError(f"{what} must be True (approve), False or a reason (deny), {{'arguments': {{...}}}} "
                     f"(approve with edited arguments), toolmode.Approved or toolmode.Denied; got {value!r:.200}")


def check_policy(value: Any, what: str) -> Policy:
    """`value` if it is "allow", "ask" or "deny"; ValueError naming `what` otherwise."""
    if value not in POLICIES:
        raise ValueError(f"{what} must be 'allow', 'ask' or 'deny', not {value!r:.100}")
    return value  # type: ignore[no-any-return]
