"""Find the RPC channel by descriptor number (fstat), close it under the worker and reuse the number
for a file."""
# expect: ended the sandbox worker
import os, stat
found = []
for fd in range(256):  # /proc/self/fd cannot be listed in the sandbox: probe the numbers
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            found.append(fd)
    except OSError:
        pass
print("found socket descriptor", found)
os.close(found[0])
f = open("reused.txt", "w")
print("closed", found[0], "reopened as", f.fileno())
