"""Read files outside the workspace: shadow, root's home, the project, the host's cwd."""
# expect[landlock]: /etc/shadow PermissionError
# expect[landlock]: /work/main/pyproject.toml PermissionError
# expect[namespaces]: /etc/shadow FileNotFoundError
# expect[namespaces]: /work/main/pyproject.toml FileNotFoundError
import os
for path in ["/etc/shadow", "/etc/passwd", "/root/.bash_history", "/work/main/pyproject.toml",
             "{{SENTINEL}}/keep.txt", "/proc/self/environ", "/sys/kernel/notes"]:
    try:
        print(path, "READ", len(open(path, "rb").read()))
    except OSError as e:
        print(path, type(e).__name__)
try:
    print(os.listdir("/root"))
except OSError as e:
    print("/root", type(e).__name__)
