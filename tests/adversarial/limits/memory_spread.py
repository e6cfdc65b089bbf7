"""Memory spread across processes (run with run_shell: `python3 memory_spread.py N MIB`): N children each
touch MIB MiB and hold it for a while, each under its own per-process limit, together far over it."""
import os
import sys
import time

n, mib = int(sys.argv[1]), int(sys.argv[2])
kids = []
for i in range(n):
    pid = os.fork()
    if pid == 0:
        try:
            block = bytearray(mib * 1024 * 1024)
            for j in range(0, len(block), 4096):
                block[j] = 1
            print("child", i, "holds", mib, "MiB", flush=True)
            time.sleep(2)
            os._exit(0)
        except MemoryError:
            print("child", i, "MemoryError", flush=True)
            os._exit(3)
    kids.append(pid)
for pid in kids:
    print("child status", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
