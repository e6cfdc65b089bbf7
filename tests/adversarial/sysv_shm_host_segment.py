"""SysV shared memory (issue 16, class 2): find the host's 0600 segment by its key and by walking ids, attach to
it, read it and overwrite it; make a segment of one's own that would outlive the run. Refused in every tier
(seccomp); with namespaces the run's IPC namespace holds none of the host's anyway. The harness checks on the
host that the segment was not attached to or changed and that no SysV object appeared."""
# expect: shmget host key -1 1
# expect: shmat by id -1 1
# expect: shmctl info -1 1
# expect: shmget own -1 1
# expect-not: host-shm-SECRET
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
ctypes.set_errno(0)
print("shmget host key", libc.shmget(0x70016001, 0, 0), ctypes.get_errno())
attached = []
for shmid in range(0, 4096):
    ctypes.set_errno(0)
    addr = libc.shmat(shmid, None, 0)
    if addr not in (None, ctypes.c_void_p(-1).value):
        attached.append(ctypes.string_at(addr, 20))
        ctypes.memmove(addr, b"OVERWRITTEN", 11)
print("shmat by id", -1 if not attached else attached, ctypes.get_errno())
buf = ctypes.create_string_buffer(256)
ctypes.set_errno(0)
print("shmctl info", libc.shmctl(0, 3, buf), ctypes.get_errno())  # IPC_INFO
ctypes.set_errno(0)
print("shmget own", libc.shmget(0x70016002, 64 << 20, 0o1000 | 0o666), ctypes.get_errno())  # IPC_CREAT
