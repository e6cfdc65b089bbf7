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
_JA = 0x05
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
    "ioctl": 16, "shmget": 29, "shmat": 30, "shmctl": 31, "socket": 41, "socketpair": 53, "clone": 56, "fork": 57,
    "vfork": 58, "execve": 59, "kill": 62, "semget": 64, "semop": 65, "semctl": 66, "shmdt": 67, "msgget": 68,
    "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "fcntl": 72, "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93,
    "lchown": 94, "ptrace": 101, "syslog": 103, "setpgid": 109, "setsid": 112, "getpgid": 121, "getsid": 124,
    "capget": 125, "rt_sigqueueinfo": 129, "utime": 132, "uselib": 134, "personality": 135, "getpriority": 140,
    "setpriority": 141, "sched_setparam": 142, "sched_getparam": 143, "sched_setscheduler": 144,
    "sched_getscheduler": 145, "sched_rr_get_interval": 148, "vhangup": 153, "modify_ldt": 154,
    "pivot_root": 155, "prctl": 157, "adjtimex": 159, "chroot": 161, "acct": 163, "settimeofday": 164,
    "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169, "sethostname": 170,
    "setdomainname": 171, "iopl": 172, "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179,
    "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "getxattr": 191, "lgetxattr": 192, "fgetxattr": 193,
    "listxattr": 194, "llistxattr": 195, "flistxattr": 196, "removexattr": 197, "lremovexattr": 198,
    "fremovexattr": 199, "tkill": 200, "sched_setaffinity": 203, "sched_getaffinity": 204, "io_setup": 206,
    "io_destroy": 207, "io_getevents": 208, "io_submit": 209, "io_cancel": 210, "semtimedop": 220,
    "clock_settime": 227, "tgkill": 234, "utimes": 235, "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242,
    "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245, "kexec_load": 246, "add_key": 248,
    "request_key": 249, "keyctl": 250, "ioprio_set": 251, "ioprio_get": 252, "inotify_init": 253,
    "inotify_add_watch": 254, "migrate_pages": 256, "fchownat": 260, "futimesat": 261, "fchmodat": 268,
    "unshare": 272, "get_robust_list": 274, "move_pages": 279, "utimensat": 280, "fallocate": 285,
    "inotify_init1": 294, "rt_tgsigqueueinfo": 297, "perf_event_open": 298, "fanotify_init": 300,
    "fanotify_mark": 301, "prlimit64": 302, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
    "finit_module": 313, "sched_setattr": 314, "sched_getattr": 315, "memfd_create": 319, "kexec_file_load": 320,
    "bpf": 321, "execveat": 322, "userfaultfd": 323, "io_pgetevents": 333, "pidfd_send_signal": 424,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "pidfd_open": 434, "clone3": 435,
    "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442, "quotactl_fd": 443, "memfd_secret": 447,
    "process_mrelease": 448, "fchmodat2": 452, "statmount": 457, "listmount": 458, "lsm_set_self_attr": 460,
    "setxattrat": 463, "getxattrat": 464, "listxattrat": 465, "removexattrat": 466, "open_tree_attr": 467,
    "file_setattr": 469, "listns": 470,
}
LAST_REVIEWED = 470  # the highest x86_64 number reviewed (Linux 6.19, listns); later ones are refused: ENOSYS

