"""Raise the limits back (address space, CPU, file size, open files) and regain capabilities."""
# expect: RLIMIT_AS refused
# expect: RLIMIT_CPU refused
# expect: capset -1
import ctypes, resource
for name in ["RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE"]:
    which = getattr(resource, name)
    try:
        resource.setrlimit(which, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        print(name, "RAISED")
    except (ValueError, OSError):
        print(name, "refused")
class Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
data = (ctypes.c_uint32 * 6)(*([0xFFFFFFFF] * 6))
libc = ctypes.CDLL(None)
print("capset", libc.capset(ctypes.byref(Header(0x20080522, 0)), data))
cur = (ctypes.c_uint32 * 6)()
libc.capget(ctypes.byref(Header(0x20080522, 0)), cur)
print("effective caps", cur[0], cur[3], "permitted", cur[1], cur[4])
