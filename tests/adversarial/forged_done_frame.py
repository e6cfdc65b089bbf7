"""Forge a 'done' frame with wrong types to confuse the host's result handling."""
# expect: broke the sandbox protocol
import gc, json, socket, struct
s = [o for o in gc.get_objects() if isinstance(o, socket.socket)][0]
body = json.dumps({"op": "done", "output": ["not", "text"], "dropped": "many", "error": 5}).encode()
s.sendall(struct.pack(">I", len(body)) + body)
import time
time.sleep(5)
