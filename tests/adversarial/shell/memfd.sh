# Memory no limit counts, from run_shell (issue 16, classes 3 and 9): a python3 holding memfds, and memfd_secret.
# expect: memfd_create OSError 38
# expect: memfd_secret -1 38
python3 -I -c "
import ctypes, os
try:
    fd = os.memfd_create('flood')
    print('memfd_create HELD')
except OSError as e:
    print('memfd_create', type(e).__name__, e.errno)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ctypes.set_errno(0)
print('memfd_secret', libc.syscall(ctypes.c_long(447), ctypes.c_long(0)), ctypes.get_errno())"
