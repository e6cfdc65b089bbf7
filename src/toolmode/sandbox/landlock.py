"""Landlock bindings (ctypes): restrict the calling process's file-system and TCP access, ABI-aware.

Hand-written because no well-kept package covers Landlock; it is three syscalls and two small structs.
Stdlib only: this module is also loaded by the bare worker interpreter (python -I -S).
"""

from __future__ import annotations

import ctypes
import os

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

READ = READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the only rights a rule on a file may carry


class LandlockError(OSError):
    """Landlock is missing or refused the ruleset."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long


def _call(*args: object) -> int:
    res = _syscall(*args)
    if res < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, os.strerror(err))
    return int(res)


def abi_version() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock is unavailable (or not x86_64 Linux)."""
    if os.uname().sysname != "Linux" or os.uname().machine != "x86_64":
        return 0
    res = _syscall(ctypes.c_long(_SYS_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return int(res) if res > 0 else 0


def handled_fs(abi: int) -> int:
    """All file-system rights the given ABI knows (every one of them is denied unless a rule grants it)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def restrict(rules: list[tuple[str, int]], *, abi: int, deny_tcp: bool = True, scope: bool = True) -> None:
    """Restrict this process (and its future children) to `rules`: (path, rights) pairs.

    Everything the ABI can handle and no rule grants is denied: all TCP bind/connect (ABI >= 4) when
    `deny_tcp`, and abstract unix sockets and signals to processes outside the domain (ABI >= 6) when
    `scope`. Missing paths are skipped. The caller must have set no_new_privs (or hold CAP_SYS_ADMIN).
    """
    if abi < 1:
        raise LandlockError(0, "Landlock is not available in this kernel")
    fs = handled_fs(abi)
    attr = _RulesetAttr(fs, NET_BIND_TCP | NET_CONNECT_TCP if (deny_tcp and abi >= 4) else 0,
                        SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if (scope and abi >= 6) else 0)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    ruleset = _call(ctypes.c_long(_SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    try:
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    rights &= FILE_RIGHTS
                beneath = _PathBeneathAttr(rights & fs, fd)
                _call(ctypes.c_long(_SYS_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                      ctypes.byref(beneath), ctypes.c_uint32(0))
            finally:
                os.close(fd)
        _call(ctypes.c_long(_SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
