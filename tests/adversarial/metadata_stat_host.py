"""Sizes and times of host files (issue 16, class 1): stat /etc/shadow and a host 0600 file, list /root. With
namespaces they are not in the view. Landlock governs reading and listing, not stat: on the landlock tier a
host path's size and times stay visible (documented in the tier table)."""
# expect[namespaces]: stat shadow FileNotFoundError
# expect[namespaces]: stat host file FileNotFoundError
# expect[landlock]: stat shadow visible
# expect[landlock]: stat host file visible
# expect: list root PermissionError
import os
for label, action in [
    ("stat shadow", lambda: os.stat("/etc/shadow")),
    ("stat host file", lambda: os.stat("{{SENTINEL}}/secret.txt")),
]:
    try:
        action()
        print(label, "visible")
    except OSError as e:
        print(label, type(e).__name__)
try:
    print("list root", [n for n in os.listdir("/root") if n != ".pyenv"], "LEAKED")
except OSError as e:
    print("list root", type(e).__name__)
