"""`run_confined`: `/bin/sh -c command` under the sandbox's tier (see tiers.py), used by `run_shell`.

Writes only in the workspace (and, in the namespaces tier, a private /tmp), no sockets (socketpair only),
exec and child processes allowed, capabilities dropped, scrubbed environment, own session. In the namespaces
tier the command has its own user, mount, IPC, PID, UTS, network and cgroup namespaces: it sees only the
system's programs, the workspace and its /tmp; signals, SysV IPC and the process list stay inside; when the
launcher ends, the namespace and everything in it ends. In the landlock tier: Landlock + seccomp, signals
confined to the command's own processes with Landlock ABI >= 6 (older kernels: signals to pid <= 0 and to the
host are refused, other processes of the same user can still be signalled by pid).

The command gets the same write budget as a `run_code` program (budget.py: what the command's own processes
wrote, plus its /tmp), checked every 10 ms, 1 ms near the limit (`WriteBudget.check_interval`); its tasks
and memory are held by a per-run cgroup where one can be made, or sampled (usage.py). It is bounded by the
deadline of the run that called it (from sandboxed code), whose remaining write budget also bounds it and is
charged with what it wrote, and is stopped when that run ends first (`callscope.on_cancel`) or when this
process exits (atexit).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import selectors
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .. import callscope
from ..hostenv import environment_refusal
from . import boot, runlimits, tiers, usage, view
from .budget import MiB, WriteBudget
from .spawn import interpreter, kill_group, scrubbed_env
from .spec import SandboxLimits, SandboxUnavailable, UnsafeWorkspace

SHELL_MEMORY_MB = 2048
SHELL_FILE_SIZE_MB = 1024
SHELL_OPEN_FILES = 1024
SHELL_MAX_PROCESSES = 256
STOP_GRACE = 2.0  # the launcher's own kill-and-reap loop takes at most ~1.5 s
CHECK_INTERVAL = 0.1  # how often the limits, the deadline and cancellation are checked (the write budget: budget.py)
READY_TIMEOUT = 30.0  # the launcher builds its world and confines itself before this
DEFAULT_MAX_WRITE_MB = SandboxLimits().max_write_mb

_live: set[int] = set()  # process groups of running commands, killed if this process exits first
_live_lock = threading.Lock()


@dataclass
class ShellResult:
    """What a confined command did: exit status (126: sandbox setup failed), capped output, timeout flag.
    `written`: bytes charged to its write budget."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool
    written: int = 0


def _cap(data: bytearray, dropped: int) -> str:
    text = data.decode("utf-8", "replace")
    if dropped:
        text += f"\n... [output truncated: {dropped:,} more bytes]"
    return text


def run_confined(
    command: str, *, workspace: Path | str, timeout: float, max_output: int = 100_000,
    allow_env_in_workspace: bool = False, max_write_mb: float | None = None, memory_mb: int = SHELL_MEMORY_MB,
    max_processes: int = SHELL_MAX_PROCESSES, policy: str | None = None, tier: tiers.Tier | None = None,
) -> ShellResult:
    """Run `/bin/sh -c command` confined to `workspace` for at most `timeout` seconds.

    Each of stdout and stderr keeps its first `max_output` bytes (the rest is drained and counted). The
    command is stopped once its processes wrote `max_write_mb` (default: DEFAULT_MAX_WRITE_MB, the same as a
    run_code program; a note ends stderr), and when called from sandboxed code, at the calling run's
    deadline, when that run's own budget is used up, or when that run ends.
    `memory_mb` and `max_processes` bound the command's processes together (see runlimits); what was
    refused or stopped because of them is said on the last line of stderr. `policy` chooses the tier
    (tiers.POLICIES; default tiers.DEFAULT_POLICY, "auto"); "none" is refused: the shell is never unconfined.
    Raises SandboxUnavailable when no tier can be built (fail closed), and UnsafeWorkspace when the
    workspace holds the host's Python environment (unless allowed).
    """
    ws = Path(workspace).resolve()
    if not ws.is_dir():
        raise FileNotFoundError(f"workspace {ws} is not a directory")
    refusal = None if allow_env_in_workspace else environment_refusal(ws)
    if refusal:
        raise UnsafeWorkspace(refusal)
    tier = tier or tiers.resolve(policy or tiers.DEFAULT_POLICY)
    if tier.name == "none":
        raise SandboxUnavailable("run_confined never runs a command unconfined; choose a sandbox policy other than 'none'")
    limit = int((DEFAULT_MAX_WRITE_MB if max_write_mb is None else max_write_mb) * MiB)
    scope = callscope.current()
    if scope is not None and scope.write_left is not None:  # called from a run: its remaining budget
        limit = min(limit, max(0, scope.write_left()))
    group = runlimits.create(max_tasks=max_processes, memory_mb=memory_mb)
    try:
        result = _run(command, ws, timeout, max_output, memory_mb, max_processes, group, limit, tier)
    finally:
        group.close()
    if scope is not None:
        scope.charge(result.written)
    return result


