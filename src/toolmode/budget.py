"""Limits besides the step count: cost, tokens, wall time; and cancellation from another thread or task."""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from toolmode.errors import ToolmodeError
from toolmode.usage import Usage


class CancelToken:
    """Set once to cancel the runs that hold it; `cancel()` may be called from any thread.

    Pass one to `agent.run(task, cancel=token)` to cancel that run only; `agent.cancel()` cancels every
    run the agent has in progress.
    """

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        """Ask the runs holding this token to stop (at the next check: between requests, while tools run)."""
        self._event.set()

    @property
    def cancelled(self) -> bool:
        """True once `cancel()` was called."""
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        """Sleep up to `timeout` seconds, waking early on cancellation; returns `cancelled`."""
        return self._event.wait(max(0.0, timeout))


class RunStopped(ToolmodeError):
    """Raised inside a run when a budget is spent or the run was cancelled; the loop ends the run cleanly."""

    def __init__(self, stopped: str, message: str, limit: str | None = None) -> None:
        super().__init__(message)
        self.stopped = stopped  # "budget" or "cancelled"
        self.limit = limit  # "max_cost", "max_total_tokens", "timeout" (budget only)


@dataclass(frozen=True)
class Budget:
    """`max_cost` (USD), `max_total_tokens` (prompt + completion, all steps), `timeout` (wall seconds for
    the whole run). None means no limit. Zero or negative values are refused."""

    max_cost: float | None = None
    max_total_tokens: int | None = None
    timeout: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_cost", "max_total_tokens", "timeout"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a positive number, got {value!r}")
            if value <= 0:
                raise ValueError(f"{name} must be more than 0, got {value!r} (leave it out for no limit)")


class Limits:
    """The budget of one run in progress: the deadline, the cancel tokens, and the checks."""

    def __init__(self, budget: Budget, tokens: list[CancelToken]) -> None:
        self.budget = budget
        self.tokens = tokens
        self.started = time.monotonic()
        self.deadline = self.started + budget.timeout if budget.timeout is not None else math.inf
        self._holds = 0  # calls waiting for a person's decision (toolmode.approval): the clock stands still
        self._held_since = 0.0
        self._hold_lock = threading.Lock()

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Stop the run's clock while the block runs (a person deciding on a call): the deadline moves by the
        time held. Holds may overlap (parallel calls); the clock runs again when the last one ends."""
        with self._hold_lock:
            if self._holds == 0:
                self._held_since = time.monotonic()
            self._holds += 1
        try:
            yield
        finally:
            with self._hold_lock:
                self._holds -= 1
                if self._holds == 0:
                    self.deadline += time.monotonic() - self._held_since

    def _held(self) -> float:
        """Seconds of the hold in progress (0 when none)."""
        return time.monotonic() - self._held_since if self._holds else 0.0

    def remaining(self) -> float:
        """Seconds left before the run's deadline (inf without a timeout)."""
        return self.deadline + self._held() - time.monotonic()

    @property
    def cancelled(self) -> bool:
        """True once any of the run's tokens was cancelled."""
        return any(t.cancelled for t in self.tokens)

    def check_time(self) -> None:
        """Raise RunStopped when the run was cancelled or its wall time is spent."""
        if self.cancelled:
            raise RunStopped("cancelled", "stopped: cancelled")
        if time.monotonic() >= self.deadline + self._held():
            raise RunStopped("budget", f"stopped: time budget of {self.budget.timeout:g} s spent", "timeout")

    def check(self, usage: Usage, cost: float | None) -> None:
        """`check_time`, then the token and cost budgets against the run's totals so far (`cost` None: a
        request's cost is unknown, which spends a `max_cost` budget)."""
        self.check_time()
        b = self.budget
        if b.max_total_tokens is not None and usage.total_tokens >= b.max_total_tokens:
            raise RunStopped("budget", f"stopped: token budget of {b.max_total_tokens:,} spent "
                             f"({usage.total_tokens:,} tokens used)", "max_total_tokens")
        if b.max_cost is None:
            return
        if cost is None:  # an unknown cost counts as spent: a cap that cannot be checked is not kept
            raise RunStopped("budget", "stopped: max_cost cannot be held: a request's cost is unknown (no price "
                             "for the model, and the server reported none); pass prices= with its price, or "
                             "leave max_cost out", "max_cost")
        if cost >= b.max_cost:
            raise RunStopped("budget", f"stopped: cost budget of ${b.max_cost:g} spent (${cost:.6f} used)",
                             "max_cost")

    def sleep(self, seconds: float) -> None:
        """Sleep (retry backoff), waking at once on cancellation; raises RunStopped when stopped."""
        end = min(time.monotonic() + seconds, self.deadline)
        while (left := end - time.monotonic()) > 0 and not self.cancelled:
            (self.tokens[0].wait if self.tokens else time.sleep)(min(left, 0.05))
        self.check_time()
