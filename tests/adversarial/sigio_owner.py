"""Make the kernel signal the host: F_SETOWN/F_SETOWN_EX/FIOSETOWN name it (or a process group) as the owner
of an O_ASYNC pipe, then write to the pipe (SIGIO's default action terminates the receiver)."""
# expect: F_SETOWN host PermissionError
# expect: F_SETOWN group PermissionError
# expect: F_SETOWN_EX host PermissionError
# expect: FIOSETOWN host PermissionError
# expect: own owner ok
import ctypes, fcntl, os, struct
host = os.getppid()
r, w = os.pipe()
for label, action in [
    ("F_SETOWN host", lambda: fcntl.fcntl(r, fcntl.F_SETOWN, host)),
    ("F_SETOWN group", lambda: fcntl.fcntl(r, fcntl.F_SETOWN, -host)),
    ("F_SETOWN_EX host", lambda: fcntl.fcntl(r, 15, struct.pack("ii", 1, host))),
    ("FIOSETOWN host", lambda: fcntl.ioctl(r, 0x8901, struct.pack("i", host))),
]:
    try:
        action()
        print(label, "CHANGED")
    except OSError as e:
        print(label, type(e).__name__)
fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)
os.write(w, b"x")
fcntl.fcntl(r, fcntl.F_SETOWN, os.getpid())
print("own owner ok")
