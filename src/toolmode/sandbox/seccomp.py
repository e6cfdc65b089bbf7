"""seccomp-BPF filters (x86_64), assembled by hand and installed with ctypes.

Hand-written because libseccomp's Python binding is not on PyPI as a maintained wheel; a denylist filter is
~100 BPF instructions. Denied calls return an errno (EPERM, or ENOSYS for clone3 so glibc falls back to
clone) so the program sees a Python exception instead of dying. A denylist rather than an allowlist: CPython
and the shell's programs use a wide, version-dependent set of harmless calls; the dangerous ones are few and
listed here. Foreign architectures are killed, x32 syscall numbers are refused.
Stdlib only: also loaded by the bare worker interpreter.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1
_SYS_SECCOMP = 317

_LD_W_ABS = 0x20
_JEQ = 0x15
_JGE = 0x35
_JSET = 0x45
_RET = 0x06

_OFF_NR = 0
_OFF_ARCH = 4
_OFF_ARG = 16  # args[i] low 32 bits at 16 + 8*i (little endian)

CLONE_THREAD = 0x00010000
CLONE_NEWTIME = 0x00000080
CLONE_NEW_MASK = 0x7E020000 | CLONE_NEWTIME  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
TIOCSTI = 0x5412
TIOCLINUX = 0x541C

NR = {
    "ioctl": 16, "socket": 41, "socketpair": 53, "clone": 56, "fork": 57, "vfork": 58, "execve": 59,
    "kill": 62, "fcntl": 72, "ptrace": 101, "syslog": 103, "setpgid": 109, "setsid": 112, "getpgid": 121,
    "getsid": 124, "capget": 125, "uselib": 134, "personality": 135, "rt_sigqueueinfo": 129, "getpriority": 140,
    "setpriority": 141, "sched_setparam": 142, "sched_getparam": 143, "sched_setscheduler": 144,
    "sched_getscheduler": 145, "sched_rr_get_interval": 148, "vhangup": 153, "modify_ldt": 154,
    "pivot_root": 155, "adjtimex": 159, "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165,
    "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171,
    "iopl": 172, "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179, "tkill": 200,
    "sched_setaffinity": 203, "sched_getaffinity": 204, "clock_settime": 227, "tgkill": 234,
    "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250, "ioprio_set": 251,
    "ioprio_get": 252, "migrate_pages": 256, "unshare": 272, "get_robust_list": 274, "move_pages": 279,
    "rt_tgsigqueueinfo": 297, "perf_event_open": 298, "fanotify_init": 300, "prlimit64": 302,
    "fallocate": 285, "name_to_handle_at": 303, "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308,
    "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "sched_setattr": 314,
    "sched_getattr": 315, "kexec_file_load": 320, "bpf": 321, "execveat": 322, "userfaultfd": 323,
    "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "pidfd_open": 434, "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    "quotactl_fd": 443, "process_mrelease": 448,
}

# Denied for both the code worker and the confined shell.
COMMON_DENY = [
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise",
    "process_mrelease", "mount", "umount2", "unshare", "setns", "pivot_root", "chroot", "open_tree",
    "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
    "userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "syslog",
    "uselib", "personality", "vhangup", "modify_ldt", "adjtimex", "clock_adjtime", "clock_settime",
    "settimeofday", "acct", "swapon", "swapoff", "reboot", "sethostname", "setdomainname", "iopl", "ioperm",
    "quotactl", "quotactl_fd", "migrate_pages", "move_pages", "fanotify_init", "name_to_handle_at",
    "open_by_handle_at",
    "setsid", "setpgid",  # nothing may leave the session/process group that a timeout kills
    "pidfd_open",  # a pidfd of any process would be an existence oracle; children's come from clone(CLONE_PIDFD)
]
# Also denied in the worker: no exec, no new processes, no sockets, no signals except to itself, and no
# capget (it reads any pid's capabilities; the pid is behind a pointer, so the shell, whose tools use it
# on themselves, keeps it).
WORKER_DENY = [
    "execve", "execveat", "fork", "vfork", "socket", "socketpair", "tkill", "rt_sigqueueinfo",
    "rt_tgsigqueueinfo", "pidfd_send_signal", "capget",
]
# Calls whose first argument is a pid (or tid) they read, change or probe: another process's limits
# (prlimit64 can set RLIMIT_CPU on the host and so kill it), scheduling, CPU affinity, session and process
# group (an oracle for which pids exist), robust-futex list. Allowed only for 0 (the caller) and, in the
# worker, its own pid; the shell's processes each have their own pid, which a static filter cannot know,
# so there only 0.
PID_FIRST = [
    "prlimit64", "sched_setparam", "sched_getparam", "sched_setscheduler", "sched_getscheduler",
    "sched_rr_get_interval", "sched_setaffinity", "sched_getaffinity", "sched_setattr", "sched_getattr",
    "getsid", "getpgid", "get_robust_list",
]
# (which, who) calls: `which` selects a process, a process group or a user (every process of the uid: for
# root, the host too). Allowed: a process (who 0 or, in the worker, its pid) or the caller's own group (0).
PRIO_PROCESS, PRIO_PGRP = 0, 1  # getpriority/setpriority
IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP = 1, 2  # ioprio_get/ioprio_set
F_SETOWN, F_SETOWN_EX = 8, 15  # fcntl: SIGIO/SIGURG go to this pid or process group
FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902  # ioctl forms of F_SETOWN (the pid is behind a pointer)


class _Asm:
    """A tiny BPF assembler: instructions with symbolic jump targets, resolved to relative offsets."""

    def __init__(self) -> None:
        self.ins: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.ins)

    def ld(self, offset: int) -> None:
        self.ins.append((_LD_W_ABS, 0, 0, offset))

    def jump(self, code: int, k: int, jt: object = 0, jf: object = 0) -> None:
        self.ins.append((code, jt, jf, k))

    def ret(self, value: int) -> None:
        self.ins.append((_RET, 0, 0, value))

    def assemble(self) -> bytes:
        out = bytearray()
        for i, (code, jt, jf, k) in enumerate(self.ins):
            offs = []
            for target in (jt, jf):
                off = self.labels[target] - i - 1 if isinstance(target, str) else int(target)  # type: ignore[call-overload]
                if not 0 <= off < 256:
                    raise ValueError(f"BPF jump out of range at {i}")
                offs.append(off)
            out += struct.pack("<HBBI", code, offs[0], offs[1], k & 0xFFFFFFFF)
        return bytes(out)


def _errno(e: int) -> int:
    return RET_ERRNO | (e & 0xFFFF)


def build_filter(*, worker: bool, pid: int = 0, scoped_signals: bool = False, protect: tuple[int, ...] = ()) -> bytes:
    """The BPF program: `worker=True` for the code worker (pid = its own pid, the only kill() target
    allowed), `worker=False` for the shell (exec, fork and socketpair allowed, socket denied).

    Calls that name another process (PID_FIRST, the priority pairs, SIGIO owners) are allowed only for the
    caller itself, in both filters. pid arguments are C ints: only the low 32 bits of a register count.

    Shell signals: with `scoped_signals` (Landlock ABI >= 6 scopes them) the kernel confines them to the
    shell's own processes. Without it, what can be refused by looking at the target pid is: kill() and
    the sigqueueinfo calls at pid <= 0 (every process, a process group: `kill -9 -1`, `kill 0`), anything
    aimed at a pid in `protect` (the host), tkill() (a thread id could be one of the host's threads), and
    SIGIO owners that are process groups or protected. Signals to other explicit pids stay possible there.
    """
    selves = (0, pid) if worker else (0,)
    a = _Asm()
    a.ld(_OFF_ARCH)
    a.jump(_JEQ, AUDIT_ARCH_X86_64, 0, "kill")
    a.ld(_OFF_NR)
    a.jump(_JGE, _X32_BIT, "eperm", 0)
    for name in COMMON_DENY + (WORKER_DENY if worker else []):
        a.jump(_JEQ, NR[name], "eperm", 0)
    a.jump(_JEQ, NR["clone3"], "enosys", 0)
    # fallocate reserves gigabytes in microseconds, so one write-budget check interval could fill the
    # disk; EOPNOTSUPP (what file systems without it answer) makes glibc's posix_fallocate and most tools
    # fall back to writing, whose speed the budget's interval bounds.
    a.jump(_JEQ, NR["fallocate"], "eopnotsupp", 0)
    for name in PID_FIRST:
        a.jump(_JEQ, NR[name], "pid_first", 0)
    for name in ("getpriority", "setpriority"):
        a.jump(_JEQ, NR[name], "prio", 0)
    for name in ("ioprio_get", "ioprio_set"):
        a.jump(_JEQ, NR[name], "ioprio", 0)
    a.jump(_JEQ, NR["clone"], "clone", 0)
    a.jump(_JEQ, NR["ioctl"], "ioctl", 0)
    if worker or not scoped_signals:
        a.jump(_JEQ, NR["fcntl"], "fcntl", 0)
    if worker:
        # kill(pid, sig) and tgkill(tgid, tid, sig) only at itself.
        a.jump(_JEQ, NR["kill"], "self_only", 0)
        a.jump(_JEQ, NR["tgkill"], "self_only", 0)
        a.ret(RET_ALLOW)
    else:
        if not scoped_signals:
            a.jump(_JEQ, NR["tkill"], "eperm", 0)
            for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
                a.jump(_JEQ, NR[name], "signal", 0)
        # No socket() at all: Landlock (ABI <= 7) does not govern connecting to pathname unix sockets
        # such as /var/run/docker.sock. socketpair() stays allowed for local IPC between the shell's processes.
        a.jump(_JEQ, NR["socket"], "eperm", "allow")

    def one_of(values: tuple[int, ...], yes: str = "allow", no: str = "eperm") -> None:
        for i, value in enumerate(values):
            a.jump(_JEQ, value, yes, no if i == len(values) - 1 else 0)

    a.label("pid_first")
    a.ld(_OFF_ARG)
    one_of(selves)
    for label, process, group in (("prio", PRIO_PROCESS, PRIO_PGRP), ("ioprio", IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP)):
        a.label(label)
        a.ld(_OFF_ARG)
        a.jump(_JEQ, process, f"{label}_process", 0)
        a.jump(_JEQ, group, 0, "eperm")  # a user (every process of the uid) or anything else
        a.ld(_OFF_ARG + 8)
        one_of((0,))
        a.label(f"{label}_process")
        a.ld(_OFF_ARG + 8)
        one_of(selves)
    # clone: never new namespaces; in the worker only threads.
    a.label("clone")
    a.ld(_OFF_ARG)
    a.jump(_JSET, CLONE_NEW_MASK, "eperm", 0)
    if worker:
        a.jump(_JSET, CLONE_THREAD, "allow", "eperm")
    else:
        a.ret(RET_ALLOW)
    # ioctl: no typing into a terminal's input queue; SIGIO owners as for fcntl.
    a.label("ioctl")
    a.ld(_OFF_ARG + 8)
    a.jump(_JEQ, TIOCSTI, "eperm", 0)
    if worker or not scoped_signals:
        a.jump(_JEQ, FIOSETOWN, "eperm", 0)
        a.jump(_JEQ, SIOCSPGRP, "eperm", 0)
    a.jump(_JEQ, TIOCLINUX, "eperm", "allow")
    if worker or not scoped_signals:
        # fcntl(fd, F_SETOWN, owner): the kernel later signals the owner (SIGIO's default action kills).
        a.label("fcntl")
        a.ld(_OFF_ARG + 8)
        a.jump(_JEQ, F_SETOWN_EX, "eperm", 0)  # the owner is behind a pointer
        a.jump(_JEQ, F_SETOWN, 0, "allow")
        a.ld(_OFF_ARG + 16)
        if worker:
            one_of(selves)
        else:
            a.jump(_JEQ, 0, "allow", 0)
            a.jump(_JSET, 0x80000000, "eperm", "protected")  # negative: a process group
    if worker:
        a.label("self_only")
        a.ld(_OFF_ARG)
        one_of((pid,))
    elif not scoped_signals:
        # The target is an int in the low 32 bits of the first argument: <= 0 means 0 or the sign bit set.
        a.label("signal")
        a.ld(_OFF_ARG)
        a.jump(_JEQ, 0, "eperm", 0)
        a.jump(_JSET, 0x80000000, "eperm", 0)
        a.label("protected")
        for target in protect:
            a.jump(_JEQ, target, "eperm", 0)
        a.ret(RET_ALLOW)
    a.label("allow")
    a.ret(RET_ALLOW)
    a.label("eperm")
    a.ret(_errno(errno.EPERM))
    a.label("enosys")
    a.ret(_errno(errno.ENOSYS))
    a.label("eopnotsupp")
    a.ret(_errno(errno.EOPNOTSUPP))
    a.label("kill")
    a.ret(RET_KILL_PROCESS)
    return a.assemble()


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def available() -> bool:
    """True on x86_64 Linux (the only architecture these filters are written for)."""
    return os.uname().sysname == "Linux" and os.uname().machine == "x86_64"


def install(program: bytes) -> None:
    """Install the filter on the calling process (all its threads). no_new_privs must already be set."""
    if not available():
        raise OSError(errno.ENOSYS, "seccomp filters here are written for x86_64 Linux only")
    buf = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    res = libc.syscall(ctypes.c_long(_SYS_SECCOMP), ctypes.c_uint(_SECCOMP_SET_MODE_FILTER),
                       ctypes.c_uint(_SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(prog))
    if res != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err) if err else 'thread out of sync'}")
