"""ctypes: raw syscalls execve, fork, clone without CLONE_THREAD, clone3, unshare, ptrace, bpf, io_uring."""
# expect: execve -1 1
# expect: fork -1 1
# expect: clone -1 1
# expect: clone3 -1 38
# expect: unshare -1 1
# expect: ptrace -1 1
# expect: bpf -1 1
# expect: io_uring_setup -1 1
# expect: setns -1 1
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
argv = (ctypes.c_char_p * 4)(b"/bin/sh", b"-c", b"echo pwned > {{SENTINEL}}/raw", None)
calls = {
    "execve": (59, b"/bin/sh", argv, None),
    "fork": (57,),
    "clone": (56, 17, 0, 0, 0, 0),  # SIGCHLD only: a new process
    "clone3": (435, 0, 0),
    "unshare": (272, 0x10000000),  # CLONE_NEWUSER
    "ptrace": (101, 16, os.getppid(), 0, 0),  # PTRACE_ATTACH to the host
    "bpf": (321, 0, 0, 0),
    "io_uring_setup": (425, 8, 0),
    "setns": (308, 0, 0),
}
for name, args in calls.items():
    ctypes.set_errno(0)
    rc = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    print(name, rc, ctypes.get_errno())
