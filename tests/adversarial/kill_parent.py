"""Kill or signal the host: kill(ppid), killpg of its group, kill(-1), pidfd_send_signal, tgkill."""
# expect: kill ppid PermissionError
# expect: killpg PermissionError
# expect: kill -1 PermissionError
# expect: kill init PermissionError
import ctypes, os, signal
ppid = os.getppid()
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
for label, action in [("kill ppid", lambda: os.kill(ppid, signal.SIGKILL)),
                      ("killpg", lambda: os.killpg(os.getpgid(ppid), signal.SIGKILL)),
                      ("kill -1", lambda: os.kill(-1, signal.SIGKILL)),
                      ("kill init", lambda: os.kill(1, signal.SIGTERM)),
                      ("pidfd", lambda: os.pidfd_open(ppid))]:
    try:
        action()
        print(label, "SENT")
    except OSError as e:
        print(label, type(e).__name__)
print("tgkill", libc.syscall(ctypes.c_long(234), ctypes.c_long(ppid), ctypes.c_long(ppid), ctypes.c_long(9)))
print("kill with high bits", libc.syscall(ctypes.c_long(62), ctypes.c_long((1 << 32) | ppid), ctypes.c_long(9)))
