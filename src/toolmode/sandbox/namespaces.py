"""The namespaces tier without bubblewrap: a process puts itself in new namespaces and builds its own view.

`enter(plan)` is called by the code worker or the shell launcher (after it got its policy, before it runs
anything it was not started with) when the tier is "namespaces via unshare":

1. unshare(2) a new user namespace (the caller's uid and gid mapped to themselves: root stays 0, a normal
   user keeps write access to the workspace files it owns) with new mount, IPC (SysV objects die with the
   run), UTS, network (loopback only, left down), cgroup and PID namespaces;
2. build the view of `view.plan` in the new mount namespace: a small tmpfs becomes the new root, host paths
   are bound into it from the old root (read-only, nosuid, nodev; device nodes keep their device access;
   the flags the kernel locks on a mount seen from a less privileged namespace are kept), then the old root
   is detached and the new root made read-only;
3. fork twice: the process the host started stays outside as a waiter, pid 1 of the new PID namespace is an
   init that only reaps, and pid 2 returns from `enter` and goes on as the worker or launcher. Each exits
   with the status of the one below it (128 + the signal when it was killed, as bubblewrap reports it),
   each dies with its parent (PR_SET_PDEATHSIG, checked through a pipe against the race at fork), and the
   whole namespace dies with its pid 1.

Python 3.11 has no os.unshare, so the calls are made with ctypes. Stdlib only: loaded by the bare children.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
ALL = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_NEWPID

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24
MNT_DETACH = 2
_ST_RELATIME = 4096  # statvfs f_flag bits that differ from the MS_ ones
_SYS_PIVOT_ROOT = 155
_PR_SET_PDEATHSIG = 1
_SIGKILL = 9
HOSTNAME = b"toolmode"
BASE = "/tmp"  # the scratch tmpfs that holds the new root while it is built (private to the namespace)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.sethostname.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
_libc.syscall.restype = ctypes.c_long


def _check(res: int, what: str) -> None:
    if res < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _bytes(text: str | None) -> bytes | None:
    return text.encode() if text is not None else None


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(_bytes(source), _bytes(target), _bytes(fstype), flags, _bytes(data)), f"mount {target}")


def _locked_flags(path: str) -> int:
    """The flags of the mount holding `path` that a namespace's remount must keep (the kernel refuses to
    drop read-only, nosuid, nodev, noexec or the atime mode of a mount that came from the parent)."""
    f = os.statvfs(path).f_flag
    flags = f & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME)
    if f & _ST_RELATIME:
        flags |= MS_RELATIME
    elif not f & MS_NOATIME:
        flags |= MS_STRICTATIME
    return flags


def _make_mount_point(dest: str, directory: bool) -> None:
    if os.path.lexists(dest):
        return
    os.makedirs(os.path.dirname(dest), mode=0o755, exist_ok=True)
    if directory:
        os.mkdir(dest, 0o755)
    else:
        os.close(os.open(dest, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))


def _bind(source: str, dest: str, kind: str) -> None:
    """Bind `source` (a path under the old root) on `dest` (under the new root), then set its flags."""
    src_mode = os.stat(source).st_mode
    _make_mount_point(dest, directory=(src_mode & 0o170000) == 0o040000)
    _mount(source, dest, None, MS_BIND)
    flags = _locked_flags(source) | MS_NOSUID
    if kind != "rw":
        flags |= MS_RDONLY
    if kind not in ("dev", "devrw"):
        flags |= MS_NODEV
    _mount(None, dest, None, MS_REMOUNT | MS_BIND | flags)


def build_view(plan: list[list[str]], root: str = BASE) -> None:
    """Apply `plan` (view.plan) in the current, new mount namespace and make the result the root."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here propagates to the host
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k")
    os.mkdir(os.path.join(root, "newroot"), 0o755)
    os.mkdir(os.path.join(root, "oldroot"), 0o755)
    os.chdir(root)
    _check(_libc.syscall(_SYS_PIVOT_ROOT, b".", b"oldroot"), "pivot_root")
    os.chdir("/")
    _mount("tmpfs", "/newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    for op in plan:
        what, dest = op[0], "/newroot" + op[1]
        if what == "bind":
            _bind("/oldroot" + op[2], dest, op[3])
        elif what == "symlink":
            os.makedirs(os.path.dirname(dest), mode=0o755, exist_ok=True)
            os.symlink(op[2], dest)
        elif what == "tmpfs":
            _make_mount_point(dest, directory=True)
            _mount("tmpfs", dest, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={int(op[2])}")
        else:
            raise ValueError(f"unknown view operation {what!r}")
    _check(_libc.umount2(b"/oldroot", MNT_DETACH), "umount /oldroot")
    os.chdir("/newroot")
    _check(_libc.syscall(_SYS_PIVOT_ROOT, b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", MNT_DETACH), "umount the scratch root")  # the old root, stacked on top
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(next((op[1] for op in plan if op[0] == "bind" and op[3] == "rw"), "/"))  # the workspace


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _quiet(keep: int = -1) -> None:
    """Give up every descriptor but `keep`: stdin, stdout and stderr become /dev/null (the host reads the
    program's output to its end; a process that only waits holds no copy), the rest are closed."""
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    for low, high in ((3, keep), (max(3, keep + 1), 1 << 16)):
        if low < high:
            os.closerange(low, high)


def _exit_like(status: int) -> None:
    """Exit with the status a shell would report for `status`: the code, or 128 + the signal (as bwrap does)."""
    code = os.waitstatus_to_exitcode(status)
    os._exit(128 - code if code < 0 else code)


def _reap_until(child: int) -> None:
    """Wait for children (pid 1 also gets every orphan of its namespace); exit like `child` when it ends."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
        if pid == child:
            _exit_like(status)


def _die_with_parent(alive_r: int) -> None:
    """SIGKILL this process when its parent ends; exit now if it already did (its end of the pipe is shut)."""
    _check(_libc.prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0), "prctl")
    os.set_blocking(alive_r, False)
    try:
        if os.read(alive_r, 1) == b"":
            os._exit(70)
    except BlockingIOError:
        pass
    os.close(alive_r)


def _fork_and_wait() -> None:
    """Fork: the parent gives up its descriptors, reaps, and exits like the child; the child returns, set
    to die with its parent."""
    alive_r, alive_w = os.pipe()
    child = os.fork()
    if child:
        _quiet(keep=alive_w)
        _reap_until(child)
    os.close(alive_w)
    _die_with_parent(alive_r)


def start_init() -> None:
    """Called as pid 1 of a new PID namespace (by `enter`, or under bubblewrap's --as-pid-1): the caller
    stays as the namespace's init, which only reaps (no signal sent from inside can end it, and pid 1 is
    not the program: `kill(1)` and `getppid()` name the init), and returns in its child, pid 2."""
    _fork_and_wait()


def enter(plan: list[list[str]]) -> None:
    """Move into new namespaces holding the view of `plan`; returns in pid 2 of the new PID namespace,
    where the caller goes on. Raises OSError when a step fails (the caller fails closed).

    This process stays outside as the waiter the host started (it exits like the namespace's init, which
    exits like the program); everything in the namespace dies with its init."""
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(ALL), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
    _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    build_view(plan)
    _check(_libc.sethostname(HOSTNAME, len(HOSTNAME)), "sethostname")
    _fork_and_wait()
    start_init()


def seal_devices(paths: list[str]) -> None:
    """Remount the device binds in `paths` read-only, keeping device access.

    bubblewrap binds device nodes writable (its read-only remount adds nodev, which makes the device
    unusable), and on a writable mount the owner of /dev/null may change its mode or times: the host's
    /dev/null. Where the host is root, bubblewrap lets the process keep CAP_SYS_ADMIN in its own user
    namespace (`--cap-add`), and this finishes the view before every capability is dropped."""
    for path in paths:
        _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | _locked_flags(path))
