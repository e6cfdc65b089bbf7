"""Read the host's environment through /proc/<parent>/environ."""
# expect: blocked PermissionError
import os
try:
    print(open(f"/proc/{os.getppid()}/environ", "rb").read())
except OSError as e:
    print("blocked", type(e).__name__)
