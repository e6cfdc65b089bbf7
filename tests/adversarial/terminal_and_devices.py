"""Devices: /dev/tty, TIOCSTI injection on any fd, raw disk, kernel memory."""
# expect: /dev/tty
# expect[landlock]: /dev/vda PermissionError
# expect[namespaces]: /dev/vda FileNotFoundError
import fcntl, os
for path in ["/dev/tty", "/dev/vda", "/dev/mem", "/dev/kmsg"]:
    try:
        os.open(path, os.O_RDWR)
        print(path, "OPENED")
    except OSError as e:
        print(path, type(e).__name__)
for fd in range(3):
    try:
        fcntl.ioctl(fd, 0x5412, b"x")
        print("TIOCSTI", fd, "OK")
    except OSError as e:
        print("TIOCSTI", fd, type(e).__name__)
