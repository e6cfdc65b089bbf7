"""What a run's processes use, read by the host from /proc: tasks, memory, and the bytes they wrote.

- tasks: the threads of every process of the run (`Threads:` in /proc/<pid>/status);
- memory: anonymous plus shared memory resident in each process (`RssAnon` + `RssShmem`), so a mapping of
  shared memory is not free (memory a descriptor holds without a mapping, memfd_create and memfd_secret,
  cannot be made: the filters refuse both);
- written: the kernel's per-task I/O accounting (`write_bytes` in /proc/<pid>/io): the page-cache pages a
  process dirtied (buffered writes, stores through a shared file mapping, O_DIRECT) at the moment it dirtied
  them, whatever later happens to the file. A process's reaped children are added to its own counters (the
  kernel does it when they are reaped), so the total of a process and its live descendants never loses a
  child: one that ended is either still listed or already inside its reaper's count. Files on tmpfs have no
  writeback and are not counted here (see budget.py).

The run's processes are a tree: the process the host started and its descendants, walked through
/proc/<pid>/task/<tid>/children from the top, each process read before its children are listed: a child
reaped in between is missed at most (the next sample sees it in its reaper). In a window of microseconds a
child can be counted twice (the kernel adds it to its parent's counters just before it leaves /proc): the
budget confirms a reading over its limit with a second one. The write budget reads the whole tree under the process the host started; tasks and memory are read
from the program down (bubblewrap, the waiter and the namespace's init are toolmode's own).
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass
class Sample:
    """One reading of a run: `tasks` (threads), `memory` (bytes), `written` (bytes), `processes` read."""

    tasks: int = 0
    memory: int = 0
    written: int = 0
    processes: int = 0


def written(pid: int | str) -> int | None:
    """`write_bytes` of process (or `self/task/<tid>`, `thread-self`) `pid`; None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/io", "rb") as f:
            for line in f:
                if line.startswith(b"write_bytes:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _status(pid: int) -> tuple[int, int] | None:
    """(threads, RssAnon + RssShmem in bytes) of `pid`."""
    threads = kib = 0
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith((b"RssAnon:", b"RssShmem:")):
                    kib += int(line.split()[1])
                elif line.startswith(b"Threads:"):
                    threads = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return threads, kib * 1024


def children(pid: int) -> list[int]:
    """The children of every thread of `pid`."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                found += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return found


def sample(root: int, *, tree: bool = True, status: bool = True) -> Sample:
    """Read the processes of the run rooted at `root` (only `root` itself unless `tree`); tasks and memory
    only with `status`."""
    out = Sample()
    level = [root]
    while level:
        below: list[int] = []
        for pid in level:
            io = written(pid)
            if io is None:
                continue  # ended meanwhile: its reaper's count holds it (or will)
            out.written += io
            out.processes += 1
            found = _status(pid) if status else None
            if found is not None:
                out.tasks += found[0]
                out.memory += found[1]
            if tree:
                below += children(pid)
        level = below
    return out


def _inner_pid(pid: int) -> int | None:
    """`pid` as its own innermost PID namespace numbers it (the last field of NSpid)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def in_namespace(root: int, inner: int, limit: int = 4) -> int | None:
    """The process under `root` (at most `limit` levels down) that its own PID namespace numbers `inner`: 1 for
    the namespace's init, 2 for the program (under bubblewrap or the waiter). Found by what the kernel says of
    each process, not by its place in the tree; None when there is none (yet)."""
    level = [root]
    for _ in range(limit):
        below: list[int] = []
        for pid in level:
            for child in children(pid):
                if _inner_pid(child) == inner:
                    return child
                below.append(child)
        level = below
    return None
