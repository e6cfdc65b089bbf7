"""Entry of the confined shell: `python -I -S -B -c BOOTSTRAP ... <json-config> <argv...>`.

Runs in a fresh bare interpreter (never a fork of the host), started from an in-memory copy of its code
(see boot.py: no file of toolmode is read when it starts). It finishes its world for the tier (namespaces
tier without bubblewrap: `namespaces.enter` builds it; with bubblewrap as root: the device binds are made
read-only), confines itself (rlimits, capabilities, Landlock, and a seccomp filter that still allows exec and
children), tells the host it is ready and waits for its go (meanwhile the host moves it into the run's
cgroups and opens its private /tmp to measure it), then forks the command and stays as its reaper (a child
subreaper): when the command ends, or on SIGTERM from the host's timeout, it SIGKILLs every process left,
repeatedly until none is left (a fork bomb forks while being killed), reaps them all and exits with the
command's status, so nothing is left behind, not even zombies. Any failure before the command starts exits
with status 126 and a message on stderr (fail closed).

kill(-1) reaches only the run's own processes where the run has a PID namespace (namespaces tier) or where
Landlock scopes signals (ABI >= 6, Linux >= 6.12). Elsewhere (landlock tier on an older kernel) the seccomp
filter refuses signals to pid <= 0 and to the host, and the cleanup is left to the host's process-group kill;
there the command can still signal other processes of the same user by explicit pid.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time

import caps  # put in sys.modules by the bootstrap, as confine and namespaces are
import confine
import namespaces

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


def _nproc(tier: str, max_processes: int) -> int:
    """RLIMIT_NPROC counts the tasks of a uid in a user namespace: in the namespaces tier the run's own
    (exact, per run, since Linux 5.14; root is exempt and held by the cgroup), else every task of the
    uid, so what exists now plus the run's share."""
    return max_processes + confine.OWN_TASKS if tier == confine.NAMESPACES else _task_count() + max_processes


def _handshake(ready: int, go: int) -> None:
    """Tell the host the world is built, then wait for its go (it moves this process into the run's cgroups
    first); anything but the go byte ends the run before the command starts."""
    os.write(ready, b"R")
    os.close(ready)
    if os.read(go, 1) != b"G":
        raise OSError("the host did not let the command start")
    os.close(go)


def main() -> None:
    """Confine this process as described by argv[1] (JSON), run argv[2:], clean up, exit with its status."""
    cfg = json.loads(sys.argv[1])
    argv = sys.argv[2:]
    tier = cfg["tier"]
    try:
        if cfg["parent"]:
            caps.die_with_parent(cfg["parent"])
        if tier.get("builder") == "unshare":
            namespaces.enter(tier["plan"])
        elif tier.get("builder") == "bwrap":
            namespaces.seal_devices(tier.get("seal", []))
            namespaces.start_init()
        os.chdir(cfg["workspace"])
        confine.set_limits(cpu_soft=cfg["cpu_seconds"], cpu_hard=cfg["cpu_seconds"] + 1,
                           memory_mb=cfg["memory_mb"], file_size_mb=cfg["file_size_mb"],
                           open_files=cfg["open_files"], nproc=_nproc(tier["name"], cfg["max_processes"]))
        program = bytes.fromhex(cfg["seccomp"]) if cfg.get("seccomp") else None  # built by the host
        applied = confine.lock_down(cfg["workspace"], worker=False, tier=tier["name"], protect=(cfg["host"],),
                                    program=program)
        caps.prctl(PR_SET_CHILD_SUBREAPER, 1)
        confine.lower_priority()
        _handshake(cfg["ready_fd"], cfg["go_fd"])
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
    # kill(-1) is confined to the run's processes by its PID namespace or by Landlock's signal scoping
    scoped = tier["name"] == confine.NAMESPACES or int(applied.get("landlock_abi", 0)) >= 6
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
