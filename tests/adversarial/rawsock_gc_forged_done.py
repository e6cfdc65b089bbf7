"""Find the RPC channel's `_socket.socket` with gc (through the Channel object that holds it) and forge a
'done' frame with wrong types."""
# expect: broke the sandbox protocol
import _socket, gc, json, struct, time
s = [o for o in gc.get_objects() if type(o).__name__ == "Channel"][0].sock  # a bare _socket.socket is not gc-tracked
assert isinstance(s, _socket.socket)
body = json.dumps({"op": "done", "output": ["not", "text"], "dropped": "many", "error": 5}).encode()
s.sendall(struct.pack(">I", len(body)) + body)
time.sleep(5)
