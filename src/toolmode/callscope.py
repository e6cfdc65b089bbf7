"""The scope of one tool call: the deadline of the run that made it, and a cancel signal.

`Sandbox.run` enters a scope around every host tool call made by sandboxed code, and the loop around every
call of a step (no deadline there; cancelled when the run is interrupted). A tool that can run long bounds itself with
`remaining_time()` and registers a canceller with `on_cancel(fn)`; when the run ends before the call does
(deadline, write budget, close), every canceller runs (run_shell kills its process group). A pure-Python
tool that cannot be stopped that way gets `ToolCancelled` raised in its thread (at its next bytecode), and
until it is gone it is listed by `running_abandoned()`: the run's result names it, and the next run gets a
fresh tool thread, so it never waits behind it.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import threading
import time
from collections.abc import Callable, Iterator


class ToolCancelled(BaseException):
    """Raised inside a host tool whose run ended (a BaseException, so `except Exception` does not keep it)."""


class CallScope:
    """One tool call's deadline and cancellation (thread-safe). Made for every call: kept cheap.

    From sandboxed code, also the run's write budget: `write_left()` (bytes the run may still write; None
    outside such a run) bounds what a tool may start (run_shell), and `charge(nbytes)` adds what it wrote."""

    __slots__ = ("_cancellers", "_charge", "_held_since", "_lock", "abandoned_at", "call_id", "cancelled", "deadline",
                 "held", "name", "write_left")

    def __init__(self, name: str, deadline: float, call_id: str | None = None,
                 write_left: Callable[[], int] | None = None, charge: Callable[[int], None] | None = None) -> None:
        self.name = name
        self.deadline = deadline
        self.call_id = call_id  # the model's id of the call (the loop's scopes), so events can name it
        self.abandoned_at = 0.0
        self.cancelled = False
        self.write_left = write_left
        self._charge = charge
        self._lock = threading.Lock()
        self._cancellers: list[Callable[[], None]] = []
        self.held = 0.0  # seconds the call waited for a person's decision (the sandbox moves its deadline by it)
        self._held_since: float | None = None

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Count the block's time as held (a person deciding): `held_now()` includes it while it runs."""
        self._held_since = time.monotonic()
        try:
            yield
        finally:
            self.held += time.monotonic() - self._held_since
            self._held_since = None

    def held_now(self) -> float:
        """Seconds held so far, including a hold in progress."""
        since = self._held_since
        return self.held + (time.monotonic() - since if since is not None else 0.0)

    def charge(self, nbytes: int) -> None:
        """Charge `nbytes`, written by work this call started outside its own thread, to the calling run."""
        if self._charge is not None:
            self._charge(nbytes)

    def on_cancel(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Call `fn` when the call is cancelled (now, if it already was); returns a function that unregisters it."""
        with self._lock:
            if not self.cancelled:
                self._cancellers.append(fn)
                return lambda: self._forget(fn)
        fn()
        return lambda: None

    def _forget(self, fn: Callable[[], None]) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._cancellers.remove(fn)

    def cancel(self) -> None:
        """Mark the call cancelled and run every canceller once (their errors are ignored)."""
        with self._lock:
            self.cancelled = True
            cancellers, self._cancellers = self._cancellers, []
        for fn in cancellers:
            with contextlib.suppress(Exception):
                fn()


_SCOPE: contextvars.ContextVar[CallScope | None] = contextvars.ContextVar("toolmode_call_scope", default=None)
_abandoned: list[tuple[CallScope, threading.Thread]] = []
_abandoned_lock = threading.Lock()


def enter(scope: CallScope) -> None:
    """Make `scope` the current call's scope (run inside the call's copied context)."""
    _SCOPE.set(scope)


def current() -> CallScope | None:
    """The scope of the host tool call running in this context, if any."""
    return _SCOPE.get()


def remaining_time() -> float | None:
    """Inside a tool call: seconds left before its run's deadline (inf: none); None outside a scope."""
    scope = _SCOPE.get()
    return None if scope is None else max(0.0, scope.deadline - time.monotonic())


def on_cancel(fn: Callable[[], None]) -> Callable[[], None]:
    """Register `fn` with the current call's scope (no-op outside one); returns the unregister function."""
    scope = _SCOPE.get()
    return scope.on_cancel(fn) if scope is not None else (lambda: None)


def abandon(scope: CallScope, thread: threading.Thread) -> None:
    """The run ended while `thread` ran the call: cancel it, interrupt its Python code, and account for it."""
    scope.abandoned_at = time.monotonic()
    scope.cancel()
    if thread.ident is not None and thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(ToolCancelled))
    with _abandoned_lock:
        _abandoned[:] = [(s, t) for s, t in _abandoned if t.is_alive()]
        _abandoned.append((scope, thread))


def running_abandoned() -> list[str]:
    """Tool calls abandoned by ended runs whose thread is still running, as `name (N s since abandoned)`."""
    now = time.monotonic()
    with _abandoned_lock:
        _abandoned[:] = [(s, t) for s, t in _abandoned if t.is_alive()]
        return [f"{s.name} ({now - s.abandoned_at:.0f} s since abandoned)" for s, _ in _abandoned]


def join_abandoned(timeout: float, threads: list[threading.Thread] | None = None) -> list[str]:
    """Wait up to `timeout` seconds in all for abandoned calls (all, or those on `threads`) to end; the ones
    still running, as in `running_abandoned`."""
    end = time.monotonic() + timeout
    with _abandoned_lock:
        waiting = [t for _, t in _abandoned if threads is None or t in threads]
    for t in waiting:
        t.join(max(0.0, end - time.monotonic()))
    return running_abandoned()
