"""A forged call frame without this run's id (or with a stale one): a protocol error, the worker is replaced."""
# expect: broke the sandbox protocol
# expect: without this run's id
import gc, json, socket, struct, time
s = [o for o in gc.get_objects() if isinstance(o, socket.socket)][0]
body = json.dumps({"op": "call", "run": "0" * 32, "id": 1, "name": "add", "args": {"a": 1, "b": 2}}).encode()
s.sendall(struct.pack(">I", len(body)) + body)
time.sleep(5)
print("SENT and answered")
