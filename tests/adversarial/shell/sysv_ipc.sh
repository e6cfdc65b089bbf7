# SysV IPC from run_shell (issue 16, class 2): list and attach the host's segments, make objects that would
# outlive the run (ipcmk), two commands talking through a segment. Refused in every tier; with namespaces the
# run's IPC namespace is empty and dies with it.
# expect: ipcmk refused
# expect: shmget host key -1 1
# expect: own segment -1 1
(ipcmk -M 1048576 && ipcmk -Q && ipcmk -S 1) >/dev/null 2>&1 && echo "ipcmk CHANGED" || echo "ipcmk refused"
python3 -I -c "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
ctypes.set_errno(0)
print('shmget host key', libc.shmget(0x70016001, 0, 0), ctypes.get_errno())
ctypes.set_errno(0)
print('own segment', libc.shmget(0x70016005, 1 << 20, 0o1000 | 0o666), ctypes.get_errno())"
