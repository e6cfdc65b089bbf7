"""Unix sockets: new socket, socketpair, connect to an abstract name and to a path."""
# expect: unix PermissionError
# expect: socketpair PermissionError
import socket
for label, action in [("unix", lambda: socket.socket(socket.AF_UNIX).connect("\0toolmode-test")),
                      ("socketpair", socket.socketpair),
                      ("unix path", lambda: socket.socket(socket.AF_UNIX).connect("/run/docker.sock"))]:
    try:
        print(label, action())
    except OSError as e:
        print(label, type(e).__name__)
