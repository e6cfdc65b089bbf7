"""Make a symlink in the workspace that points outside, then ask a host tool to write through it."""
# expect: refused
import os
os.symlink("{{SENTINEL}}", "out")
for path in ["out/tool_symlink", "out/keep.txt"]:
    try:
        print(write_file(path, "pwned"))
    except Exception as e:
        print(type(e).__name__, e)
try:
    print(read_file("out/keep.txt"))
except Exception as e:
    print(type(e).__name__, e)
