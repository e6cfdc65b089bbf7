"""Start threads until something gives: bounded by the address-space limit, and they die with the worker."""
# expect: stopped at
import threading, time
threads = []
try:
    for i in range(100000):
        t = threading.Thread(target=time.sleep, args=(60,), daemon=True)
        t.start()
        threads.append(t)
except (RuntimeError, MemoryError) as e:
    print("stopped at", len(threads), type(e).__name__)
else:
    print("stopped at", len(threads), "(all started)")
