"""Host-side checks shared by the adversarial tests: what no sandboxed program may change about the host."""

from __future__ import annotations

import ctypes
import os
import resource
from pathlib import Path


def host_state() -> dict[str, object]:
    """What a program must not change about the host process: every rlimit, and per thread the niceness,
    scheduler, CPU affinity and I/O priority (a program could aim at any of the host's thread ids)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    state: dict[str, object] = {name: resource.getrlimit(getattr(resource, name))
                                for name in dir(resource) if name.startswith("RLIMIT_")}
    for tid in os.listdir("/proc/self/task"):
        ioprio = libc.syscall(252, 1, int(tid))  # ioprio_get(IOPRIO_WHO_PROCESS, tid)
        try:
            stat = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
            cpus = [line for line in Path(f"/proc/self/task/{tid}/status").read_text().splitlines()
                    if line.startswith("Cpus_allowed_list")]
        except OSError:
            continue
        if ioprio < 0 or stat[0] in ("Z", "X"):  # the thread ended meanwhile
            continue
        state[f"task {tid}"] = (stat[16], stat[37], stat[38], cpus, ioprio)
    return state


def same_host_state(before: dict[str, object], after: dict[str, object]) -> None:
    """Assert that nothing in `before` changed (threads started or ended meanwhile are not compared)."""
    common = before.keys() & after.keys()
    changed = {k: (before[k], after[k]) for k in common if before[k] != after[k]}
    assert not changed, f"the host's limits or scheduling changed: {changed}"
