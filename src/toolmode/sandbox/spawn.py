"""Host-side process helpers: the bare interpreter, a scrubbed environment, group kills, a spawner thread."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

HERE = Path(__file__).resolve().parent  # the package directory (the children get their code from boot.py, not from here)
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"

# Children get PR_SET_PDEATHSIG, which fires when the *thread* that spawned them exits. Callers run on
# short-lived pool threads (parallel tool calls), so long-lived workers are spawned from this one thread,
# which lives as long as the process.
_SPAWNER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolmode-sandbox-spawner")


def interpreter() -> str:
    """The real CPython binary (not a venv shim), run as `-I -S -B`: no site-packages, no env influence."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def scrubbed_env(workspace: Path, **extra: str) -> dict[str, str]:
    """The only environment a sandboxed process sees: no API keys, no proxies, nothing of the host's."""
    env = {"PATH": SAFE_PATH, "HOME": str(workspace), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env.update(extra)
    return env


def popen_from_spawner(args: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """subprocess.Popen run on the long-lived spawner thread (see _SPAWNER)."""
    popen: Any = subprocess.Popen
    return _SPAWNER.submit(popen, args, **kwargs).result()  # type: ignore[no-any-return]


def on_spawner(fn: Callable[[], T]) -> concurrent.futures.Future[T]:
    """Run `fn` on the spawner thread (it may start long-lived children there); a future for its result."""
    return _SPAWNER.submit(fn)


def kill_group(pgid: int, seconds: float = 1.0) -> None:
    """SIGKILL every process in the group, repeating until the group is empty (races with forks) or
    `seconds` have passed (unreaped zombies keep a group non-empty; their reaper is someone else)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            return
        except PermissionError:
            return
        time.sleep(0.002)
