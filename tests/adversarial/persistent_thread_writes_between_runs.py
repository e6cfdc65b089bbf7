"""In a persistent worker, a thread left running writes between runs, when no run's write budget or CPU
check is looking (fallocate: 320 MiB against a 16 MiB budget for almost no CPU). Also a thread made with
pthread_create through ctypes, which Python's own thread count does not see."""
# persistent: yes
# limits: max_write_mb=16
# max-written-mb: 24
# expect: started
# expect: the program left threads running
import ctypes, os, threading, time

def flood(tag):
    time.sleep(0.5)  # the run has ended by now
    for i in range(40):
        fd = os.open(f"{tag}{i}", os.O_CREAT | os.O_WRONLY, 0o644)
        try:
            os.posix_fallocate(fd, 0, 8 << 20)
        except OSError:
            pass
        os.close(fd)

threading.Thread(target=flood, args=("py",), daemon=True).start()
libc = ctypes.CDLL(None)
START = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
raw_start = START(lambda arg: flood("raw") or 0)
tid = ctypes.c_ulong()
libc.pthread_create(ctypes.byref(tid), None, raw_start, None)
print("started")
