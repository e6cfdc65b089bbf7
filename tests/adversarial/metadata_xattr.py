"""Extended attributes of host files (issue 16, class 1): read a key kept in an xattr of a host 0600 file, set
and remove xattrs, also through a descriptor opened read-only. The landlock tier answers every xattr call with
EOPNOTSUPP (what a file system without them says); with namespaces the file is not there and the rest is
read-only. The harness checks that the secret never shows and that no xattr changed."""
# expect[landlock]: get secret OSError 95
# expect[landlock]: list OSError 95
# expect[landlock]: set OSError 95
# expect[landlock]: remove OSError 95
# expect[landlock]: fget read-only fd OSError 95
# expect[namespaces]: get secret FileNotFoundError
# expect[namespaces]: set FileNotFoundError
# expect[namespaces]: remove FileNotFoundError
# expect-not: LEAKED
import os
fd = os.open("/etc/ld.so.cache", os.O_RDONLY)
for label, action in [
    ("get secret", lambda: os.getxattr("{{SENTINEL}}/secret.txt", "user.toolmode_secret")),
    ("list", lambda: os.listxattr("{{SENTINEL}}/secret.txt")),
    ("set", lambda: os.setxattr("{{SENTINEL}}/keep.txt", "user.evil", b"1")),
    ("remove", lambda: os.removexattr("{{SENTINEL}}/secret.txt", "user.toolmode_secret")),
    ("fget read-only fd", lambda: os.getxattr(fd, "user.toolmode_secret")),
    ("fset read-only fd", lambda: os.setxattr(fd, "user.evil", b"1")),
]:
    try:
        print(label, "LEAKED", action())
    except OSError as e:
        print(label, type(e).__name__, e.errno)
