"""Memory no limit counts (issue 16, classes 3 and 9): a memfd holds pages outside RLIMIT_AS (1 GiB of them
under a 256 MiB limit before), and memfd_secret pages no one but the process can see. Both are refused as not
implemented in every tier. Shared anonymous mappings stay possible and are counted (RLIMIT_AS; RssShmem where
the host samples): 1 GiB of them is refused here."""
# limits: memory_mb=256
# cgroups: off
# expect: memfd_create OSError 38
# expect: memfd_secret -1 38
# expect: shared mapping refused
import ctypes, mmap, os
try:
    fd = os.memfd_create("flood")
    for _ in range(1024):
        os.write(fd, b"\1" * (1 << 20))
    print("memfd_create HELD 1 GiB")
except OSError as e:
    print("memfd_create", type(e).__name__, e.errno)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ctypes.set_errno(0)
print("memfd_secret", libc.syscall(ctypes.c_long(447), ctypes.c_long(0)), ctypes.get_errno())
held = []
try:
    for _ in range(16):
        m = mmap.mmap(-1, 64 << 20, flags=mmap.MAP_SHARED)
        m.write(b"\1" * (64 << 20))
        held.append(m)
    print("shared mapping HELD 1 GiB")
except (OSError, MemoryError) as e:
    print("shared mapping refused", type(e).__name__, len(held) * 64, "MiB")