def _start(proc: subprocess.Popen[bytes], ready: int, go: int, tier: tiers.Tier, group: runlimits.RunGroup,
           deadline: float, private_tmp: bool) -> tuple[int | None, int | None, int | None, str]:
    """Wait for the launcher's ready byte, move it into the run's cgroups, open its /tmp, let it go.

    Returns (the launcher's pid as seen here, a pidfd of the namespace's init, a descriptor of the launcher's
    /tmp, why it cannot run): the pid is None when the launcher ended before it was ready (its stderr says
    why) or could not be set up (`why`)."""
    try:
        scope = callscope.current()
        while not select.select([ready], [], [], max(0.0, min(deadline - time.monotonic(), CHECK_INTERVAL)))[0]:
            if time.monotonic() >= deadline:
                return None, None, None, "the sandbox did not start in time"
            if scope is not None and scope.cancelled:
                return None, None, None, "the run that called it ended"
        if os.read(ready, 1) != b"R":
            return None, None, None, ""
        pid = usage.in_namespace(proc.pid, 2) if tier.namespaces else proc.pid
        init = usage.in_namespace(proc.pid, 1) if tier.namespaces else None
        if pid is None or (tier.namespaces and init is None):
            return None, None, None, "the sandbox's processes could not be found"
        init_fd = tmp = None
        try:
            if group.dirs:
                group.add(pid)
            if init is not None:
                init_fd = os.pidfd_open(init)
            if private_tmp:
                tmp = os.open(f"/proc/{pid}/root{view.TMP}", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            for fd in (init_fd, tmp):
                if fd is not None:
                    os.close(fd)
            return None, None, None, f"the run could not be set up: {exc}"
        os.write(go, b"G")
        return pid, init_fd, tmp, ""
    finally:
        os.close(ready)
        os.close(go)


def _run(command: str, ws: Path, timeout: float, max_output: int, memory_mb: int, max_processes: int,
         group: runlimits.RunGroup, limit: int, tier: tiers.Tier) -> ShellResult:
    plan = view.plan(str(ws), shell=True, tmp_bytes=max(limit, MiB)) if tier.namespaces else []
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    cfg = {
        "parent": 0 if tier.builder == "bwrap" else os.getpid(), "host": os.getpid(), "workspace": str(ws),
        "cpu_seconds": int(timeout) + 1, "memory_mb": memory_mb, "file_size_mb": SHELL_FILE_SIZE_MB,
        "open_files": SHELL_OPEN_FILES, "max_processes": max_processes, "tier": tiers.child_config(tier, plan),
        "ready_fd": ready_w, "go_fd": go_r,
        "seccomp": tiers.seccomp_program(worker=False, tier=tier, pid=0, protect=(os.getpid(),)),
    }
    env = scrubbed_env(ws, TERM="dumb", TMPDIR=view.TMP if view.has_private_tmp(plan) else str(ws))
    argv, code_fd = boot.command(interpreter(), "launcher")  # never launcher.py from disk
    argv += [json.dumps(cfg), "/bin/sh", "-c", command]
    if tier.builder == "bwrap":
        argv = tiers.bwrap_argv(plan, str(ws)) + argv
    left = callscope.remaining_time()
    if left is not None:  # the calling run stops it at its deadline; this is the backstop
        timeout = min(timeout, left + STOP_GRACE)
    deadline = time.monotonic() + timeout
    try:
        proc = subprocess.Popen(argv, cwd=ws, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, close_fds=True, pass_fds=(code_fd, ready_w, go_r),
                                start_new_session=True)
    except BaseException:
        for fd in (ready_r, go_w):
            os.close(fd)
        raise
    finally:
        os.close(ready_w)
        os.close(go_r)
    with _live_lock:
        _live.add(proc.pid)
    init: list[int | None] = [None]  # a pidfd of the namespace's init, once known
    forget = callscope.on_cancel(lambda: _freeze(proc, init[0]))
    assert proc.stdout is not None and proc.stderr is not None
    bufs = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    dropped = {proc.stdout: 0, proc.stderr: 0}
    timed_out = False
    stopped = ""
    exit_code = -signal.SIGKILL
    tmp = None
    budget: WriteBudget | None = None
    over = ""
    pidfd = os.pidfd_open(proc.pid)
    try:
        with selectors.DefaultSelector() as sel:
            for f in bufs:
                sel.register(f, selectors.EVENT_READ)
            sel.register(pidfd, selectors.EVENT_READ)
            pid, init[0], tmp, why = _start(proc, ready_r, go_w, tier, group,
                                            min(deadline, time.monotonic() + READY_TIMEOUT), view.has_private_tmp(plan))
            if pid is not None:
                budget = WriteBudget(limit / MiB, written=lambda: _written(proc.pid), tmp=tmp, workspace=ws)
            elif why:
                stopped = why
            pipes, exited = 2, False
            next_check = time.monotonic()
            while not stopped and (pipes or not exited):
                now = time.monotonic()
                if now >= deadline:
                    timed_out = True
                    break
                if now >= next_check:
                    stopped = _why_stop(budget, group, proc.pid, pid)
                    if stopped:
                        break
                    checked = time.monotonic()
                    next_check = checked + (budget.check_interval(checked - now) if budget is not None
                                            else CHECK_INTERVAL)
                for key, _ in sel.select(max(0.0, min(deadline, next_check) - time.monotonic())):
                    if key.fd == pidfd:
                        exited = True
                        sel.unregister(pidfd)
                        with contextlib.suppress(OSError):  # what is left holds the output open: garbage
                            os.killpg(proc.pid, signal.SIGKILL)
                        continue
                    f = key.fileobj  # type: ignore[assignment]  # one of the pipes registered above
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        sel.unregister(f)
                        pipes -= 1
                        continue
                    room = max(0, max_output - len(bufs[f]))  # type: ignore[index]
                    bufs[f] += chunk[:room]  # type: ignore[index]
                    dropped[f] += len(chunk) - min(room, len(chunk))  # type: ignore[index]
            scope = callscope.current()
            if not stopped and scope is not None and scope.cancelled:  # ended by the cancel itself
                stopped = "the run that called it ended"
            if timed_out or stopped:
                _stop(proc, init[0])
            else:
                # Ended by itself: its top process is a zombie until reaped, and its counters hold every
                # process of the run (each reaped into its parent): the last reading, taken before reaping.
                os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
                if budget is not None and budget.exceeded():  # quicker than one check: it ended by itself
                    over = budget.message().removeprefix("Error: ")
                exit_code = proc.wait()
    except BaseException:
        _stop(proc, init[0])
        raise
    finally:
        forget()
        kill_group(proc.pid)
        with _live_lock:
            _live.discard(proc.pid)
        proc.stdout.close()
        proc.stderr.close()
        for open_fd in (pidfd, tmp, init[0]):
            if open_fd is not None:
                os.close(open_fd)
    stderr = _cap(bufs[proc.stderr], dropped[proc.stderr])
    if stopped:
        stderr += f"\n[toolmode: the command was stopped: {stopped}]"
        exit_code = -signal.SIGKILL
    elif over:
        stderr += f"\n[toolmode: {over}]"
    elif note := group.events():  # what the run's cgroup refused or killed
        stderr += f"\n[sandbox: {note}]\n"
    return ShellResult(exit_code=exit_code, stdout=_cap(bufs[proc.stdout], dropped[proc.stdout]), stderr=stderr,
                       timed_out=timed_out, written=budget.last_used if budget is not None else 0)


def _written(root: int) -> int | None:
    """What the processes of the run rooted at `root` wrote (None when none of them could be read)."""
    sample = usage.sample(root, tree=True, status=False)
    return sample.written if sample.processes else None


def _why_stop(budget: WriteBudget | None, group: runlimits.RunGroup, pgid: int, launcher: int | None) -> str:
    """Why the command must stop now ("" to go on): its run ended, its write budget or (where no cgroup
    holds them) its task and memory limits were exceeded. The budget reads the whole tree under the process
    this host started; tasks and memory are those of the launcher and what it started (bubblewrap, the
    waiter and the namespace's init are toolmode's own)."""
    scope = callscope.current()
    if scope is not None and scope.cancelled:
        return "the run that called it ended"
    if budget is not None and budget.exceeded(hold=lambda stop: _signal_group(pgid, stop)):
        return budget.message().removeprefix("Error: ")
    if group.supervised and launcher is not None:
        return group.over(usage.sample(launcher)) or ""
    return ""


def _signal_group(pgid: int, stop: bool) -> None:
    if pgid <= 0:  # never this process's own group
        return
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGSTOP if stop else signal.SIGCONT)


