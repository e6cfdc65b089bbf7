"""One model request run on a helper thread and waited for within its bounds.

The HTTP library bounds each read, not a request: a server that sends an SSE keep-alive comment every few
seconds, or its reply one byte at a time, keeps a request alive for ever, and a blocked read does not
notice a cancellation. So the request runs on a helper thread that hands each piece it reads to the
caller, and the caller waits only until the request's time is up, a stream that has started has been
quiet for the idle timeout, or the run is stopped (`check` raises). Then the caller gets the reason at once,
and the connection is shut down so that the helper's read ends too (before the response's headers have
come there is no connection to cut yet: the helper then ends at its own read timeout, the request's).
"""

from __future__ import annotations

import contextlib
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from toolmode import workers

T = TypeVar("T")

POLL_SECONDS = 0.05  # how often a run's cancellation and deadline are checked while waiting


class Overdue(Exception):
    """The request took longer than it may: `why` is "total" (its whole time) or "idle" (a quiet stream)."""

    def __init__(self, why: str, seconds: float) -> None:
        super().__init__(f"{why} bound of {seconds:g} s reached")
        self.why = why
        self.seconds = seconds


class Exchange:
    """What the helper shares with the waiting caller: the connection of the response being read (so the
    caller can cut it when it stops waiting) and whether the caller has gone."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self.abandoned = False

    def attach(self, response: Any) -> None:
        """The response's headers have arrived: remember its connection (cut at once if the caller left)."""
        sock = _socket_of(response)
        with self._lock:
            if self.abandoned:
                _shut(sock)
            else:
                self._socket = sock

    def release(self) -> None:
        """The response was read to its end: its connection goes back to the pool and must not be cut."""
        with self._lock:
            self._socket = None

    def abandon(self) -> None:
        """The caller stopped waiting: cut the connection still being read, so the helper's read returns."""
        with self._lock:
            self.abandoned = True
            sock, self._socket = self._socket, None
        _shut(sock)


def _socket_of(response: Any) -> socket.socket | None:
    stream = getattr(response, "extensions", {}).get("network_stream")
    get = getattr(stream, "get_extra_info", None)
    sock = get("socket") if get is not None else None
    return sock if isinstance(sock, socket.socket) else None


def _shut(sock: socket.socket | None) -> None:
    if sock is not None:
        with contextlib.suppress(OSError):
            # socket.socket's own shutdown even for a TLS socket: it wakes a recv() blocked in another thread.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


_END = object()


class BoundedRequest(Generic[T]):
    """Runs `produce(exchange)` on a helper thread and yields what it yields, within bounds.

    `total`: seconds the whole request may take; `idle`: seconds a request that has yielded something may
    go before it yields again (None: no limit); `check`: called while waiting (every POLL_SECONDS) and once
    a bound is reached, to raise when the run was cancelled or its deadline passed. Iterating raises
    `Overdue` when a bound is reached and re-raises what `produce` raised. Use it as a context manager:
    leaving it before the end cuts the connection.
    """

    def __init__(self, produce: Callable[[Exchange], Iterator[T]], *, total: float, idle: float | None = None,
                 check: Callable[[], None] | None = None) -> None:
        self._produce = produce
        self.total = total
        self.idle = idle
        self._check = check
        self._items: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self._exchange = Exchange()
        self.started = time.monotonic()

    def __enter__(self) -> BoundedRequest[T]:
        self.started = time.monotonic()
        workers.submit(self._work)
        return self

    def __exit__(self, *exc: object) -> None:
        self._exchange.abandon()

    def _work(self) -> None:
        try:
            for item in self._produce(self._exchange):
                if self._exchange.abandoned:
                    return
                self._items.put((True, item))
            self._items.put((True, _END))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            self._items.put((False, exc))

    def __iter__(self) -> Iterator[T]:
        end = self.started + self.total
        quiet_end = float("inf")  # the idle clock starts with the first item
        while True:
            now = time.monotonic()
            due = min(end, quiet_end)
            if now >= due:
                if self._check is not None:
                    self._check()  # a run stopped (cancelled, out of time) says so rather than "overdue"
                raise Overdue("total", self.total) if due == end else Overdue("idle", self.idle or 0.0)
            wait = due - now if self._check is None else min(due - now, POLL_SECONDS)
            try:
                ok, item = self._items.get(timeout=wait)
            except queue.Empty:
                if self._check is not None:
                    self._check()
                continue
            if not ok:
                raise item
            if self._check is not None:
                self._check()  # a fast stream never waits: check between its pieces too
            if item is _END:
                return
            if self.idle is not None:
                quiet_end = time.monotonic() + self.idle
            yield item
