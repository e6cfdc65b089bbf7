"""`Chat`: a conversation with an agent, turn after turn, in one trace.

Each `send(text)` runs the agent with the conversation so far as `history`, so earlier turns, tool
results and reasoning stay in context and the request prefix is unchanged (the provider's prompt cache
keeps hitting). A turn that ends early (budget, cancellation, error) still becomes part of the
conversation; a turn interrupted with Ctrl-C (`KeyboardInterrupt`) does not.
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

from toolmode.result import RunResult
from toolmode.trace import Trace
from toolmode.usage import Usage


class Runner(Protocol):
    """What a Chat needs from an agent (an `Agent` is one)."""

    def run(self, task: str, **options: Any) -> RunResult:
        """Run one turn."""
        ...

    def new_trace(self) -> Trace:
        """A trace for the session."""
        ...


R = TypeVar("R", bound=Runner)


class Chat(Generic[R]):
    """Turns with one agent. `messages` is the conversation; `usage` and `cost` add up every turn."""

    def __init__(self, agent: R, *, trace: Trace | None = None) -> None:
        self.agent = agent
        self.trace = trace if trace is not None else agent.new_trace()  # one trace for the whole session
        self.messages: list[dict[str, Any]] = []
        self.results: list[RunResult] = []

    def send(self, text: str, **options: Any) -> RunResult:
        """Run one turn (options as for `Agent.run`) and keep its conversation for the next."""
        result = self.agent.run(text, history=self.messages or None, trace=self.trace, **options)
        self.messages = result.messages
        self.results.append(result)
        return result

    def resume(self, decisions: dict[str, Any], **options: Any) -> RunResult:
        """Continue the last turn, which stopped for approval (`stopped == "approval"`), with `decisions` (as for
        `Agent.resume`); the conversation goes on from it."""
        last = self.results[-1] if self.results else None
        if last is None or last.stopped != "approval":
            raise ValueError("the last turn did not stop for approval: there is nothing to resume")
        result: RunResult = self.agent.resume(last.state(), decisions, trace=self.trace, **options)  # type: ignore[attr-defined]
        self.messages = result.messages
        self.results.append(result)
        return result

    def reset(self) -> None:
        """Forget the conversation (usage and cost totals are kept)."""
        self.messages = []

    @property
    def usage(self) -> Usage:
        """Tokens of every turn so far."""
        total = Usage()
        for r in self.results:
            total.add(r.usage)
        return total

    @property
    def cost(self) -> float | None:
        """USD of every turn so far; None when a price is unknown."""
        costs = [r.cost for r in self.results]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)

    def close(self) -> None:
        """Close the session's trace."""
        self.trace.close()

    def __enter__(self) -> Chat[R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
