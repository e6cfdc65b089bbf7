"""Learn about processes outside the run by pid: session and group ids, priority, affinity, scheduler, I/O
class, robust-futex list, a pidfd; and by listing /proc. Every probe of the host (and of init) is refused."""
# expect: getsid host PermissionError
# expect: getpgid host PermissionError
# expect: getpriority host PermissionError
# expect: getpriority user PermissionError
# expect: affinity host PermissionError
# expect: scheduler host PermissionError
# expect: param host PermissionError
# expect: rr_interval host PermissionError
# expect: pidfd host PermissionError
# expect: getsid init PermissionError
# expect: ioprio_get host -1 1
# expect: get_robust_list host -1 1
# expect: capget host -1 1
# expect[landlock]: proc list PermissionError
# expect[namespaces]: proc list FileNotFoundError
# expect: own session ok
import ctypes, os
host = os.getppid()
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
for label, action in [
    ("getsid host", lambda: os.getsid(host)),
    ("getpgid host", lambda: os.getpgid(host)),
    ("getpriority host", lambda: os.getpriority(os.PRIO_PROCESS, host)),
    ("getpriority user", lambda: os.getpriority(os.PRIO_USER, 0)),
    ("affinity host", lambda: os.sched_getaffinity(host)),
    ("scheduler host", lambda: os.sched_getscheduler(host)),
    ("param host", lambda: os.sched_getparam(host)),
    ("rr_interval host", lambda: os.sched_rr_get_interval(host)),
    ("pidfd host", lambda: os.pidfd_open(host)),
    ("getsid init", lambda: os.getsid(1)),
    ("proc list", lambda: os.listdir("/proc")),
]:
    try:
        print(label, "LEAKED", action())
    except OSError as e:
        print(label, type(e).__name__)
ctypes.set_errno(0)
print("ioprio_get host", libc.syscall(ctypes.c_long(252), ctypes.c_long(1), ctypes.c_long(host)), ctypes.get_errno())
head, size = ctypes.c_void_p(), ctypes.c_size_t()
ctypes.set_errno(0)
print("get_robust_list host", libc.syscall(ctypes.c_long(274), ctypes.c_long(host), ctypes.byref(head),
                                            ctypes.byref(size)), ctypes.get_errno())
header = (ctypes.c_int * 2)(0x20080522, host)
data = (ctypes.c_uint32 * 6)()
ctypes.set_errno(0)
print("capget host", libc.capget(header, data), ctypes.get_errno())
assert os.getsid(0) == os.getpgid(0)  # its own session and group (0 seen from a PID namespace: both outside it)
print("own session ok")
