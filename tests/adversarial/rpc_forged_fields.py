"""Well-framed but forged call frames: bad id, missing name, args not an object, unknown op."""
# expect: malformed tool call frame
import gc, json, socket, struct
s = [o for o in gc.get_objects() if isinstance(o, socket.socket)][0]
rid = [o for o in gc.get_objects() if type(o).__name__ == "Rpc"][0].run_id  # this run's id, found like the socket
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
print(send({"op": "call", "run": rid, "id": 6, "name": "add", "args": {"a": 1, "b": 2}}))
