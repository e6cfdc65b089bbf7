"""Process count and memory for one sandboxed run as a whole, whatever uid the host runs as.

rlimits alone do not do it: the kernel exempts uid 0 from RLIMIT_NPROC (and outside a user namespace of its
own it counts every process of the uid, not the run's), and RLIMIT_AS bounds each process separately, so a
run that forks holds many times its memory limit. The layers, chosen at run time, best first:

- cgroup v2: a child of the host's own cgroup, when that cgroup hands `pids` and `memory` to its children
  (both listed in its cgroup.subtree_control). Hard limits, kernel memory included.
- cgroup v1: a child in the host's `pids` and `memory` hierarchies (as root, or where they are delegated).
- supervisor: for whatever no cgroup covers, the host samples the run's processes (usage.py: the worker, or
  the shell's process tree) every check interval and stops the run once their threads or their anonymous and
  shared memory exceed the limits: approximate (a run can overshoot within one interval) but it holds for
  root too. In the namespaces tier, RLIMIT_NPROC is also exact per run for a non-root user (Linux >= 5.14
  counts tasks per user namespace).

The host moves the confined process into the run's cgroups (`RunGroup.add`) once it is confined and before it
runs anything of the model's (the worker at its `ready` frame, the shell launcher before its go); neither
/sys nor a capability to write there is left to it, so no confined process can leave.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache

from . import usage

MiB = 1024 * 1024
SAMPLE_INTERVAL = 0.1
PREFIX = "toolmode-"
CONTROLLERS = ("pids", "memory")
ENABLED = True  # False: never make cgroups (the supervisor covers everything); tests use it to exercise the fallback

_counter = itertools.count()
_swept: set[str] = set()
_sweep_lock = threading.Lock()


def _unescape(path: str) -> str:
    """mountinfo writes space, tab, newline and backslash in paths as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        path = path.replace(code, char)
    return path


def _parse_mounts(mountinfo: str) -> list[tuple[str, str, str, set[str]]]:
    """(fstype, mount root, mount point, super options) of every cgroup mount in a mountinfo text."""
    out = []
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3 or rest[0] not in ("cgroup", "cgroup2"):
            continue
        out.append((rest[0], _unescape(fields[3]), _unescape(fields[4]), set(rest[2].split(","))))
    return out


def _inside(mount_root: str, mount_point: str, path: str) -> str | None:
    """Where cgroup `path` appears under a mount of `mount_root` at `mount_point`; None if it does not."""
    if mount_root == "/":
        return mount_point.rstrip("/") + path if path != "/" else mount_point
    if path == mount_root or path.startswith(mount_root + "/"):
        return mount_point.rstrip("/") + path[len(mount_root):]
    return None


def find_hierarchies(mountinfo: str, proc_cgroup: str) -> dict[str, tuple[int, str]]:
    """For each of CONTROLLERS the host can delegate: (cgroup version, the host's own cgroup directory).

    v2 is preferred when the host's v2 cgroup lists both controllers in cgroup.subtree_control.
    """
    mounts = _parse_mounts(mountinfo)
    found: dict[str, tuple[int, str]] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, names, path = parts
        if names == "":  # the v2 hierarchy
            for fstype, root, point, _ in mounts:
                d = _inside(root, point, path) if fstype == "cgroup2" else None
                if d and _v2_delegates(d):
                    return {c: (2, d) for c in CONTROLLERS}
            continue
        for controller in set(names.split(",")) & set(CONTROLLERS):
            for fstype, root, point, opts in mounts:
                d = _inside(root, point, path) if fstype == "cgroup" and controller in opts else None
                if d and os.path.isdir(d) and controller not in found:
                    found[controller] = (1, d)
    return found


def _v2_delegates(d: str) -> bool:
    try:
        with open(os.path.join(d, "cgroup.subtree_control")) as f:
            enabled = set(f.read().split())
    except OSError:
        return False
    return set(CONTROLLERS) <= enabled


@lru_cache(maxsize=1)
def hierarchies() -> dict[str, tuple[int, str]]:
    """find_hierarchies() for this process (read once)."""
    try:
        with open("/proc/self/mountinfo") as f:
            mountinfo = f.read()
        with open("/proc/self/cgroup") as f:
            proc_cgroup = f.read()
    except OSError:
        return {}
    return find_hierarchies(mountinfo, proc_cgroup)


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _read_counts(path: str) -> dict[str, int]:
    out = {}
    with contextlib.suppress(OSError, ValueError), open(path) as f:
        for line in f:
            key, _, value = line.partition(" ")
            if value.strip().isdigit():
                out[key] = int(value)
    return out


def _sweep(base: str) -> None:
    """Remove cgroups left by toolmode processes that no longer exist (a host that was killed)."""
    with _sweep_lock:
        if base in _swept:
            return
        _swept.add(base)
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            owner = name[len(PREFIX):].split("-", 1)[0]
            if not name.startswith(PREFIX) or not owner.isdigit():
                continue
            try:
                os.kill(int(owner), 0)
            except ProcessLookupError:
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(base, name))
            except OSError:
                pass


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


