"""Write outside the workspace with absolute paths: the sentinel dir, /etc, /tmp, the repository."""
# expect: PermissionError
import os
for path in ["{{SENTINEL}}/abs", "/etc/toolmode-evil", "/tmp/toolmode-evil", "/root/toolmode-evil"]:
    try:
        open(path, "w").write("pwned")
        print("WROTE", path)
    except OSError as e:
        print(path, type(e).__name__)
for action in [lambda: os.mkdir("{{SENTINEL}}/d"), lambda: os.remove("{{SENTINEL}}/keep.txt"),
               lambda: os.rename("{{SENTINEL}}/keep.txt", "stolen.txt"), lambda: os.truncate("{{SENTINEL}}/keep.txt", 0)]:
    try:
        action()
        print("CHANGED")
    except OSError as e:
        print(type(e).__name__)
