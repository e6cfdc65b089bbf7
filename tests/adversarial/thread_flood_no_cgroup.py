"""1,500 threads (small stacks, so the address-space limit does not stop them first) against max_tasks=128
where no cgroup can be made (issue 16, class 3): the host samples the worker's threads and stops the run (and
RLIMIT_NPROC is exact per run in a user namespace of its own for a non-root user)."""
# limits: timeout=10, max_tasks=128, memory_mb=1024
# cgroups: off
# expect: 128
# expect-not: started 1500
import threading, time
threading.stack_size(64 * 1024)
stop = threading.Event()
n = 0
try:
    for _ in range(1500):
        threading.Thread(target=stop.wait, daemon=True).start()
        n += 1
    time.sleep(1)
    print("started", n)
except RuntimeError as e:
    print("refused at", n, "of 128", e)
