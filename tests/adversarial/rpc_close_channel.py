"""Close the RPC channel and reuse its descriptor number for a file."""
# expect: ended the sandbox worker
import gc, os, socket
s = [o for o in gc.get_objects() if isinstance(o, socket.socket)][0]
fd = s.fileno()
os.close(fd)
f = open("reused.txt", "w")
print("closed", fd, "reopened as", f.fileno())
