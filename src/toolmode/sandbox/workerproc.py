"""One code worker as the host sees it: the process it started, the worker's own pid once it is ready, its
channel, its cgroups, its private /tmp, its write account, and the freeze that keeps a persistent worker from
doing anything between runs.

In the namespaces tier the process the host started is bubblewrap or the waiter (namespaces.py), the
namespace's init is its child and the worker is the init's child; all of them share one process group, which
is what the host signals. Elsewhere the started process is the worker.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

from . import runlimits, usage, view
from .budget import WriteBudget
from .protocol import Channel
from .spawn import kill_group
from .tiers import Tier

FREEZE_WAIT = 1.0  # a stopped group is stopped within microseconds; past this the worker is replaced
_CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process `pid` (all its threads), from /proc; None if unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def _all_stopped(pid: int) -> bool:
    """Whether every thread of `pid` is stopped (state T) or gone."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in (b"T", b"t", b"Z", b"X"):
            return False
    return True


class WorkerProcess:
    """A worker: `proc` (what the host started), `chan`, `group` (its cgroups, or None), and once `attach`ed
    the worker's `pid`, its `tmp` descriptor and its write `budget`."""

    def __init__(self, proc: subprocess.Popen[bytes], chan: Channel, tier: Tier,
                 group: runlimits.RunGroup | None = None, started: float | None = None) -> None:
        self.proc = proc
        self.chan = chan
        self.tier = tier
        self.group = group
        self.ready = False
        self.runs = 0
        self.started = time.monotonic() if started is None else started  # taken before the process existed
        self.pid = 0
        self.init: int | None = None  # a pidfd of the namespace's init (namespaces tier, once attached)
        self.tmp: int | None = None
        self.budget: WriteBudget | None = None
        self.cpu_mark: float | None = None  # CPU seconds when the last run ended (persistent: after the freeze)
        self.frozen = False
        self.protected: list[str] = []  # the workspace's .git and runs/ it binds read-only (namespaces tier)
        self.private_tmp = False  # whether its view has a private /tmp (namespaces tier, workspace elsewhere)

    def attach(self, workspace: str, max_write_mb: float) -> None:
        """At `ready` (confined, nothing of the model's run yet): find the worker's pid, move it into the run's
        cgroups (where that fails, the host samples it instead), open its /tmp, start its write account.
        Raises OSError when the worker cannot be found or measured (the caller discards it)."""
        pid = usage.in_namespace(self.proc.pid, 2) if self.tier.namespaces else self.proc.pid
        if pid is None:
            raise OSError("the sandboxed worker process could not be found")
        self.pid = pid
        if self.tier.namespaces:
            init = usage.in_namespace(self.proc.pid, 1)
            if init is None:
                raise OSError("the sandbox's init process could not be found")
            self.init = os.pidfd_open(init)
        if self.group is not None and self.group.dirs:
            try:
                self.group.add(pid)
            except OSError:
                self.group.dirs = {}  # sampled by the host instead (runlimits.RunGroup.supervised)
        if self.tier.namespaces and self.private_tmp:
            self.tmp = os.open(f"/proc/{pid}/root{view.TMP}", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        self.budget = WriteBudget(max_write_mb, written=lambda: usage.written(pid), tmp=self.tmp, workspace=workspace)

    def freeze(self) -> bool:
        """SIGSTOP the worker's group and wait until every thread is stopped: nothing of the model's runs
        between runs (timers, handlers, threads). False when it did not stop in time."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGSTOP)
        self.frozen = True
        deadline = time.monotonic() + FREEZE_WAIT
        pause = 0.0001
        while not _all_stopped(self.pid):
            if time.monotonic() > deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.01)
        return True

    def hold(self, stop: bool) -> None:
        """Stop (or continue) the worker's group at once: a write budget reading over the limit holds the
        writers while it is confirmed."""
        if not stop and self.frozen:  # stopped between runs: it stays so until the next run frame
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGSTOP if stop else signal.SIGCONT)

    def thaw(self) -> None:
        """SIGCONT the worker's group (before its next run frame)."""
        if self.frozen:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGCONT)
            self.frozen = False

    def signal_kill(self) -> None:
        """Kill the worker now (no waiting; safe from any thread).

        In the namespaces tier the namespace's init is killed, which takes everything in the namespace
        along, and the process the host started is continued (it may be frozen) so that it reaps the init
        and exits: killing the whole group at once could end that process first and leave the init to the
        machine's pid 1 as a zombie."""
        if self.proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            if self.init is not None:
                signal.pidfd_send_signal(self.init, signal.SIGKILL)
                os.killpg(self.proc.pid, signal.SIGCONT)
            else:
                os.killpg(self.proc.pid, signal.SIGKILL)

    def kill(self) -> None:
        """SIGKILL the worker's process group, reap it, close the channel, its /tmp and its cgroups."""
        self.signal_kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        if self.proc.returncode is None:  # the cascade did not end it: the group, at once
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
        kill_group(self.proc.pid)  # anything else left in its group (there should be nothing)
        self.chan.sock.close()
        for fd in (self.tmp, self.init):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.tmp = self.init = None
        if self.group is not None:
            self.group.close()

    def status(self) -> str:
        """How the worker ended, in words (after it ended). In the namespaces tier the started process
        exits with 128 + the signal that killed the worker, as a shell reports it."""
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "stopped responding"
        if self.tier.namespaces and 128 < code < 128 + 65:
            code = 128 - code
        if code < 0:
            try:
                sig = signal.Signals(-code)
            except ValueError:
                return f"was killed by signal {-code}"
            why = {signal.SIGXCPU: " (CPU time limit)", signal.SIGSEGV: " (segmentation fault)",
                   signal.SIGKILL: " (CPU or memory limit, or killed)", signal.SIGSYS: " (forbidden system call)",
                   signal.SIGXFSZ: " (file size limit)"}.get(sig, "")
            return f"was killed by {sig.name}{why}"
        return f"exited with status {code}"
