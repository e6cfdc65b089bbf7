"""Times of host files (issue 16, class 1): utime of a host file, `touch` of /dev/null (utimensat with no times:
allowed for anyone who may write it), and futimens through a descriptor opened read-only. The harness checks
on the host that no planted file's or device node's times changed."""
# expect[landlock]: utime host file PermissionError
# expect[landlock]: touch dev null PermissionError
# expect[landlock]: futimens read-only fd PermissionError
# expect[namespaces]: utime host file FileNotFoundError
# expect[namespaces]: touch dev null OSError 30
# expect[namespaces]: futimens read-only fd OSError 30
import os
fd = os.open("/etc/ld.so.cache", os.O_RDONLY)
st = os.fstat(fd)
for label, action in [
    ("utime host file", lambda: os.utime("{{SENTINEL}}/keep.txt", (0, 0))),
    ("touch dev null", lambda: os.utime("/dev/null")),
    ("futimens read-only fd", lambda: os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))),  # its own times
]:
    try:
        action()
        print(label, "CHANGED")
    except OSError as e:
        print(label, type(e).__name__, e.errno)
