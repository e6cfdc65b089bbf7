"""Fork flood (run with run_shell: `python3 fork_flood.py N`): fork up to N children that each wait, until the
kernel refuses; as root RLIMIT_NPROC does not stop this. Prints how many were started, writes `forked.txt`,
and holds the children until the test's sampler has seen them (it creates `release`) or the run is stopped:
no child ends on a timer, so however slowly a loaded machine forks, they all exist at once."""
import os
import sys
import time

n, goal = 0, int(sys.argv[1])
hold_r, hold_w = os.pipe()
try:
    while n < goal:
        if os.fork() == 0:
            os.close(hold_w)
            os.read(hold_r, 1)  # end of file when the parent lets go
            os._exit(0)
        n += 1
except OSError as e:
    print("forked", n, "then", type(e).__name__, flush=True)
else:
    print("forked", n, "all", flush=True)
open("forked.txt", "w").close()
while not os.path.exists("release"):
    time.sleep(0.01)
