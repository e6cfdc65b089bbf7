"""Who decides an `ask`: an approver callable (or the terminal), the stream's consumer, or nobody now (the run
stops and is resumed later with the decision). Each decider starts the decision; the gate waits for it."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
from collections.abc import Callable
from typing import Any

from toolmode import workers
from toolmode.approval.decision import ApprovalRequest, Denied, as_decision

Answer = concurrent.futures.Future  # settled with a Decision


class Decider:
    """Base: `waits_for` names who decides (written in the `approval_request` event)."""

    waits_for = "approver"

    def start(self, request: ApprovalRequest, answer: Answer[Any]) -> None:
        """Begin deciding `request`; settle `answer` with a Decision (now or later, from any thread)."""


class CallApprover(Decider):
    """A callable, sync or async, that gets the ApprovalRequest and returns a decision (see `as_decision`).
    It runs off the run's thread (so the run can stop while it waits); an async one on the caller's event loop
    under `arun`/`astream`. One that raises, or returns something unreadable, denies the call."""

    def __init__(self, fn: Callable[[ApprovalRequest], Any], waits_for: str = "approver") -> None:
        if not callable(fn):
            raise ValueError(f"approver= must be a callable that takes the ApprovalRequest, not {type(fn).__name__}")
        self.fn = fn
        self.waits_for = waits_for

    def start(self, request: ApprovalRequest, answer: Answer[Any]) -> None:
        """Call the approver on a worker thread (or its coroutine on the caller's loop)."""
        loop = getattr(request.context, "loop", None)

        def settle(value: Any = None, error: BaseException | None = None) -> None:
            if answer.done():
                return
            if error is not None:
                answer.set_result(Denied(f"the {self.waits_for} failed ({type(error).__name__}: {error})"))
                return
            try:
                answer.set_result(as_decision(value, what=f"the {self.waits_for}'s answer"))
            except ValueError as exc:
                answer.set_result(Denied(str(exc)))

        def call() -> None:
            try:
                value = self.fn(request)
                if inspect.isawaitable(value):
                    if loop is not None and loop.is_running():
                        value = asyncio.run_coroutine_threadsafe(_awaited(value), loop).result()
                    else:
                        value = asyncio.run(_awaited(value))
            except BaseException as exc:  # noqa: BLE001 - a failing approver denies; the run goes on
                settle(error=exc)
                return
            settle(value)

        workers.submit(call)


async def _awaited(value: Any) -> Any:
    return await value


class StreamDecider(Decider):
    """The consumer of `stream()` / `astream()` answers the event (`event.approve()` / `event.deny()`)."""

    waits_for = "stream"


class Deferred(Decider):
    """Nobody decides during the run: a direct call is left pending (the run stops with `stopped="approval"`
    and is resumed with the decision); a call from a program is refused (a program cannot be resumed later)."""

    waits_for = "resume"
