"""ctypes: libc system() and popen() (glibc reports the refused spawn as exit status 127, i.e. 32512)."""
# expect: system 32512
# expect: popen None
import ctypes
libc = ctypes.CDLL(None)
print("system", libc.system(b"echo pwned > {{SENTINEL}}/ctypes_system"))
libc.popen.restype = ctypes.c_void_p
print("popen", libc.popen(b"id", b"r"))
