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
    "kill": 62, "ptrace": 101, "syslog": 103, "setpgid": 109, "setsid": 112, "uselib": 134,
    "personality": 135, "rt_sigqueueinfo": 129, "vhangup": 153, "modify_ldt": 154, "pivot_root": 155,
    "adjtimex": 159, "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166,
    "swapon": 167, "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171, "iopl": 172,
    "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179, "tkill": 200,
    "clock_settime": 227, "tgkill": 234, "kexec_load": 246, "add_key": 248, "request_key": 249,
    "keyctl": 250, "migrate_pages": 256, "unshare": 272, "move_pages": 279, "rt_tgsigqueueinfo": 297,
    "perf_event_open": 298, "fanotify_init": 300, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
    "finit_module": 313, "kexec_file_load": 320, "bpf": 321, "execveat": 322, "userfaultfd": 323,
    "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "pidfd_open": 434, "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    "quotactl_fd": 443,
}

# Denied for both the code worker and the confined shell.
COMMON_DENY = [
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise",
    "mount", "umount2", "unshare", "setns", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd", "kexec_load",
    "kexec_file_load", "init_module", "finit_module", "delete_module", "syslog", "uselib", "personality",
    "vhangup", "modify_ldt", "adjtimex", "clock_adjtime", "clock_settime", "settimeofday", "acct", "swapon",
    "swapoff", "reboot", "sethostname", "setdomainname", "iopl", "ioperm", "quotactl", "quotactl_fd",
    "migrate_pages", "move_pages", "fanotify_init", "name_to_handle_at", "open_by_handle_at",
    "setsid", "setpgid",  # nothing may leave the session/process group that a timeout kills
]
# Also denied in the worker: no exec, no new processes, no sockets, no signals except to itself.
WORKER_DENY = [
    "execve", "execveat", "fork", "vfork", "socket", "socketpair", "tkill", "rt_sigqueueinfo",
    "rt_tgsigqueueinfo", "pidfd_send_signal", "pidfd_open",
]


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

    Shell signals: with `scoped_signals` (Landlock ABI >= 6 scopes them) the kernel confines them to the
    shell's own processes. Without it, what can be refused by looking at the target pid is: kill() and
    the sigqueueinfo calls at pid <= 0 (every process, a process group: `kill -9 -1`, `kill 0`), anything
    aimed at a pid in `protect` (the host), tkill() (a thread id could be one of the host's threads), and
    pidfd_open() of a protected pid. Signals to other explicit pids stay possible there.
    """
    a = _Asm()
    a.ld(_OFF_ARCH)
    a.jump(_JEQ, AUDIT_ARCH_X86_64, 0, "kill")
    a.ld(_OFF_NR)
    a.jump(_JGE, _X32_BIT, "eperm", 0)
    for name in COMMON_DENY + (WORKER_DENY if worker else []):
        a.jump(_JEQ, NR[name], "eperm", 0)
    a.jump(_JEQ, NR["clone3"], "enosys", 0)
    # clone: never new namespaces; in the worker only threads.
    a.jump(_JEQ, NR["clone"], 0, "after_clone")
    a.ld(_OFF_ARG)
    a.jump(_JSET, CLONE_NEW_MASK, "eperm", 0)
    if worker:
        a.jump(_JSET, CLONE_THREAD, "allow", "eperm")
    else:
        a.ret(RET_ALLOW)
    a.label("after_clone")
    # ioctl: no typing into a terminal's input queue.
    a.jump(_JEQ, NR["ioctl"], 0, "after_ioctl")
    a.ld(_OFF_ARG + 8)
    a.jump(_JEQ, TIOCSTI, "eperm", 0)
    a.jump(_JEQ, TIOCLINUX, "eperm", "allow")
    a.label("after_ioctl")
    if worker:
        # kill(pid, sig) and tgkill(tgid, tid, sig) only at itself (low 32 bits: the kernel reads an int).
        for name in ("kill", "tgkill"):
            a.jump(_JEQ, NR[name], 0, f"after_{name}")
            a.ld(_OFF_ARG)
            a.jump(_JEQ, pid, "allow", "eperm")
            a.label(f"after_{name}")
    else:
        if not scoped_signals:
            a.jump(_JEQ, NR["tkill"], "eperm", 0)
            # The target is an int in the low 32 bits of the first argument: <= 0 means 0 or the sign bit set.
            for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open"):
                a.jump(_JEQ, NR[name], 0, f"after_{name}")
                a.ld(_OFF_ARG)
                if name != "pidfd_open":
                    a.jump(_JEQ, 0, "eperm", 0)
                    a.jump(_JSET, 0x80000000, "eperm", 0)
                for target in protect:
                    a.jump(_JEQ, target, "eperm", 0)
                a.ret(RET_ALLOW)
                a.label(f"after_{name}")
        # No socket() at all: Landlock (ABI <= 7) does not govern connecting to pathname unix sockets
        # such as /var/run/docker.sock. socketpair() stays allowed for local IPC between the shell's processes.
        a.jump(_JEQ, NR["socket"], "eperm", "allow")
    a.label("allow")
    a.ret(RET_ALLOW)
    a.label("eperm")
    a.ret(_errno(errno.EPERM))
    a.label("enosys")
    a.ret(_errno(errno.ENOSYS))
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
