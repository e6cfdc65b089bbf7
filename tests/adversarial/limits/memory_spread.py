"""Memory spread across processes (run with run_shell: `python3 memory_spread.py N MIB`): N children each
touch MIB MiB, each under its own per-process limit, together far over it. Every child holds its block until
all of them have it (or died trying), so they hold it at the same time however slowly a loaded machine runs
them; then `held.txt` is written and they are held until the test's sampler has seen them (it creates
`release`) or the run is stopped."""
import os
import select
import sys
import time

n, mib = int(sys.argv[1]), int(sys.argv[2])
hold_r, hold_w = os.pipe()
kids, ready = [], []
for i in range(n):
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(hold_w)
        os.close(ready_r)
        try:
            block = bytearray(mib * 1024 * 1024)
            for j in range(0, len(block), 4096):
                block[j] = 1
            print("child", i, "holds", mib, "MiB", flush=True)
            os.write(ready_w, b"1")
            os.read(hold_r, 1)  # end of file when the parent lets go
            os._exit(0)
        except MemoryError:
            print("child", i, "MemoryError", flush=True)
            os._exit(3)
    os.close(ready_w)
    kids.append(pid)
    ready.append(ready_r)
while ready:  # each child either reports that it holds its block, or dies (its end closes)
    for fd in select.select(ready, [], [])[0]:
        os.read(fd, 1)
        ready.remove(fd)
open("held.txt", "w").close()
while not os.path.exists("release"):
    time.sleep(0.01)
os.close(hold_w)
for pid in kids:
    print("child status", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
