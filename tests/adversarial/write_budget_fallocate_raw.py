"""fallocate without glibc's fallback: the raw syscall from code, and the `fallocate` command in run_shell
(200 MiB files: 1 GiB in 0.2 s against a 16 MiB budget before). Both are refused as unsupported."""
# limits: max_write_mb=16
# tools: run_shell
# max-written-mb: 24
# expect: raw fallocate -1 95
# expect: fallocate failed: Operation not supported
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
fd = os.open("raw", os.O_CREAT | os.O_WRONLY, 0o644)
rc = libc.syscall(ctypes.c_long(285), ctypes.c_long(fd), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(8 << 20))
print("raw fallocate", rc, ctypes.get_errno())
os.close(fd)
print(run_shell("for i in 1 2 3 4 5 6 7 8; do fallocate -l 200M big$i || break; done"))
