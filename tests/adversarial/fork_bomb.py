"""Fork bomb, in Python and through ctypes fork()."""
# expect: blocked PermissionError
import ctypes, os
libc = ctypes.CDLL(None)
n = 0
try:
    while True:
        libc.fork()
        os.fork()
        n += 1
except OSError as e:
    print("blocked", type(e).__name__, n)
