"""Which calls need a decision: the approval policy of a call, from the agent's setting and the tool's own.

Sources, first match wins:
1. the agent's `approval=`: a tool named in the mapping, or what the callable returns (None: no opinion);
2. the tool's own `@tool(approval=...)` / `Tool(approval=...)`;
3. the mapping's `"*"` entry (the tools not otherwise set);
4. `allow` (every tool is sandboxed or the user's own: nothing changes for anyone who sets nothing).

`"*"` comes after the tool's own setting on purpose: a blanket `{"*": "allow"}` written to quiet harmless tools
must not silently unguard a tool its author marked `ask`; to override a tool's own policy, name the tool.
`escalate=True` (the CLI's `--approve ask`) turns every resulting `allow` into `ask`; `deny` stays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from toolmode.approval.decision import ApprovalRequest, Policy, check_policy

ApprovalSetting = Mapping[str, str] | Callable[[ApprovalRequest], str | None] | None


class ApprovalRules:
    """The policy of each call (see the module's docstring for the order)."""

    def __init__(self, setting: ApprovalSetting, tools: Iterable[Any] = (), *, escalate: bool = False) -> None:
        self.named: dict[str, Policy] = {}
        self.rest: Policy | None = None
        self.function: Callable[[ApprovalRequest], str | None] | None = None
        if callable(setting):
            self.function = setting
        elif isinstance(setting, Mapping):
            for name, value in setting.items():
                if not isinstance(name, str):
                    raise ValueError(f"approval= maps tool names to policies; {name!r:.100} is not a name")
                policy = check_policy(value, f"approval[{name!r}]")
                if name == "*":
                    self.rest = policy
                else:
                    self.named[name] = policy
        elif setting is not None:
            raise ValueError("approval= must be a mapping of tool names to 'allow' / 'ask' / 'deny' (\"*\" for the "
                             f"rest) or a callable that returns one, not {type(setting).__name__}")
        self.own: dict[str, Policy] = {t.name: t.approval for t in tools if getattr(t, "approval", None)}
        self.escalate = escalate

    @property
    def active(self) -> bool:
        """Whether any call could be anything but `allow` (no gate is needed otherwise)."""
        return bool(self.escalate or self.function or self.rest not in (None, "allow")
                    or any(p != "allow" for p in (*self.named.values(), *self.own.values())))

    def policy(self, request: ApprovalRequest) -> tuple[Policy, str | None]:
        """The call's policy, and why when it is a refusal the user did not write: a callable that raises or
        returns something else than a policy makes the call `deny` (fail closed)."""
        found: Policy | None = self.named.get(request.tool)
        if found is None and self.function is not None:
            try:
                value = self.function(request)
            except Exception as exc:  # noqa: BLE001 - a failing policy refuses rather than lets the call through
                return "deny", f"the approval policy raised {type(exc).__name__}: {exc}"
            if value is not None and value not in ("allow", "ask", "deny"):
                return "deny", f"the approval policy returned {value!r:.100}, not 'allow', 'ask', 'deny' or None"
            found = value  # type: ignore[assignment]  # checked just above
        if found is None:
            found = self.own.get(request.tool) or self.rest or "allow"
        if self.escalate and found == "allow":
            return "ask", None
        return found, None
