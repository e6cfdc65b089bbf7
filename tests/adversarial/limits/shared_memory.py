"""Shared memory in a run_shell command (run with `python3 shared_memory.py N MIB`): N processes each touch an
anonymous shared mapping of MIB MiB (each under its own address-space limit, together over the run's), then
hold it (the issue 16 report: resident-minus-shared sampling let such memory go free). Writes `held.txt` once
all hold theirs and waits for `release` (created by the test's sampler) or the end of the run."""
import mmap
import os
import select
import sys
import time

n, mib = int(sys.argv[1]), int(sys.argv[2])
hold_r, hold_w = os.pipe()
ready = []
for i in range(n):
    ready_r, ready_w = os.pipe()
    if os.fork() == 0:
        os.close(hold_w)
        os.close(ready_r)
        m = mmap.mmap(-1, mib << 20, flags=mmap.MAP_SHARED)
        for j in range(0, mib << 20, 4096):
            m[j] = 1
        print("child", i, "holds", mib, "MiB shared", flush=True)
        os.write(ready_w, b"1")
        os.read(hold_r, 1)
        os._exit(0)
    os.close(ready_w)
    ready.append(ready_r)
while ready:
    for fd in select.select(ready, [], [])[0]:
        os.read(fd, 1)
        ready.remove(fd)
open("held.txt", "w").close()
while not os.path.exists("release"):
    time.sleep(0.01)
os.close(hold_w)
