"""Drop every capability of the calling process for good (root included) and set no_new_privs.

Hand-written with ctypes (prctl, capset) because the stdlib has no binding and the job is a few calls.
Stdlib only: also loaded by the bare worker interpreter.
"""

from __future__ import annotations

import ctypes
import os

SIGKILL = 9  # Linux; the signal module is not imported (the worker's start-up time)
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_VERSION_3 = 0x20080522
# NOROOT, NO_SETUID_FIXUP, KEEP_CAPS, NO_CAP_AMBIENT_RAISE, each with its lock bit: uid 0 gains nothing on exec.
_SECUREBITS = 0x01 | 0x02 | 0x04 | 0x08 | 0x10 | 0x20 | 0x40 | 0x80

_libc = ctypes.CDLL(None, use_errno=True)
_prctl = _libc.prctl
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def prctl(option: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0) -> int:
    """prctl(2); raises OSError on failure."""
    res = _prctl(option, arg2, arg3, arg4, arg5)
    if res < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl({option}): {os.strerror(err)}")
    return int(res)


def die_with_parent(expected_parent: int) -> None:
    """SIGKILL this process when the thread that spawned it exits; exit now if that already happened."""
    prctl(PR_SET_PDEATHSIG, SIGKILL)
    if os.getppid() != expected_parent:
        os._exit(70)


def _last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except OSError:
        return 63


def drop_all() -> None:
    """Set no_new_privs, lock securebits, empty the bounding and ambient sets, clear E/P/I.

    no_new_privs comes first: from then on no exec can give this process or its children more capabilities
    than they hold (setuid bits and file capabilities are ignored, even uid 0 gets none on exec), so the
    steps that need a privilege the caller does not have (CAP_SETPCAP for securebits and the bounding set,
    e.g. under an unprivileged bubblewrap) are skipped: what they would remove can no longer be gained.

    The process stays dumpable: the host reads its I/O counters and opens its /tmp through /proc/<pid>,
    which the kernel allows a host of the same (non-root) uid only for a dumpable process; nothing confined
    can reach /proc or ptrace, and every program the shell execs is dumpable again anyway.
    """
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    try:  # noqa: SIM105 (contextlib is not imported: start-up time)
        prctl(PR_SET_SECUREBITS, _SECUREBITS)
    except OSError:
        pass
    for cap in range(_last_cap() + 1):
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except OSError as exc:
            if exc.errno == 1:  # EPERM: no CAP_SETPCAP (see above)
                break
            if exc.errno != 22:  # EINVAL: cap beyond what the kernel knows
                raise
    try:  # noqa: SIM105 (kernels before 4.3 have no ambient set)
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    except OSError:
        pass
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    if _libc.capset(ctypes.byref(header), data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")


def current() -> dict[str, int]:
    """The capability sets of this process as read from /proc/self/status (for tests and diagnostics)."""
    out: dict[str, int] = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Cap"):
                key, value = line.split(":")
                out[key] = int(value.strip(), 16)
    return out