@dataclass
class RunGroup:
    """The limits of one run: the cgroup directories made for it and what the supervisor must watch."""

    max_tasks: int
    memory_bytes: int
    dirs: dict[str, tuple[int, str]] = field(default_factory=dict)  # controller -> (version, directory)

    @property
    def supervised(self) -> tuple[str, ...]:
        """The controllers no cgroup covers (the host samples those)."""
        return tuple(c for c in CONTROLLERS if c not in self.dirs)

    def describe(self) -> str:
        """How the limits are enforced, in a few words."""
        versions = {v for v, _ in self.dirs.values()}
        if not self.dirs:
            return "sampled by the host"
        how = f"cgroup v{min(versions)}" if len(versions) == 1 else "cgroups"
        return how if not self.supervised else f"{how} + sampled by the host"

    def procs_files(self) -> list[str]:
        """The cgroup.procs files that move a process into the run."""
        return sorted({os.path.join(d, "cgroup.procs") for _, d in self.dirs.values()})

    def add(self, pid: int) -> None:
        """Move process `pid` (all its threads) into the run's cgroups."""
        for path in self.procs_files():
            _write(path, str(pid))

    def over(self, sample: usage.Sample) -> str | None:
        """Supervisor: what the run's processes (`sample`) exceed, in words; None while within the limits."""
        if "pids" in self.supervised and sample.tasks > self.max_tasks:
            return (f"the run had {sample.tasks} processes and threads at once "
                    f"(limit {self.max_tasks} for the whole run)")
        if "memory" in self.supervised and sample.memory > self.memory_bytes:
            return (f"the run's processes held {sample.memory // MiB} MiB together "
                    f"(limit {self.memory_bytes // MiB} MiB for the whole run)")
        return None

    def events(self) -> str | None:
        """What the cgroups refused or killed during the run, in words; None if nothing."""
        notes = []
        if "pids" in self.dirs:
            refused = _read_counts(os.path.join(self.dirs["pids"][1], "pids.events")).get("max", 0)
            if refused:
                notes.append(f"new processes or threads were refused {_times(refused)} at the limit of "
                             f"{self.max_tasks} for the whole run")
        if "memory" in self.dirs:
            version, d = self.dirs["memory"]
            name = "memory.events" if version == 2 else "memory.oom_control"
            killed = _read_counts(os.path.join(d, name)).get("oom_kill", 0)
            if killed:
                notes.append(f"{killed} process{'es were' if killed > 1 else ' was'} killed when the run's processes together reached its "
                             f"{self.memory_bytes // MiB} MiB memory limit")
        return "; ".join(notes) or None

    def close(self, wait: float = 10.0) -> None:
        """Remove the cgroups once their processes are gone (they are killed by then); retries for `wait` s
        (on a loaded machine the last of them can take a while to be reaped). A cgroup still busy after that
        is left for the sweep of a later host."""
        deadline = time.monotonic() + wait
        pending = sorted({d for _, d in self.dirs.values()})
        while pending:
            for d in list(pending):
                try:
                    os.rmdir(d)
                    pending.remove(d)
                except FileNotFoundError:
                    pending.remove(d)
                except OSError:
                    pass
            if not pending or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        self.dirs = {}


def create(*, max_tasks: int, memory_mb: int) -> RunGroup:
    """A RunGroup for one run: cgroups where they can be made (never raises: the supervisor covers the rest)."""
    group = RunGroup(max_tasks, memory_mb * MiB)
    if not ENABLED:
        return group
    made: dict[str, str] = {}  # host cgroup directory -> the run's directory (v1 co-mounted hierarchies share one)
    name = f"{PREFIX}{os.getpid()}-{next(_counter)}"
    for controller, (version, base) in hierarchies().items():
        try:
            if base not in made:
                _sweep(base)
                os.mkdir(os.path.join(base, name), 0o700)
                made[base] = os.path.join(base, name)
            d = made[base]
            if controller == "pids":
                _write(os.path.join(d, "pids.max"), str(max_tasks))
            elif version == 2:
                _write(os.path.join(d, "memory.max"), str(group.memory_bytes))
                with contextlib.suppress(OSError):  # no swap controller: nothing to swap to, or nothing to bound
                    _write(os.path.join(d, "memory.swap.max"), "0")
                with contextlib.suppress(OSError):
                    _write(os.path.join(d, "memory.oom.group"), "1")
            else:
                _write(os.path.join(d, "memory.limit_in_bytes"), str(group.memory_bytes))
                with contextlib.suppress(OSError):  # only with swap accounting
                    _write(os.path.join(d, "memory.memsw.limit_in_bytes"), str(group.memory_bytes))
            group.dirs[controller] = (version, d)
        except OSError:
            continue  # this controller falls back to the supervisor
    for d in set(made.values()) - {d for _, d in group.dirs.values()}:
        with contextlib.suppress(OSError):
            os.rmdir(d)
    return group