# Refused (EPERM) for both the code worker and the confined shell, in every tier.
COMMON_DENY = [
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise",
    "process_mrelease", "mount", "umount2", "unshare", "setns", "pivot_root", "chroot", "open_tree",
    "open_tree_attr", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
    "userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "syslog",
    "uselib", "personality", "vhangup", "modify_ldt", "adjtimex", "clock_adjtime", "clock_settime",
    "settimeofday", "acct", "swapon", "swapoff", "reboot", "sethostname", "setdomainname", "iopl", "ioperm",
    "quotactl", "quotactl_fd", "migrate_pages", "move_pages", "fanotify_init", "fanotify_mark",
    "name_to_handle_at", "open_by_handle_at", "lsm_set_self_attr",
    "setsid", "setpgid",  # nothing may leave the session/process group that a timeout kills
    "pidfd_open",  # a pidfd of any process would be an existence oracle; children's come from clone(CLONE_PIDFD)
    # SysV IPC and POSIX message queues are named system-wide (per IPC namespace), not by a path Landlock
    # sees: the program could read, forge or keep the host's segments, queues and semaphores.
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop",
    "semtimedop", "semctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
    "mq_getsetattr",
]
# Refused as not implemented (ENOSYS), so libraries take their fallback: clone3 (glibc falls back to clone,
# which the filter can inspect), memory that no limit counts (memfd_create, memfd_secret: pages held by a
# descriptor are outside RLIMIT_AS and, held by a partial mapping, outside anything the host can read), kernel
# AIO (its rings count against a machine-wide maximum, aio-max-nr), inotify (instances count against the
# host user's small limit, and watches on host paths see the host's files change: tools poll instead), the
# mount-table and namespace listings (statmount, listmount, listns: util-linux reads /proc instead).
COMMON_ENOSYS = [
    "clone3", "memfd_create", "memfd_secret", "io_setup", "io_destroy", "io_getevents", "io_submit", "io_cancel",
    "io_pgetevents", "inotify_init", "inotify_init1", "inotify_add_watch", "statmount", "listmount", "listns",
]
# Also refused in the worker: no exec, no new processes, no sockets, no signals except to itself, and no
# capget (it reads any pid's capabilities; the pid is behind a pointer, so the shell, whose tools use it
# on themselves, keeps it).
WORKER_DENY = [
    "execve", "execveat", "fork", "vfork", "socket", "socketpair", "tkill", "rt_sigqueueinfo",
    "rt_tgsigqueueinfo", "pidfd_send_signal", "capget",
]
# The landlock tier (no namespaces): Landlock does not govern file metadata, and a descriptor opened read-only
# on a host file (which Landlock allows) is enough for its owner to change mode or times. Refused outright:
# mode, owner and times (EPERM), every extended attribute call, reads included (EOPNOTSUPP, what a file system
# without xattrs answers, so libraries go on without), and the inode attributes of file_setattr.
METADATA_DENY = [
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime", "utimes",
    "utimensat", "futimesat",
]
METADATA_ENOTSUP = [
    "setxattr", "lsetxattr", "fsetxattr", "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr",
    "flistxattr", "removexattr", "lremovexattr", "fremovexattr", "setxattrat", "getxattrat", "listxattrat",
    "removexattrat", "file_setattr",
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
F_SETLEASE = 1024  # a lease on a readable host file its uid owns stalls every host process opening it (45 s)
F_NOTIFY = 1026  # dnotify: a watch on a host directory, as inotify
FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902  # ioctl forms of F_SETOWN (the pid is behind a pointer)
PR_SCHED_CORE = 62  # prctl: moves core-scheduling cookies to and from other pids
# ioctl commands (their low 32 bits). XFS's space reservations are fallocate by another name, in every tier;
# the inode-attribute setters (chattr flags, fsxattr, generation, fs-verity, an encryption policy) are
# metadata of files a descriptor names, refused in the landlock tier like chmod.
IOCTL_RESERVE = [0x4030580A, 0x40305824, 0x40305828, 0x4030582A, 0x4030583F]  # ALLOCSP(64), RESVSP(64), ZERO_RANGE
IOCTL_METADATA = [0x40086602, 0x40046602, 0x401C5820, 0x40087602, 0x40047602, 0x40806685, 0x800C6613]


class _Asm:
    """A tiny BPF assembler: instructions with symbolic jump targets, resolved to relative offsets."""

    def __init__(self) -> None:
        self.ins: list[tuple[int, object, object, object]] = []
        self.labels: dict[str, int] = {}
        self._local = 0

    def label(self, name: str) -> None:
        self.labels[name] = len(self.ins)

    def fresh(self) -> str:
        self._local += 1
        return f".L{self._local}"

    def ld(self, offset: int) -> None:
        self.ins.append((_LD_W_ABS, 0, 0, offset))

    def jump(self, code: int, k: int, jt: object = 0, jf: object = 0) -> None:
        self.ins.append((code, jt, jf, k))

    def goto(self, target: str) -> None:
        """An unconditional jump (32-bit offset: any distance)."""
        self.ins.append((_JA, 0, 0, target))

    def ret(self, value: int) -> None:
        self.ins.append((_RET, 0, 0, value))

    def refuse(self, numbers: list[int], value: int) -> None:
        """Return `value` for any of `numbers` (the accumulator holds the syscall number); fall through
        otherwise. Emitted in chunks, each followed by its own return, so no jump is longer than 255."""
        for start in range(0, len(numbers), 200):
            hit, miss = self.fresh(), self.fresh()
            for nr in numbers[start:start + 200]:
                self.jump(_JEQ, nr, hit, 0)
            self.goto(miss)
            self.label(hit)
            self.ret(value)
            self.label(miss)

    def assemble(self) -> bytes:
        out = bytearray()
        for i, (code, jt, jf, k) in enumerate(self.ins):
            if code == _JA:
                out += struct.pack("<HBBI", code, 0, 0, self.labels[str(k)] - i - 1)
                continue
            offs = []
            for target in (jt, jf):
                off = self.labels[target] - i - 1 if isinstance(target, str) else int(target)  # type: ignore[call-overload]
                if not 0 <= off < 256:
                    raise ValueError(f"BPF jump out of range at {i}")
                offs.append(off)
            out += struct.pack("<HBBI", code, offs[0], offs[1], int(k) & 0xFFFFFFFF)  # type: ignore[call-overload]
        return bytes(out)


def _errno(e: int) -> int:
    return RET_ERRNO | (e & 0xFFFF)


def build_filter(*, worker: bool, pid: int = 0, scoped_signals: bool = False, protect: tuple[int, ...] = (),
                 metadata: bool = False) -> bytes:
    """The BPF program: `worker=True` for the code worker (pid = its own pid, the only kill() target
    allowed), `worker=False` for the shell (exec, fork and socketpair allowed, socket denied). `metadata`:
    the landlock tier's additions (no namespaces: file metadata of host files is refused here).

    Calls that name another process (PID_FIRST, the priority pairs, SIGIO owners, core-scheduling cookies)
    are allowed only for the caller itself, in both filters. pid arguments are C ints: only the low 32 bits
    of a register count. Numbers above LAST_REVIEWED (calls added to the kernel after this review) are
    refused with ENOSYS until reviewed.

    Shell signals: with `scoped_signals` (Landlock ABI >= 6 scopes them, or the shell has its own PID
    namespace) the kernel confines them to the shell's own processes. Without it, what can be refused by
    looking at the target pid is: kill() and the sigqueueinfo calls at pid <= 0 (every process, a process
    group: `kill -9 -1`, `kill 0`), anything aimed at a pid in `protect` (the host), tkill() (a thread id
    could be one of the host's threads), and SIGIO owners that are process groups or protected. Signals to
    other explicit pids stay possible there.
    """
    selves = (0, pid) if worker else (0,)
    fence_signals = worker or not scoped_signals
    a = _Asm()
    a.ld(_OFF_ARCH)
    a.jump(_JEQ, AUDIT_ARCH_X86_64, 1, 0)
    a.ret(RET_KILL_PROCESS)  # a foreign architecture (the 32-bit ABI has other numbers)
    a.ld(_OFF_NR)
    a.jump(_JGE, _X32_BIT, 0, 1)
    a.ret(_errno(errno.EPERM))  # x32 numbers
    a.jump(_JGE, NR["ioctl"], 1, 0)
    a.ret(RET_ALLOW)  # 0-15 (read, write, open, close, stat, mmap, ...): the hot path, nothing to check
    a.jump(_JGE, LAST_REVIEWED + 1, 0, 1)
    a.ret(_errno(errno.ENOSYS))  # added to the kernel after this review
    # Calls allowed with checks of their arguments: dispatched first, their checks follow at once.
    for name in PID_FIRST:
        a.jump(_JEQ, NR[name], "pid_first", 0)
    for name in ("getpriority", "setpriority"):
        a.jump(_JEQ, NR[name], "prio", 0)
    for name in ("ioprio_get", "ioprio_set"):
        a.jump(_JEQ, NR[name], "ioprio", 0)
    a.jump(_JEQ, NR["clone"], "clone", 0)
    a.jump(_JEQ, NR["ioctl"], "ioctl", 0)
    a.jump(_JEQ, NR["fcntl"], "fcntl", 0)
    a.jump(_JEQ, NR["prctl"], "prctl", 0)
    if worker:
        # kill(pid, sig) and tgkill(tgid, tid, sig) only at itself.
        a.jump(_JEQ, NR["kill"], "self_only", 0)
        a.jump(_JEQ, NR["tgkill"], "self_only", 0)
    elif not scoped_signals:
        a.jump(_JEQ, NR["tkill"], "eperm", 0)
        for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
            a.jump(_JEQ, NR[name], "signal", 0)
    a.goto("lists")

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
    # ioctl: no typing into a terminal's input queue; SIGIO owners as for fcntl; no space reservations; in
    # the landlock tier no inode attributes.
    a.label("ioctl")
    a.ld(_OFF_ARG + 8)
    a.jump(_JEQ, TIOCSTI, "eperm", 0)
    a.jump(_JEQ, TIOCLINUX, "eperm", 0)
    if fence_signals:
        a.jump(_JEQ, FIOSETOWN, "eperm", 0)
        a.jump(_JEQ, SIOCSPGRP, "eperm", 0)
    for cmd in IOCTL_RESERVE:
        a.jump(_JEQ, cmd, "eopnotsupp", 0)
    for cmd in IOCTL_METADATA if metadata else []:
        a.jump(_JEQ, cmd, "eperm", 0)
    a.ret(RET_ALLOW)
    # fcntl: no leases, no directory notifications; SIGIO owners: the kernel later signals the owner
    # (SIGIO's default action kills), so only the caller itself.
    a.label("fcntl")
    a.ld(_OFF_ARG + 8)
    a.jump(_JEQ, F_SETLEASE, "eperm", 0)
    a.jump(_JEQ, F_NOTIFY, "eperm", 0)
    if fence_signals:
        a.jump(_JEQ, F_SETOWN_EX, "eperm", 0)  # the owner is behind a pointer
        a.jump(_JEQ, F_SETOWN, 0, "allow")
        a.ld(_OFF_ARG + 16)
        if worker:
            one_of(selves)
        else:
            a.jump(_JEQ, 0, "allow", 0)
            a.jump(_JSET, 0x80000000, "eperm", "protected")  # negative: a process group
    else:
        a.ret(RET_ALLOW)
    a.label("prctl")
    a.ld(_OFF_ARG)
    a.jump(_JEQ, PR_SCHED_CORE, "eperm", "allow")
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
    if not worker and fence_signals:
        a.label("protected")
        for target in protect:
            a.jump(_JEQ, target, "eperm", 0)
        a.ret(RET_ALLOW)
    a.label("allow")
    a.ret(RET_ALLOW)
    a.label("eperm")
    a.ret(_errno(errno.EPERM))
    a.label("eopnotsupp")
    a.ret(_errno(errno.EOPNOTSUPP))
    # Calls refused whatever their arguments.
    a.label("lists")
    a.refuse([NR[n] for n in COMMON_DENY + (WORKER_DENY if worker else [])], _errno(errno.EPERM))
    a.refuse([NR[n] for n in COMMON_ENOSYS], _errno(errno.ENOSYS))
    if metadata:
        a.refuse([NR[n] for n in METADATA_DENY], _errno(errno.EPERM))
        a.refuse([NR[n] for n in METADATA_ENOTSUP], _errno(errno.EOPNOTSUPP))
    # fallocate reserves gigabytes in microseconds, so one write-budget check interval could fill the
    # disk; EOPNOTSUPP (what file systems without it answer) makes glibc's posix_fallocate and most tools
    # fall back to writing, whose speed the budget's interval bounds.
    a.refuse([NR["fallocate"]], _errno(errno.EOPNOTSUPP))
    if not worker:
        # No socket() at all: Landlock (ABI <= 7) does not govern connecting to pathname unix sockets
        # such as /var/run/docker.sock. socketpair() stays allowed for local IPC between the shell's processes.
        a.refuse([NR["socket"]], _errno(errno.EPERM))
    a.ret(RET_ALLOW)
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
