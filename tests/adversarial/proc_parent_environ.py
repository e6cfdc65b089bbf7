"""Read the host's environment through /proc/<parent>/environ (Landlock refuses /proc; with namespaces there
is no /proc at all)."""
# expect[landlock]: blocked PermissionError
# expect[namespaces]: blocked FileNotFoundError
import os
try:
    print(open(f"/proc/{os.getppid()}/environ", "rb").read())
except OSError as e:
    print("blocked", type(e).__name__)
