"""UDP, raw and packet sockets, netlink."""
# expect: udp PermissionError
# expect: raw PermissionError
# expect: netlink PermissionError
import socket
for label, args in [("udp", (socket.AF_INET, socket.SOCK_DGRAM)), ("udp6", (socket.AF_INET6, socket.SOCK_DGRAM)),
                    ("raw", (socket.AF_INET, socket.SOCK_RAW, 1)), ("netlink", (socket.AF_NETLINK, socket.SOCK_RAW, 0))]:
    try:
        s = socket.socket(*args)
        s.sendto(b"x", ("8.8.8.8", 53))
        print(label, "SENT")
    except OSError as e:
        print(label, type(e).__name__)
