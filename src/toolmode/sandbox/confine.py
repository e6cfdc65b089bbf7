"""The confinement recipe, applied by a process to itself: rlimits, capabilities, Landlock, seccomp.

Used by the code worker and by the shell launcher, in every tier: in the namespaces tier it runs inside the
view that bubblewrap or `namespaces.enter` built (Landlock and seccomp are the second and third walls there);
in the landlock tier it is all there is, with the seccomp filter's metadata refusals added. The Landlock rules
come from the same list as the namespaces tier's mounts (`view.entries`), so the two walls agree.
Stdlib only and importable both as `toolmode.sandbox.confine` and as a top-level module inside the bare
worker interpreter.
"""

from __future__ import annotations

import os
import resource

try:
    from . import caps, landlock, seccomp, view
except ImportError:  # loaded as a top-level module by the bare worker interpreter (python -I -S)
    import caps  # type: ignore[no-redef]
    import landlock  # type: ignore[no-redef]
    import seccomp  # type: ignore[no-redef]
    import view  # type: ignore[no-redef]

MiB = 1024 * 1024
NAMESPACES = "namespaces"
LANDLOCK = "landlock"
OWN_TASKS = 2  # toolmode's own tasks in a run's user namespace: the namespace's init, and the waiter (unshare)


def rules(workspace: str, *, shell: bool, tmp: bool) -> list[tuple[str, int]]:
    """Landlock rules: (path, rights). Read (the shell also executes) what `view.entries` lists; device nodes
    read (and /dev/null written); everything in the workspace (no execute for the worker); the same for the
    private /tmp when the tier made one (`tmp`)."""
    kinds = {view.RO: landlock.READ, view.RX: landlock.READ | landlock.EXECUTE, view.DEV: landlock.READ,
             view.DEV_RW: landlock.READ | landlock.WRITE_FILE | landlock.TRUNCATE}
    writable = landlock.handled_fs(7) if shell else landlock.handled_fs(7) & ~landlock.EXECUTE
    found = [(path, kinds[kind]) for path, kind in view.entries(shell=shell)]
    found.append((workspace, writable))
    if tmp:
        found.append((view.TMP, writable))
    return found


NICE = 10  # the confined processes' niceness: under CPU contention the host's checks (budget, limits) go first


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


def lower_priority() -> None:
    """Lower this process's priority to NICE (it cannot raise it again: RLIMIT_NICE stays, CAP_SYS_NICE is
    gone). Called last before `ready`, so the start-up itself competes for a CPU at the host's priority (on a
    busy machine a worker started at nice 10 waited several times its own CPU time to be ready) while the
    model's program, and every process it starts, runs below the host's checks."""
    if os.getpriority(os.PRIO_PROCESS, 0) < NICE:
        os.setpriority(os.PRIO_PROCESS, 0, NICE)


def seccomp_filter(*, worker: bool, tier: str, pid: int, abi: int, protect: tuple[int, ...] = ()) -> bytes:
    """The seccomp program for a confined process: the worker's (`pid`: its own, as it sees itself) or the
    shell's, for `tier`, on a kernel of Landlock ABI `abi`. Built by the host ahead of time (the same for every
    worker of a tier: 1 ms of CPU a spawn saves) or by the process itself."""
    namespaces = tier == NAMESPACES
    return seccomp.build_filter(worker=worker, pid=pid, scoped_signals=abi >= 6 or namespaces, protect=protect,
                                metadata=not namespaces)


def lock_down(workspace: str, *, worker: bool, tier: str, protect: tuple[int, ...] = (),
              program: bytes | None = None) -> dict[str, object]:
    """Capabilities, Landlock and seccomp for this process; returns what was applied (for the policy line).

    Order matters: Landlock needs no_new_privs (set while dropping capabilities); seccomp comes last so
    the filter need not allow the setup calls. In the landlock tier Landlock is required; in the namespaces
    tier it is added where the kernel has it. `protect`: pids the shell may never signal (the host); they
    matter only where neither Landlock (ABI < 6) nor a PID namespace confines signals. `program`: the seccomp
    program built by the host (`seccomp_filter`), else built here.
    """
    namespaces = tier == NAMESPACES
    abi = landlock.abi_version()
    if abi < 1 and not namespaces:
        raise OSError("Landlock is not available")
    caps.drop_all()
    if abi >= 1:
        landlock.restrict(rules(workspace, shell=not worker, tmp=namespaces), abi=abi)
    if program is None:
        program = seccomp_filter(worker=worker, tier=tier, pid=os.getpid(), abi=abi, protect=protect)
    seccomp.install(program)
    return {"landlock_abi": abi, "seccomp": True, "caps": "dropped", "tier": tier}
