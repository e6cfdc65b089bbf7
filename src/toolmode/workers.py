"""Daemon threads for tool calls, reused between calls.

Starting a thread per call cost more than the rest of a step's own work; a pool of idle threads avoids
that. Unlike `concurrent.futures.ThreadPoolExecutor`, the threads are daemons and the pool grows without
bound: a call the loop abandoned (deadline, cancellation, Ctrl-C) keeps its thread busy until it returns,
never blocks the next call, and never holds up interpreter exit.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

MAX_IDLE = 16  # threads kept waiting for work; more finish when they fall idle

_jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_lock = threading.Lock()
_idle = 0
_started = 0


def submit(job: Callable[[], None]) -> None:
    """Run `job()` on an idle worker thread, or on a new one when none is idle. `job` must not raise."""
    global _idle, _started
    with _lock:
        spawn = _idle == 0
        if spawn:
            _started += 1
            name = f"toolmode-tool-{_started}"
        else:
            _idle -= 1  # reserved: that worker takes this job (or an equivalent one) off the queue
    _jobs.put(job)
    if spawn:
        threading.Thread(target=_work, name=name, daemon=True).start()


def _work() -> None:
    global _idle
    while True:
        job = _jobs.get()
        job()
        del job
        with _lock:
            if _idle >= MAX_IDLE:
                return
            _idle += 1
