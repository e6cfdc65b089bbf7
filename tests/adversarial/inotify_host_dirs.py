"""Watch host directories (issue 16, class 1): inotify on /tmp, /etc and /root would show the names of files the
host creates during the run, and dnotify (fcntl F_NOTIFY) the same. Both are refused in every tier: inotify as
not implemented (tools poll instead), F_NOTIFY with EPERM."""
# expect: inotify_init1 -1 38
# expect: inotify_init -1 38
# expect: F_NOTIFY PermissionError
# expect: add_watch /root -1 38
import ctypes, fcntl, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ctypes.set_errno(0)
print("inotify_init1", libc.syscall(ctypes.c_long(294), ctypes.c_long(0)), ctypes.get_errno())
ctypes.set_errno(0)
print("inotify_init", libc.syscall(ctypes.c_long(253)), ctypes.get_errno())
for path in ["/tmp", "/etc", "/root"]:
    ctypes.set_errno(0)
    print("add_watch", path, libc.syscall(ctypes.c_long(254), ctypes.c_long(3), path.encode(), ctypes.c_long(0x100)),
          ctypes.get_errno())
fd = os.open(".", os.O_RDONLY)
try:
    fcntl.fcntl(fd, 1026, 0x80000004)  # F_NOTIFY, DN_CREATE | DN_MULTISHOT
    print("F_NOTIFY CHANGED")
except OSError as e:
    print("F_NOTIFY", type(e).__name__)
