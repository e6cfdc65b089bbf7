"""`run_confined`: `/bin/sh -c command` under the sandbox's file-system and network rules.

Writes only in the workspace, no sockets (socketpair only), exec and child processes allowed,
capabilities dropped, scrubbed environment, own session; on timeout the whole process group is killed.
Signals: with Landlock ABI >= 6 confined to the command's own processes; on older kernels signals to
pid <= 0 and to the host are refused, but other processes of the same user can still be signalled by pid.
Every other call that names a process (prlimit, priority, affinity, ...) takes pid 0 only. Tasks and memory
are bounded for the command's processes together (runlimits: a per-run cgroup, else the host samples them).
Used by the `run_shell` builtin in every mode.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..hostenv import environment_refusal
from . import boot, landlock, runlimits
from .spawn import interpreter, kill_group, scrubbed_env
from .spec import SandboxUnavailable, UnsafeWorkspace

SHELL_MEMORY_MB = 2048
SHELL_FILE_SIZE_MB = 1024
SHELL_OPEN_FILES = 1024
SHELL_MAX_PROCESSES = 256
STOP_GRACE = 2.0  # the launcher's own kill-and-reap loop takes at most ~1.5 s


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
    allow_env_in_workspace: bool = False, memory_mb: int = SHELL_MEMORY_MB, max_processes: int = SHELL_MAX_PROCESSES,
) -> ShellResult:
    """Run `/bin/sh -c command` confined to `workspace` for at most `timeout` seconds.

    Each of stdout and stderr keeps its first `max_output` bytes (the rest is drained and counted).
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
        return _run(command, ws, timeout, max_output, memory_mb, max_processes, group)
    finally:
        group.close()


def _run(command: str, ws: Path, timeout: float, max_output: int, memory_mb: int, max_processes: int,
         group: runlimits.RunGroup) -> ShellResult:
    cfg = {
        "parent": os.getpid(), "workspace": str(ws), "cpu_seconds": int(timeout) + 1,
        "memory_mb": memory_mb, "file_size_mb": SHELL_FILE_SIZE_MB, "open_files": SHELL_OPEN_FILES,
        "max_processes": max_processes, "cgroups": group.procs_files(),
    }
    env = scrubbed_env(ws, TERM="dumb", TMPDIR=str(ws))
    argv, code_fd = boot.command(interpreter(), "launcher")  # never launcher.py from disk
    argv += [json.dumps(cfg), "/bin/sh", "-c", command]
    proc = subprocess.Popen(argv, cwd=ws, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, close_fds=True, pass_fds=(code_fd,), start_new_session=True)
    assert proc.stdout is not None and proc.stderr is not None
    bufs = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    dropped = {proc.stdout: 0, proc.stderr: 0}
    deadline = time.monotonic() + timeout
    timed_out = False
    stopped: str | None = None  # the supervisor's reason, where no cgroup holds the limits
    wake = runlimits.SAMPLE_INTERVAL if group.supervised else 0.5
    next_sample = time.monotonic() + runlimits.SAMPLE_INTERVAL
    exit_code = -signal.SIGKILL
    with selectors.DefaultSelector() as sel:
        for f in bufs:
            sel.register(f, selectors.EVENT_READ)
        try:
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                if group.supervised and time.monotonic() >= next_sample:
                    stopped = group.over(proc.pid)
                    if stopped:
                        break
                    next_sample = time.monotonic() + runlimits.SAMPLE_INTERVAL
                for key, _ in sel.select(min(left, wake)):
                    f = key.fileobj
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        sel.unregister(f)
                        continue
                    room = max(0, max_output - len(bufs[f]))  # type: ignore[index]
                    bufs[f] += chunk[:room]  # type: ignore[index]
                    dropped[f] += len(chunk) - min(room, len(chunk))  # type: ignore[index]
            if not timed_out and not stopped:
                try:
                    exit_code = proc.wait(timeout=max(0.01, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    timed_out = True
            if timed_out or stopped:
                _stop(proc)
        except BaseException:
            _stop(proc)
            raise
        finally:
            kill_group(proc.pid)
            proc.stdout.close()
            proc.stderr.close()
    note = f"stopped: {stopped}" if stopped else group.events()
    stderr = _cap(bufs[proc.stderr], dropped[proc.stderr]) + (f"\n[sandbox: {note}]\n" if note else "")
    return ShellResult(exit_code=exit_code, stdout=_cap(bufs[proc.stdout], dropped[proc.stdout]), stderr=stderr,
                       timed_out=timed_out)


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
