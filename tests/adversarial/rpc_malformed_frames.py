"""Malformed frames: not JSON, a JSON list, deep nesting."""
# expect: broke the sandbox protocol
import gc, socket, struct
s = [o for o in gc.get_objects() if isinstance(o, socket.socket)][0]
for body in [b"[" * 100000 + b"]" * 100000, b"\xff\xfenot json", b"[1, 2, 3]"]:
    s.sendall(struct.pack(">I", len(body)) + body)
import time
time.sleep(5)
