"""The confinement recipe, applied by a process to itself: rlimits, capabilities, Landlock, seccomp.

Used by the code worker (`confine_worker`) and by the shell launcher (`confine_shell`). Stdlib only and
importable both as `toolmode.sandbox.confine` and as a top-level module inside the bare worker interpreter.
"""

from __future__ import annotations

import os
import resource
import sys

try:
    from . import caps, landlock, seccomp
except ImportError:  # loaded as a top-level module by the bare worker interpreter (python -I -S)
    import caps  # type: ignore[no-redef]
    import landlock  # type: ignore[no-redef]
    import seccomp  # type: ignore[no-redef]

MiB = 1024 * 1024
_DEV_RW = ["/dev/null"]
_DEV_RO = ["/dev/urandom", "/dev/random", "/dev/zero"]


def _python_paths() -> list[str]:
    """The interpreter's installation (binary, libpython, stdlib, lib-dynload)."""
    paths = {sys.base_prefix, sys.base_exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    return sorted(p for p in paths if p and p != "/")


def worker_rules(workspace: str) -> list[tuple[str, int]]:
    """Read-only: the interpreter, shared libraries, time zones; read-write: the workspace and /dev/null."""
    ro = _python_paths() + ["/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/share/zoneinfo",
                            "/etc/localtime", "/etc/ld.so.cache"] + _DEV_RO
    rules = [(p, landlock.READ) for p in ro]
    rules += [(p, landlock.READ | landlock.WRITE_FILE | landlock.TRUNCATE) for p in _DEV_RW]
    rules.append((workspace, landlock.handled_fs(7) & ~landlock.EXECUTE))
    return rules


def shell_rules(workspace: str) -> list[tuple[str, int]]:
    """Read and execute: the system directories and the interpreter; read-write: the workspace."""
    rx = landlock.READ | landlock.EXECUTE
    ro_dirs = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc/alternatives"]
    etc = ["/etc/ld.so.cache", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime",
           "/etc/mime.types", "/etc/magic"]
    rules = [(p, rx) for p in ro_dirs + _python_paths()] + [(p, landlock.READ) for p in etc + _DEV_RO]
    rules += [(p, landlock.READ | landlock.WRITE_FILE | landlock.TRUNCATE) for p in _DEV_RW]
    rules.append((workspace, landlock.handled_fs(7)))
    return rules


def set_limits(*, cpu_soft: int | None, cpu_hard: int | None, memory_mb: int | None, file_size_mb: int | None,
               open_files: int | None, nproc: int | None = None) -> None:
    """Lower this process's rlimits (hard limits included, so the program cannot raise them again)."""
    def lower(which: int, soft: int, hard: int | None = None) -> None:
        cur_soft, cur_hard = resource.getrlimit(which)
        hard = soft if hard is None else hard
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
        resource.setrlimit(which, (min(soft, hard), hard))

    lower(resource.RLIMIT_CORE, 0)
    if cpu_soft is not None:
        lower(resource.RLIMIT_CPU, cpu_soft, cpu_hard)
    if memory_mb is not None:
        lower(resource.RLIMIT_AS, memory_mb * MiB)
    if file_size_mb is not None:
        lower(resource.RLIMIT_FSIZE, file_size_mb * MiB)
    if open_files is not None:
        lower(resource.RLIMIT_NOFILE, open_files)
    if nproc is not None:
        lower(resource.RLIMIT_NPROC, nproc)


def join_cgroups(procs_files: list[str]) -> None:
    """Move this process into the run's cgroups (before lock_down: afterwards neither /sys nor the
    capability to write there is left). Raises OSError; the caller fails closed."""
    for path in procs_files:
        with open(path, "w") as f:
            f.write("0")


def lock_down(workspace: str, *, worker: bool, protect: tuple[int, ...] = ()) -> dict[str, object]:
    """Capabilities, Landlock and seccomp for this process; returns what was applied (for the policy line).

    Order matters: Landlock needs no_new_privs (set while dropping capabilities); seccomp comes last so
    the filter need not allow the setup calls. `protect`: pids the shell may never signal (the host);
    they matter only where Landlock cannot scope signals (ABI < 6).
    """
    abi = landlock.abi_version()
    if abi < 1:
        raise OSError("Landlock is not available")
    caps.drop_all()
    landlock.restrict(worker_rules(workspace) if worker else shell_rules(workspace), abi=abi)
    seccomp.install(seccomp.build_filter(worker=worker, pid=os.getpid(), scoped_signals=abi >= 6, protect=protect))
    return {"landlock_abi": abi, "seccomp": True, "caps": "dropped"}


def lock_down_partial(*, worker: bool) -> dict[str, object]:
    """Capabilities and seccomp only (inside bubblewrap, which supplies the file-system view)."""
    caps.drop_all()
    seccomp.install(seccomp.build_filter(worker=worker, pid=os.getpid()))
    return {"landlock_abi": 0, "seccomp": True, "caps": "dropped"}
