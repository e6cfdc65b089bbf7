"""Find the RPC channel's `_socket.socket` with gc (through its Channel) and send well-framed but forged call frames."""
# expect: malformed tool call frame
import _socket, gc, json, struct
s = [o for o in gc.get_objects() if type(o).__name__ == "Channel"][0].sock  # a bare _socket.socket is not gc-tracked
assert isinstance(s, _socket.socket)
rid = [o for o in gc.get_objects() if type(o).__name__ == "Rpc"][0].run_id
def send(obj):
    body = json.dumps(obj).encode()
    s.sendall(struct.pack(">I", len(body)) + body)
    n = struct.unpack(">I", s.recv(4))[0]
    data = b""
    while len(data) < n:
        data += s.recv(n - len(data))
    return json.loads(data)
print(send({"op": "call", "run": rid, "id": "x", "name": "add", "args": {}})["message"])
print(send({"op": "call", "run": rid, "id": 5, "name": 3, "args": []})["message"])
