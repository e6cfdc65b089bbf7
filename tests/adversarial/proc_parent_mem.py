"""Scan the host's memory through /proc/<parent>/maps and /proc/<parent>/mem."""
# expect[landlock]: blocked PermissionError
# expect[namespaces]: blocked FileNotFoundError
import os
pid = os.getppid()
try:
    maps = open(f"/proc/{pid}/maps").read().splitlines()
    with open(f"/proc/{pid}/mem", "rb") as mem:
        for line in maps:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            mem.seek(lo)
            chunk = mem.read(min(hi - lo, 1 << 20))
            i = chunk.find(b"sk-test-")
            if i >= 0:
                print(chunk[i:i + 40])
except OSError as e:
    print("blocked", type(e).__name__)
