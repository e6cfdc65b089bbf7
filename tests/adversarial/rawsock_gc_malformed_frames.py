"""Find the RPC channel's `_socket.socket` with gc (through its Channel) and send malformed frames (deep nesting, not
UTF-8, a JSON list)."""
# expect: broke the sandbox protocol
import _socket, gc, struct, time
s = [o for o in gc.get_objects() if type(o).__name__ == "Channel"][0].sock  # a bare _socket.socket is not gc-tracked
assert isinstance(s, _socket.socket)
for body in [b"[" * 100000 + b"]" * 100000, b"\xff\xfenot json", b"[1, 2, 3]"]:
    s.sendall(struct.pack(">I", len(body)) + body)
time.sleep(5)