def _freeze(proc: subprocess.Popen[bytes], init: int | None) -> None:
    """Stop the command at once, from any thread, without waiting: freeze its group and end what runs in it
    (the namespace's init, which takes the namespace along; else the launcher is told to kill its domain).
    The thread running the command then finishes the job with `_stop`."""
    with contextlib.suppress(OSError):
        for _ in range(3):  # a fork in flight when the group is signalled is aborted by the kernel
            os.killpg(proc.pid, signal.SIGSTOP)
        if init is not None:
            signal.pidfd_send_signal(init, signal.SIGKILL)
        os.kill(proc.pid, signal.SIGCONT)  # the launcher (or the waiter that reaps the init) only
        if init is None:
            os.kill(proc.pid, signal.SIGTERM)


@atexit.register
def _kill_live() -> None:
    """Nothing confined outlives this process (its daemon threads die without cleaning up)."""
    with _live_lock:
        groups = list(_live)
    for pgid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


def _stop(proc: subprocess.Popen[bytes], init: int | None) -> None:
    """End the command and everything it started, leaving no zombie behind.

    SIGSTOP first: a fork bomb's thousands of runnable processes would otherwise starve the killer (and
    this process) of CPU; stopped processes neither fork nor run, and SIGKILL still ends them. Namespaces tier:
    the namespace's init is killed, the kernel kills everything in the namespace with it, and the process this
    host started (bubblewrap or the waiter) reaps it and exits. Landlock tier: the launcher, a subreaper of
    every process of the command, kills and reaps them (SIGTERM). Then whatever is left in the group, which
    cannot be left (setsid and setpgid are refused), is killed.
    """
    _freeze(proc, init)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=STOP_GRACE)
    kill_group(proc.pid)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=1)


def describe_tier(policy: str | None = None) -> str:
    """The line printed at the start of a run that offers run_shell: the tier its commands run in here."""
    try:
        tier = tiers.resolve(policy or tiers.DEFAULT_POLICY)
    except SandboxUnavailable as exc:
        return f"run_shell sandbox: none can be built, every command is refused ({exc})"
    return f"run_shell sandbox: {tier.describe()}, caps dropped, no network"


def _probe_tier(tier: tiers.Tier) -> tuple[bool, str]:
    """Whether `true` runs through the launcher on `tier` here, and if not, what it said."""
    with tempfile.TemporaryDirectory(prefix="toolmode-probe-") as ws:
        res = run_confined("true", workspace=ws, timeout=30, tier=tier)
    return res.exit_code == 0, res.stderr.strip()[-300:]


tiers.set_launcher_probe(_probe_tier)
