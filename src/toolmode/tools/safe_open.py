"""Open paths beneath a directory file descriptor without ever following the path out of it.

`open_beneath(dir_fd, path, flags)` resolves `path` relative to `dir_fd` atomically in the kernel with
`openat2(2)` and `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`: `..`, absolute symlinks and symlinks that
lead out of the directory, and `/proc` magic links are refused (`EscapeError`) however the tree changes
while the path is being resolved. Where openat2 is missing (Linux before 5.6, other systems, a seccomp
filter that blocks it) the path is walked one component at a time with `O_NOFOLLOW | O_DIRECTORY`
relative to the fd of the previous component; that walk refuses every symlink and every `..` instead of
following them. Callers give paths that were symlink-free when they were checked, so refusing a symlink
only ever refuses a path that changed under them.

Set `USE_OPENAT2 = False` to force the walk (tests); `None` (the default) probes the kernel once.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat
import sys
from collections.abc import Callable, Iterable
from typing import TypeVar

from toolmode.errors import ToolmodeError

T = TypeVar("T")

USE_OPENAT2: bool | None = None  # None: probe once; False: always walk; True: require openat2

RESOLVE_NO_XDEV = 0x01
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
RESOLVE_IN_ROOT = 0x10

_SYS_OPENAT2 = {"x86_64": 437, "aarch64": 437, "arm64": 437}  # the only numbers relied upon here
_RESOLVE = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS
PATH_MAX = 4096  # Linux's limit for a path handed to the kernel, in bytes with the final NUL
_EAGAIN_RETRIES = 32  # openat2 answers EAGAIN when a rename races with its `..` handling

O_PATH: int = getattr(os, "O_PATH", 0)  # Linux; elsewhere directories are opened O_RDONLY
O_SEARCH_DIR = (O_PATH or os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC


class EscapeError(ToolmodeError, PermissionError):
    """The path leads out of the directory (`..`, a symlink out, a magic link), or changed while it was opened."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_probed: bool | None = None
_libc: ctypes.CDLL | None = None


def openat2_available() -> bool:
    """Whether `open_beneath` uses openat2 (honours `USE_OPENAT2`; the kernel is probed once)."""
    global _probed, _libc
    if USE_OPENAT2 is not None:
        return USE_OPENAT2
    if _probed is None:
        _probed = False
        if sys.platform == "linux" and platform.machine() in _SYS_OPENAT2:
            try:
                _libc = ctypes.CDLL(None, use_errno=True)
                _libc.syscall.restype = ctypes.c_long
                fd = _openat2_raw(-100, b"/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, 0, 0)  # AT_FDCWD
            except OSError:
                # ENOSYS: kernel < 5.6; EPERM: some container seccomp profiles refuse unknown syscalls.
                pass
            else:
                os.close(fd)
                _probed = True
    return _probed


def _openat2_raw(dir_fd: int, path: bytes, flags: int, mode: int, resolve: int) -> int:
    assert _libc is not None
    tmpfile = getattr(os, "O_TMPFILE", 0)
    creates = flags & os.O_CREAT or (tmpfile and flags & tmpfile == tmpfile)
    how = _OpenHow(flags, mode if creates else 0, resolve)  # openat2 wants mode 0 unless it creates
    nr = _SYS_OPENAT2[platform.machine()]
    while True:
        fd = _libc.syscall(
            ctypes.c_long(nr), ctypes.c_long(dir_fd), ctypes.c_char_p(path), ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )  # fmt: skip
        if fd >= 0:
            return int(fd)
        err = ctypes.get_errno()
        if err != errno.EINTR:
            raise OSError(err, os.strerror(err), os.fsdecode(path))


def open_beneath(dir_fd: int, path: str | bytes, flags: int, mode: int = 0o666, *, symlinks: bool = True) -> int:
    """Open `path` relative to `dir_fd`, never resolving to anything outside that directory.

    Returns a new file descriptor (O_CLOEXEC is always added). Raises `EscapeError` when the path leads
    out (`..` above `dir_fd`, a symlink out of it, a magic link; with the fallback walk: any symlink or
    `..` at all; with `symlinks=False`: any symlink), and the usual OSError subclasses otherwise
    (FileNotFoundError, NotADirectoryError, ...). Paths longer than PATH_MAX are refused (ValueError).
    """
    raw = os.fsencode(path)
    if b"\x00" in raw:
        raise ValueError("path contains a NUL character")
    if len(raw) >= PATH_MAX:
        raise ValueError(f"path too long ({len(raw):,} bytes; the limit is {PATH_MAX - 1:,})")
    flags |= os.O_CLOEXEC
    if openat2_available():
        return _open_openat2(dir_fd, raw or b".", flags, mode, _RESOLVE | (0 if symlinks else RESOLVE_NO_SYMLINKS))
    return _open_walk(dir_fd, raw, flags, mode)


def _open_openat2(dir_fd: int, raw: bytes, flags: int, mode: int, resolve: int) -> int:
    for _ in range(_EAGAIN_RETRIES):
        try:
            return _openat2_raw(dir_fd, raw, flags, mode, resolve)
        except OSError as exc:
            if exc.errno in (errno.EXDEV, errno.ELOOP):
                raise EscapeError(exc.errno, "path leads out of the directory", os.fsdecode(raw)) from None
            if exc.errno != errno.EAGAIN:
                raise
    raise EscapeError(errno.EAGAIN, "path kept changing while it was opened", os.fsdecode(raw))


def _open_walk(dir_fd: int, raw: bytes, flags: int, mode: int) -> int:
    """The fallback: one component at a time, each opened with O_NOFOLLOW relative to the previous one."""
    shown = os.fsdecode(raw)
    if raw.startswith(b"/"):
        raise EscapeError(errno.EXDEV, "absolute path", shown)
    parts = [p for p in raw.split(b"/") if p and p != b"."]
    if b".." in parts:
        raise EscapeError(errno.EXDEV, "'..' is not followed", shown)
    if not parts:
        parts = [b"."]
    trailing_slash = raw.endswith(b"/")
    current = descend(os.dup(dir_fd), parts[:-1],
                      lambda fd, part: _open_component(fd, part, O_SEARCH_DIR | os.O_NOFOLLOW, 0, shown))
    try:
        last_flags = flags | os.O_NOFOLLOW | (os.O_DIRECTORY if trailing_slash else 0)
        fd = _open_component(current, parts[-1], last_flags, mode, shown)
    finally:
        os.close(current)
    if O_PATH and flags & O_PATH and stat.S_ISLNK(os.fstat(fd).st_mode):  # O_PATH|O_NOFOLLOW opens the link
        os.close(fd)
        raise EscapeError(errno.ELOOP, "symlinks are not followed", shown)
    return fd


def descend(dir_fd: int, parts: Iterable[T], open_child: Callable[[int, T], int]) -> int:
    """The descriptor reached by opening each of `parts` inside the one before, from `dir_fd`, which this
    takes over: each parent is closed once its child is open, and on an error the one held is closed."""
    current = dir_fd
    try:
        for part in parts:
            following = open_child(current, part)
            os.close(current)
            current = following
    except BaseException:
        os.close(current)
        raise
    return current


def _open_component(dir_fd: int, name: bytes, flags: int, mode: int, shown: str) -> int:
    try:
        return os.open(name, flags, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and _is_symlink(dir_fd, name)):
            raise EscapeError(errno.ELOOP, "symlinks are not followed", shown) from None
        raise


def _is_symlink(dir_fd: int, name: bytes) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False
