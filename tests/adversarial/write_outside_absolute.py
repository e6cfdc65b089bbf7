"""Write outside the workspace with absolute paths: the sentinel dir, /etc, /tmp, the repository. With namespaces,
/tmp is the run's own (the host's /tmp must not see the file) and the rest is absent or read-only."""
# expect[landlock]: PermissionError
# expect[namespaces]: /etc/toolmode-evil OSError
# absent: /tmp/toolmode-evil
import os
for path in ["{{SENTINEL}}/abs", "/etc/toolmode-evil", "/tmp/toolmode-evil", "/root/toolmode-evil"]:
    try:
        open(path, "w").write("pwned")
        print("WROTE" if path != "/tmp/toolmode-evil" else "wrote", path)
    except OSError as e:
        print(path, type(e).__name__)
for action in [lambda: os.mkdir("{{SENTINEL}}/d"), lambda: os.remove("{{SENTINEL}}/keep.txt"),
               lambda: os.rename("{{SENTINEL}}/keep.txt", "stolen.txt"), lambda: os.truncate("{{SENTINEL}}/keep.txt", 0)]:
    try:
        action()
        print("CHANGED")
    except OSError as e:
        print(type(e).__name__)
