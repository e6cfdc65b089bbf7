"""Re-limit the host: prlimit64 on its pid (lower RLIMIT_NOFILE, set RLIMIT_CPU so it is killed), also with
the pid's high bits set; read its limits. Its own limits stay readable and lowerable (pid 0 and its pid)."""
# expect: set host NOFILE PermissionError
# expect: set host CPU PermissionError
# expect: set host AS PermissionError
# expect: get host NOFILE PermissionError
# expect: raw high bits -1 1
# expect: own via 0 ok
# expect: own via pid ok
import ctypes, os, resource
host = os.getppid()
for label, action in [
    ("set host NOFILE", lambda: resource.prlimit(host, resource.RLIMIT_NOFILE, (8, 8))),
    ("set host CPU", lambda: resource.prlimit(host, resource.RLIMIT_CPU, (1, 1))),
    ("set host AS", lambda: resource.prlimit(host, resource.RLIMIT_AS, (1 << 20, 1 << 20))),
    ("get host NOFILE", lambda: resource.prlimit(host, resource.RLIMIT_NOFILE)),
]:
    try:
        action()
        print(label, "CHANGED")
    except OSError as e:
        print(label, type(e).__name__)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
new = (ctypes.c_uint64 * 2)(1, 1)
ctypes.set_errno(0)
rc = libc.syscall(ctypes.c_long(302), ctypes.c_long((1 << 32) | host), ctypes.c_long(resource.RLIMIT_CPU),
                  ctypes.byref(new), None)
print("raw high bits", rc, ctypes.get_errno())
soft, hard = resource.prlimit(0, resource.RLIMIT_NOFILE)
resource.prlimit(0, resource.RLIMIT_NOFILE, (soft - 1, hard))
print("own via 0 ok")
resource.prlimit(os.getpid(), resource.RLIMIT_NOFILE, (soft - 2, hard))
print("own via pid ok")
