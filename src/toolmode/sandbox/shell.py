"""`run_confined`: `/bin/sh -c command` under the sandbox's file-system and network rules.

Writes only in the workspace, no sockets (socketpair only), exec and child processes allowed,
capabilities dropped, scrubbed environment, own session; on timeout the whole process group is killed.
Signals: with Landlock ABI >= 6 confined to the command's own processes; on older kernels signals to
pid <= 0 and to the host are refused, but other processes of the same user can still be signalled by pid.
Every other call that names a process (prlimit, priority, affinity, ...) takes pid 0 only. Tasks and memory
are bounded for the command's processes together (runlimits: a per-run cgroup, else the host samples them).
Used by the `run_shell` builtin in every mode.

Writes only in the workspace, no sockets (socketpair only), exec and child processes allowed,
capabilities dropped, scrubbed environment, own session; on timeout the whole process group is killed.
Signals: with Landlock ABI >= 6 confined to the command's own processes; on older kernels signals to
pid <= 0 and to the host are refused, but other processes of the same user can still be signalled by pid.
Used by the `run_shell` builtin in every mode.

The command gets the same write budget as a `run_code` program (`budget.WriteBudget`, checked every
CHECK_INTERVAL), is bounded by the deadline of the run that called it (from sandboxed code), and is
stopped when that run ends first (`callscope.on_cancel`) or when this process exits (atexit).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .. import callscope
from ..hostenv import environment_refusal
from . import boot, landlock, runlimits
from .budget import WriteBudget
from .spawn import interpreter, kill_group, scrubbed_env
from .spec import SandboxLimits, SandboxUnavailable, UnsafeWorkspace

SHELL_MEMORY_MB = 2048
SHELL_FILE_SIZE_MB = 1024
SHELL_OPEN_FILES = 1024
SHELL_MAX_PROCESSES = 256
STOP_GRACE = 2.0  # the launcher's own kill-and-reap loop takes at most ~1.5 s
CHECK_INTERVAL = 0.1  # how often the write budget, the deadline and cancellation are checked
DEFAULT_MAX_WRITE_MB = SandboxLimits().max_write_mb

_live: set[int] = set()  # process groups of running commands, killed if this process exits first
_live_lock = threading.Lock()


@dataclass
class ShellResult:
    """What a confined command did: exit status (126: sandbox setup failed), capped output, timeout flag."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool


def _cap(data: bytearray, dropped: int) -> str:
    text = data.decode("utf-8", "replace")
    if dropped:
        text += f"\n... [output truncated: {dropped:,} more bytes]"
    return text


def run_confined(
    command: str, *, workspace: Path | str, timeout: float, max_output: int = 100_000,
    allow_env_in_workspace: bool = False, max_write_mb: float | None = None, memory_mb: int = SHELL_MEMORY_MB,
    max_processes: int = SHELL_MAX_PROCESSES,
) -> ShellResult:
    """Run `/bin/sh -c command` confined to `workspace` for at most `timeout` seconds.

    Each of stdout and stderr keeps its first `max_output` bytes (the rest is drained and counted). The
    command is stopped once the workspace's file system grew by `max_write_mb` (default: DEFAULT_MAX_WRITE_MB,
    the same as a run_code program; each new file or directory counts 4 KiB; a note ends stderr), and
    when called from sandboxed code, at the calling run's deadline or when that run ends.
    `memory_mb` and `max_processes` bound the command's processes together (see runlimits); what was
    refused or stopped because of them is said on the last line of stderr.
    Raises SandboxUnavailable when the kernel lacks Landlock (fail closed: never runs unconfined), and
    UnsafeWorkspace when the workspace holds the host's Python environment (unless allowed).
    """
    ws = Path(workspace).resolve()
    if not ws.is_dir():
        raise FileNotFoundError(f"workspace {ws} is not a directory")
    refusal = None if allow_env_in_workspace else environment_refusal(ws)
    if refusal:
        raise UnsafeWorkspace(refusal)
    if landlock.abi_version() < 1:
        raise SandboxUnavailable("run_confined needs Landlock (Linux >= 5.13); this kernel does not have it")
    group = runlimits.create(max_tasks=max_processes, memory_mb=memory_mb)
    try:
        return _run(command, ws, timeout, max_output, memory_mb, max_processes, group,
                    DEFAULT_MAX_WRITE_MB if max_write_mb is None else max_write_mb)
    finally:
        group.close()


