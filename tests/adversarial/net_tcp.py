"""TCP: connect to localhost and outside, bind a listener."""
# expect: connect PermissionError
# expect: bind PermissionError
import socket
for label, action in [("connect", lambda: socket.create_connection(("127.0.0.1", 22), timeout=1)),
                      ("connect out", lambda: socket.create_connection(("1.1.1.1", 80), timeout=1)),
                      ("bind", lambda: socket.create_server(("127.0.0.1", 0)))]:
    try:
        print(label, action())
    except OSError as e:
        print(label, type(e).__name__)
