"""What a confined process sees of the host: one list, from which both the mount view of the namespaces tier
and the Landlock rules of every tier are made, so the two walls agree.

`entries()` lists the host paths a program needs (the interpreter, shared libraries, the shell's programs, four
device nodes) with their kind; `plan()` turns them, the workspace and the private /tmp into the ordered
operations that build the view: bind mounts (read-only, nosuid, nodev except for the device nodes; the
workspace the one writable bind), symlinks where the host has them (`/lib -> usr/lib`), a size-bounded tmpfs
on /tmp, and the workspace's `.git` and `runs/` bound read-only again when they exist (the host trusts what is
in them: git hooks, traces, bench state). Both the bubblewrap command line (`tiers.bwrap_argv`) and the direct
mounts (`namespaces.build`) follow the same plan.

Stdlib only: also loaded by the bare worker and launcher interpreters.
"""

from __future__ import annotations

import os
import stat
import sys

PROTECTED = (".git", "runs")  # inside the workspace: read-only where the tier can bind (what the host trusts)
TMP = "/tmp"

RO = "ro"  # read (and, for the shell's programs, execute: see RX)
RX = "rx"  # read and execute
DEV = "dev"  # a device node, read only
DEV_RW = "devrw"  # a device node, read and write (/dev/null)
RW = "rw"  # the workspace: read, write, create, remove (no execute for the code worker)

_SHELL_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc/alternatives")
_SHELL_FILES = ("/etc/ld.so.cache", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime",
                "/etc/mime.types", "/etc/magic")
_WORKER_PATHS = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/share/zoneinfo", "/etc/localtime",
                 "/etc/ld.so.cache")
_DEVICES = (("/dev/null", DEV_RW), ("/dev/zero", DEV), ("/dev/random", DEV), ("/dev/urandom", DEV))


def python_paths() -> list[str]:
    """The interpreter's installation (binary, libpython, stdlib, lib-dynload)."""
    paths = {sys.base_prefix, sys.base_exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    return sorted(p for p in paths if p and p != "/")


def entries(*, shell: bool) -> list[tuple[str, str]]:
    """(host path, kind) of everything besides the workspace that the process needs; missing paths are
    skipped by the callers. The code worker reads its interpreter and the shared libraries; the shell also
    executes the system's programs and reads a few files of /etc."""
    if shell:
        found = [(p, RX) for p in (*_SHELL_DIRS, *python_paths())] + [(p, RO) for p in _SHELL_FILES]
    else:
        found = [(p, RO) for p in (*python_paths(), *_WORKER_PATHS)]
    return found + list(_DEVICES)


def _inside(path: str, outer: str) -> bool:
    return path == outer or path.startswith(outer.rstrip("/") + "/")


def protected(workspace: str) -> list[str]:
    """The entries of PROTECTED that exist in `workspace` as a real directory or file (not a symlink)."""
    found = []
    for name in PROTECTED:
        path = os.path.join(workspace, name)
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
            found.append(path)
    return found


_system: dict[bool, list[tuple[str, ...]]] = {}


def _system_ops(shell: bool) -> list[tuple[str, ...]]:
    """The binds and symlinks of the host's own paths (the same for every run of a process: computed once)."""
    if shell not in _system:
        binds: dict[str, str] = {}
        links: dict[str, str] = {}
        for path, kind in entries(shell=shell):
            if os.path.islink(path):
                links[path] = os.readlink(path)
                path = os.path.realpath(path)
            if os.path.exists(path):
                binds.setdefault(path, kind)
        ops: list[tuple[str, ...]] = [("bind", p, p, k) for p, k in binds.items()
                                      if not any(_inside(p, o) and p != o for o in binds)]
        _system[shell] = ops + [("symlink", path, target) for path, target in links.items() if path not in binds]
    return _system[shell]


def plan(workspace: str, *, shell: bool, tmp_bytes: int | None) -> list[tuple[str, ...]]:
    """The operations that build the namespaces tier's file-system view, in the order to apply them:
    ("bind", dest, source, kind), ("symlink", path, target), ("tmpfs", path, size in bytes).

    Host symlinks among the entries (`/lib -> usr/lib` on merged-/usr systems, `/etc/localtime`) are made
    again as symlinks and their targets bound instead. An entry inside another one is shown by the outer
    bind already. Operations are sorted by destination, so a parent is in place before anything inside it
    (/tmp before a workspace under /tmp; the workspace before its read-only `.git`)."""
    ops = list(_system_ops(shell))
    if tmp_bytes is not None and not _inside(TMP, workspace):  # a workspace at /tmp (or above) is /tmp itself
        ops.append(("tmpfs", TMP, str(tmp_bytes)))
    ops.append(("bind", workspace, workspace, RW))
    ops += [("bind", path, path, RO) for path in protected(workspace)]
    return sorted(ops, key=lambda op: op[1])


def has_private_tmp(plan: list[tuple[str, ...]]) -> bool:
    """Whether `plan` mounts the private /tmp (not when the workspace is /tmp)."""
    return any(op[0] == "tmpfs" and op[1] == TMP for op in plan)
