"""Announce a 4 GiB frame on the RPC socket: the host refuses it before reading."""
# expect: broke the sandbox protocol
import gc, socket
s = [o for o in gc.get_objects() if isinstance(o, socket.socket)][0]
s.sendall(b"\xff\xff\xff\xf0" + b"A" * 1000)
import time
time.sleep(5)
