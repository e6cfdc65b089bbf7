"""Entry of the confined shell: `python -I -S -B -c BOOTSTRAP ... <json-config> <argv...>`.

Runs in a fresh bare interpreter (never a fork of the host), started from an in-memory copy of its code
(see boot.py: no file of toolmode is read when it starts), and confines itself: rlimits, capabilities,
Landlock, and a seccomp filter that still allows exec and children. Then it forks the command and stays
as its reaper (a child subreaper): when the command ends, or on SIGTERM from the host's timeout, it
SIGKILLs every process left in its Landlock domain (kill(-1) reaches only that domain's processes: Landlock
scopes signals), repeatedly until none is left (a fork bomb forks while being killed), reaps them all and
exits with the command's status, so nothing is left behind, not even zombies. Any failure before the command
starts exits with status 126 and a message on stderr (fail closed).

Where Landlock cannot scope signals (ABI < 6, Linux < 6.12) the seccomp filter refuses signals to pid <= 0
(`kill -9 -1`, process groups) and to the host, so the cleanup is left to the host's process-group kill;
there the command can still signal other processes of the same user by explicit pid.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time

import caps  # put in sys.modules by the bootstrap, as confine is
import confine

PR_SET_CHILD_SUBREAPER = 36
CLEANUP_SECONDS = 1.5  # how long the kill-and-reap loop may take; the host kills the process group after


class _Stop(Exception):
    pass


def _task_count() -> int:
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[1])
    except (OSError, ValueError, IndexError):
        return 4096


def _on_term(signum: int, frame: object) -> None:
    raise _Stop


def main() -> None:
    """Confine this process as described by argv[1] (JSON), run argv[2:], clean up, exit with its status."""
    cfg = json.loads(sys.argv[1])
    argv = sys.argv[2:]
    try:
        caps.die_with_parent(cfg["parent"])
        confine.join_cgroups(cfg.get("cgroups", []))  # the run's process and memory limits (runlimits.py)
        # RLIMIT_NPROC counts all tasks of the uid, so allow what exists now plus a margin for the command.
        confine.set_limits(cpu_soft=cfg["cpu_seconds"], cpu_hard=cfg["cpu_seconds"] + 1,
                           memory_mb=cfg["memory_mb"], file_size_mb=cfg["file_size_mb"],
                           open_files=cfg["open_files"], nproc=_task_count() + cfg["max_processes"])
        applied = confine.lock_down(cfg["workspace"], worker=False, protect=(cfg["parent"],))
        caps.prctl(PR_SET_CHILD_SUBREAPER, 1)
    except Exception as exc:  # fail closed: never run the command unconfined
        os.write(2, f"sandbox setup failed: {type(exc).__name__}: {exc}\n".encode())
        os._exit(126)
    signal.signal(signal.SIGTERM, _on_term)
    child = os.fork()
    if child == 0:
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            caps.prctl(caps.PR_SET_PDEATHSIG, signal.SIGKILL)
            os.execv(argv[0], argv)  # the environment is the scrubbed one the host started us with
        except BaseException as exc:
            os.write(2, f"cannot run {argv[0]}: {exc}\n".encode())
        os._exit(127)
    code = 128 + signal.SIGKILL
    try:
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == child:
                code = os.waitstatus_to_exitcode(status)
                code = 128 - code if code < 0 else code
                break
    except (_Stop, ChildProcessError):
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    scoped = int(applied.get("landlock_abi", 0)) >= 6  # only then is kill(-1) confined to our own domain
    deadline = time.monotonic() + CLEANUP_SECONDS
    while True:  # kill and reap until no descendant is left (we are their subreaper) or time is up
        if scoped:
            with contextlib.suppress(OSError):
                os.kill(-1, signal.SIGKILL)
        try:
            while os.waitpid(-1, os.WNOHANG)[0] != 0:
                pass
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if not scoped or time.monotonic() > deadline:
            break  # without scoped signals, the host's process-group kill does the rest
        time.sleep(0.005)
    os._exit(code)


if __name__ == "__main__":
    main()
