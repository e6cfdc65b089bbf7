"""Fork flood (run with run_shell: `python3 fork_flood.py N`): fork up to N children that each sleep, until
the kernel refuses; as root RLIMIT_NPROC does not stop this. Prints how many were started."""
import os
import sys
import time

n, goal = 0, int(sys.argv[1])
try:
    while n < goal:
        if os.fork() == 0:
            time.sleep(4)
            os._exit(0)
        n += 1
except OSError as e:
    print("forked", n, "then", type(e).__name__, flush=True)
else:
    print("forked", n, "all", flush=True)
time.sleep(1)
