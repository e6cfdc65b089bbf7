"""Find the RPC channel's `_socket.socket` with gc (through its Channel) and forge a call, with this run's id, to a tool
that was not offered (run_shell)."""
# expect: not available in this run
import _socket, gc, json, struct
s = [o for o in gc.get_objects() if type(o).__name__ == "Channel"][0].sock  # a bare _socket.socket is not gc-tracked
assert isinstance(s, _socket.socket)
rid = [o for o in gc.get_objects() if type(o).__name__ == "Rpc"][0].run_id
body = json.dumps({"op": "call", "run": rid, "id": 7, "name": "run_shell", "args": {"command": "cat /proc/1/environ"}}).encode()
s.sendall(struct.pack(">I", len(body)) + body)
n = struct.unpack(">I", s.recv(4))[0]
data = b""
while len(data) < n:
    data += s.recv(n - len(data))
print(json.loads(data)["message"])
