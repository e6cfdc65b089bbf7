"""The run in progress, as seen from code the loop calls (model client, modes, tools).

A context variable holds the current `RunContext`: its event emitter, its limits, the caller's event
loop (arun/astream) and per-run state of the mode. The loop sets it; tool threads get a copy of the
context, so a model client or a tool reaches the run it works for without the Agent holding any
per-run state. Outside a run, `current()` is None.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from toolmode.budget import Limits
from toolmode.events import BaseEvent

if TYPE_CHECKING:  # only an annotation here; asyncio (and ssl with it) is start-up time for `toolmode tools`
    import asyncio

T = TypeVar("T")
DepsT = TypeVar("DepsT")


@dataclass
class RunContext(Generic[DepsT]):
    """What code called during a run may need from it. A tool whose first parameter is annotated
    `RunContext` (or `RunContext[MyDeps]`) receives it (the parameter is hidden from the model): `deps` is
    what the caller passed as `agent.run(task, deps=...)`, `step` the step in progress, `limits` the run's
    deadline and cancellation."""

    publish: Callable[[BaseEvent], None]
    limits: Limits
    loop: asyncio.AbstractEventLoop | None = None  # the caller's event loop, for async tools
    step: int = 0
    state: dict[int, Any] = field(default_factory=dict)  # per-run state of modes, by id(mode)
    deps: DepsT = None  # type: ignore[assignment]  # the run's dependencies (`agent.run(task, deps=...)`), for tools that ask for them
    run: Any = field(default=None, repr=False)  # the `Run` itself


_CURRENT: contextvars.ContextVar[RunContext[Any] | None] = contextvars.ContextVar("toolmode_run", default=None)


def current() -> RunContext[Any] | None:
    """The run in progress in this context, or None."""
    return _CURRENT.get()


def activate(ctx: RunContext[Any]) -> contextvars.Token[RunContext[Any] | None]:
    """Make `ctx` the current run (the loop does this); undo with `deactivate(token)`."""
    return _CURRENT.set(ctx)


def deactivate(token: contextvars.Token[RunContext[Any] | None]) -> None:
    """Restore the run that was current before `activate`."""
    _CURRENT.reset(token)


def emit(event: BaseEvent) -> None:
    """Publish `event` to the current run's stream; does nothing outside a run."""
    ctx = _CURRENT.get()
    if ctx is not None:
        ctx.publish(event)


def run_state(owner: object, factory: Callable[[], T]) -> T | None:
    """Per-run state that `owner` (a mode) keeps for the current run, made by `factory` on first use;
    None outside a run."""
    ctx = _CURRENT.get()
    if ctx is None:
        return None
    key = id(owner)
    state = ctx.state.get(key)
    if state is None:
        state = ctx.state.setdefault(key, factory())  # atomic: parallel calls agree
    return state  # type: ignore[no-any-return]


def cap_timeout(seconds: float) -> float:
    """`seconds`, or less when the current run's time budget ends sooner (never below 0.1 s), so a tool
    that can run long stops with the run instead of outliving it."""
    ctx = _CURRENT.get()
    if ctx is None:
        return seconds
    return max(0.1, min(seconds, ctx.limits.remaining()))


def is_context_annotation(hint: Any) -> bool:
    """Whether a parameter annotation asks for the run's context (`RunContext` or `RunContext[...]`)."""
    return hint is RunContext or getattr(hint, "__origin__", None) is RunContext
