"""Running async tools from the synchronous loop.

An awaitable a tool returns runs on the caller's event loop when the run was started with `arun` /
`astream` (so it may use the application's loop-bound resources), and otherwise on one background
event loop owned by toolmode: never with `asyncio.run` in the calling thread, which fails when
`run()` is called from inside a running loop (Jupyter, FastAPI). Parallel calls of one reply run on
their own threads, so their coroutines run concurrently on whichever loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable
from typing import Any

from toolmode import runctx

_background: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """toolmode's own event loop, running on a daemon thread (started on first use)."""
    global _background
    with _lock:
        if _background is None or _background.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="toolmode-async-tools", daemon=True).start()
            _background = loop
        return _background


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def resolve(awaitable: Awaitable[Any]) -> Any:
    """Run `awaitable` to completion from a thread that is not running an event loop; return its result.

    Waits at most until the run's deadline and raises the run's stop (budget or cancel) then; the
    coroutine is cancelled.
    """
    ctx = runctx.current()
    loop = ctx.loop if ctx is not None and ctx.loop is not None and ctx.loop.is_running() else background_loop()
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:  # would wait on itself forever
        raise RuntimeError("an async tool cannot be awaited from its own event loop's thread")
    future = asyncio.run_coroutine_threadsafe(_await(awaitable), loop)
    try:
        while not future.done():
            if ctx is None:
                concurrent.futures.wait([future])
            else:
                concurrent.futures.wait([future], timeout=min(max(ctx.limits.remaining(), 0.0), 0.05))
                if not future.done():
                    ctx.limits.check_time()
    except BaseException:
        future.cancel()
        raise
    return future.result()
