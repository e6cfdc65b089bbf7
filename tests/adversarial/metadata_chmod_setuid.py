"""File metadata outside the workspace (issue 16, class 1): make a host 0600 file 0666, put the setuid bit on a
host program, chown a host file, and change the mode of /dev/null and of a host file through a descriptor
opened read-only (which Landlock allows). Landlock does not govern metadata: the landlock tier's filter refuses
chmod and chown outright; with namespaces those files are absent or on read-only mounts. The host-side check is
the harness's: every planted file and device node keeps its mode and owner."""
# expect[landlock]: 0600 file PermissionError
# expect[landlock]: setuid PermissionError
# expect[landlock]: chown PermissionError
# expect[landlock]: dev null PermissionError
# expect[landlock]: fchmod read-only fd PermissionError
# expect[namespaces]: 0600 file FileNotFoundError
# expect[namespaces]: setuid FileNotFoundError
# expect[namespaces]: chown FileNotFoundError
# expect[namespaces]: dev null OSError 30
# expect[namespaces]: fchmod read-only fd OSError 30
import os
fd = os.open("/etc/ld.so.cache", os.O_RDONLY)
mode = os.fstat(fd).st_mode & 0o7777
for label, action in [
    ("0600 file", lambda: os.chmod("{{SENTINEL}}/secret.txt", 0o666)),
    ("setuid", lambda: os.chmod("{{SENTINEL}}/tool", 0o4755)),
    ("chown", lambda: os.chown("{{SENTINEL}}/open.txt", os.getuid(), os.getgid())),  # to its own owner: a probe
    ("dev null", lambda: os.chmod("/dev/null", 0o666)),  # the mode it has: if allowed, nothing changes
    ("fchmod read-only fd", lambda: os.fchmod(fd, mode)),  # likewise
]:
    try:
        action()
        print(label, "CHANGED")
    except OSError as e:
        print(label, type(e).__name__, e.errno)
