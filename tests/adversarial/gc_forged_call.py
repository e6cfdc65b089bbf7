"""Find the RPC socket with gc and forge a call to a tool that was not offered (run_shell)."""
# expect: not available in this run
import gc, json, socket, struct
s = [o for o in gc.get_objects() if isinstance(o, socket.socket)][0]
rid = [o for o in gc.get_objects() if type(o).__name__ == "Rpc"][0].run_id  # this run's id, found like the socket
body = json.dumps({"op": "call", "run": rid, "id": 7, "name": "run_shell", "args": {"command": "cat /proc/1/environ"}}).encode()
s.sendall(struct.pack(">I", len(body)) + body)
n = struct.unpack(">I", s.recv(4))[0]
data = b""
while len(data) < n:
    data += s.recv(n - len(data))
print(json.loads(data)["message"])
