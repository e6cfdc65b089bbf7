"""Other processes through /proc: init's environ, /proc/1/root as a way around the file rules, process list."""
# expect[landlock]: environ PermissionError
# expect[landlock]: root PermissionError
# expect[landlock]: list PermissionError
# expect[namespaces]: environ FileNotFoundError
# expect[namespaces]: root FileNotFoundError
# expect[namespaces]: list FileNotFoundError
for label, action in [("environ", lambda: open("/proc/1/environ").read()),
                      ("root", lambda: open("/proc/1/root/etc/passwd").read()),
                      ("list", lambda: __import__("os").listdir("/proc"))]:
    try:
        print(label, action()[:100])
    except OSError as e:
        print(label, type(e).__name__)
