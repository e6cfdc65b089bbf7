"""Slow the host down: renice it (by pid, its process group, every process of the user), pin it to one CPU,
give it the idle scheduler, the idle I/O class. Its own niceness and affinity stay adjustable."""
# expect: renice host PermissionError
# expect: renice host group PermissionError
# expect: renice user PermissionError
# expect: affinity host PermissionError
# expect: scheduler host PermissionError
# expect: param host PermissionError
# expect: ioprio host -1 1
# expect: ioprio user -1 1
# expect: sched_setattr host -1 1
# expect: own nice ok
# expect: own affinity ok
import ctypes, os
host = os.getppid()
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
one_cpu = {sorted(os.sched_getaffinity(0))[0]}
for label, action in [
    ("renice host", lambda: os.setpriority(os.PRIO_PROCESS, host, 19)),
    ("renice host group", lambda: os.setpriority(os.PRIO_PGRP, host, 19)),
    ("renice user", lambda: os.setpriority(os.PRIO_USER, 0, 19)),
    ("affinity host", lambda: os.sched_setaffinity(host, one_cpu)),
    ("scheduler host", lambda: os.sched_setscheduler(host, os.SCHED_IDLE, os.sched_param(0))),
    ("param host", lambda: os.sched_setparam(host, os.sched_param(0))),
]:
    try:
        action()
        print(label, "CHANGED")
    except OSError as e:
        print(label, type(e).__name__)
IDLE_CLASS = 3 << 13
for label, args in [("ioprio host", (1, host, IDLE_CLASS)), ("ioprio user", (3, 0, IDLE_CLASS))]:
    ctypes.set_errno(0)
    print(label, libc.syscall(ctypes.c_long(251), *map(ctypes.c_long, args)), ctypes.get_errno())
attr = (ctypes.c_uint32 * 14)(56, 5)  # struct sched_attr: size 56, policy SCHED_IDLE
ctypes.set_errno(0)
print("sched_setattr host", libc.syscall(ctypes.c_long(314), ctypes.c_long(host), attr, ctypes.c_long(0)),
      ctypes.get_errno())
os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + 1)
print("own nice ok")
os.sched_setaffinity(0, os.sched_getaffinity(0))
print("own affinity ok")