def _run(command: str, ws: Path, timeout: float, max_output: int, memory_mb: int, max_processes: int,
         group: runlimits.RunGroup, max_write_mb: float) -> ShellResult:
    cfg = {
        "parent": os.getpid(), "workspace": str(ws), "cpu_seconds": int(timeout) + 1,
        "memory_mb": memory_mb, "file_size_mb": SHELL_FILE_SIZE_MB, "open_files": SHELL_OPEN_FILES,
        "max_processes": max_processes, "cgroups": group.procs_files(),
    }
    env = scrubbed_env(ws, TERM="dumb", TMPDIR=str(ws))
    argv, code_fd = boot.command(interpreter(), "launcher")  # never launcher.py from disk
    argv += [json.dumps(cfg), "/bin/sh", "-c", command]
    left = callscope.remaining_time()
    if left is not None:  # the calling run stops it at its deadline; this is the backstop
        timeout = min(timeout, left + STOP_GRACE)
    budget = WriteBudget(ws, max_write_mb)
    proc = subprocess.Popen(argv, cwd=ws, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, close_fds=True, pass_fds=(code_fd,), start_new_session=True)
    with _live_lock:
        _live.add(proc.pid)
    forget = callscope.on_cancel(lambda: _freeze(proc))
    assert proc.stdout is not None and proc.stderr is not None
    bufs = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    dropped = {proc.stdout: 0, proc.stderr: 0}
    deadline = time.monotonic() + timeout
    timed_out = False
    stopped = ""
    exit_code = -signal.SIGKILL
    with selectors.DefaultSelector() as sel:
        for f in bufs:
            sel.register(f, selectors.EVENT_READ)
        try:
            next_check = time.monotonic() + CHECK_INTERVAL
            while sel.get_map():
                now = time.monotonic()
                left = deadline - now
                if left <= 0:
                    timed_out = True
                    break
                if now >= next_check:
                    next_check = now + CHECK_INTERVAL
                    stopped = _why_stop(budget, group, proc.pid)
                    if stopped:
                        break
                for key, _ in sel.select(min(left, CHECK_INTERVAL)):
                    f = key.fileobj  # type: ignore[assignment]  # one of the pipes registered above
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        sel.unregister(f)
                        continue
                    room = max(0, max_output - len(bufs[f]))  # type: ignore[index]
                    bufs[f] += chunk[:room]  # type: ignore[index]
                    dropped[f] += len(chunk) - min(room, len(chunk))  # type: ignore[index]
            while not timed_out and not stopped:  # output closed: wait for the end, still checking
                try:
                    exit_code = proc.wait(timeout=max(0.01, min(CHECK_INTERVAL, deadline - time.monotonic())))
                    break
                except subprocess.TimeoutExpired:
                    timed_out = time.monotonic() >= deadline
                    stopped = _why_stop(budget, group, proc.pid)
            scope = callscope.current()
            if not stopped and scope is not None and scope.cancelled:  # ended by the cancel itself
                stopped = "the run that called it ended"
            if timed_out or stopped:
                _stop(proc)
        except BaseException:
            _stop(proc)
            raise
        finally:
            forget()
            kill_group(proc.pid)
            with _live_lock:
                _live.discard(proc.pid)
            proc.stdout.close()
            proc.stderr.close()
    stderr = _cap(bufs[proc.stderr], dropped[proc.stderr])
    if stopped:
        stderr += f"\n[toolmode: the command was stopped: {stopped}]"
        exit_code = -signal.SIGKILL
    elif budget.exceeded():  # a command quicker than one check: it ended by itself, over its budget
        stderr += f"\n[toolmode: {budget.message().removeprefix('Error: ')}]"
    elif note := group.events():  # what the run's cgroup refused or killed
        stderr += f"\n[sandbox: {note}]\n"
    return ShellResult(exit_code=exit_code, stdout=_cap(bufs[proc.stdout], dropped[proc.stdout]), stderr=stderr,
                       timed_out=timed_out)


def _why_stop(budget: WriteBudget, group: runlimits.RunGroup, pid: int) -> str:
    """Why the command must stop now ("" to go on): its run ended, its write budget or (where no cgroup
    holds them) its task and memory limits were exceeded."""
    scope = callscope.current()
    if scope is not None and scope.cancelled:
        return "the run that called it ended"
    if budget.exceeded():
        return budget.message().removeprefix("Error: ")
    if group.supervised:
        return group.over(pid) or ""
    return ""


def _freeze(proc: subprocess.Popen[bytes]) -> None:
    """Stop the command at once, from any thread, without waiting: freeze its group, tell the launcher to
    kill its domain. The thread running the command then finishes the job with `_stop`."""
    with contextlib.suppress(OSError):
        for _ in range(3):
            os.killpg(proc.pid, signal.SIGSTOP)
        os.kill(proc.pid, signal.SIGCONT)
        os.kill(proc.pid, signal.SIGTERM)


@atexit.register
def _kill_live() -> None:
    """Nothing confined outlives this process (its daemon threads die without cleaning up)."""
    with _live_lock:
        groups = list(_live)
    for pgid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Freeze the group, ask the launcher to kill and reap its domain, then make sure the group is gone.

    SIGSTOP first: a fork bomb's thousands of runnable processes would otherwise starve the launcher
    (and this process) of CPU; stopped processes neither fork nor run, and SIGKILL still ends them.
    """
    with contextlib.suppress(OSError):
        for _ in range(3):  # a fork in flight when the group is signalled is aborted by the kernel
            os.killpg(proc.pid, signal.SIGSTOP)
        os.kill(proc.pid, signal.SIGCONT)  # the launcher only
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=STOP_GRACE)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        pass
    kill_group(proc.pid)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=1)
