"""os.system, subprocess, os.popen, os.posix_spawn, os.fork, os.execv."""
# expect: subprocess PermissionError
# expect: fork PermissionError
# expect: execv PermissionError
# expect: posix_spawn
import os, subprocess
print("os.system", os.system("echo pwned > {{SENTINEL}}/os_system"))
for label, action in [
    ("subprocess", lambda: subprocess.run(["sh", "-c", "echo pwned > {{SENTINEL}}/subprocess"])),
    ("popen", lambda: os.popen("echo pwned > {{SENTINEL}}/popen").read()),
    ("posix_spawn", lambda: os.posix_spawn("/bin/sh", ["sh", "-c", "echo pwned > {{SENTINEL}}/spawn"], {})),
    ("fork", os.fork),
    ("execv", lambda: os.execv("/bin/sh", ["sh", "-c", "echo pwned > {{SENTINEL}}/execv"])),
]:
    try:
        print(label, action())
    except OSError as e:
        print(label, type(e).__name__, e.errno)
